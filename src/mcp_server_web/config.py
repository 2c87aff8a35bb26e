"""Settings: one typed object, read once from command-line flags and MCP_WEB_* environment variables.

Every knob is declared once in ``OPTIONS`` (flag, environment variable, type, default, help), so the
command line, the environment and the documentation cannot drift apart. Flags win over the
environment; secrets also accept ``<NAME>_FILE`` pointing at a file (Docker secrets).
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcp_server_web.errors import ConfigError
from mcp_server_web.identity import DEFAULT_USER_AGENT
from mcp_server_web.providers import PROVIDERS, READERS

if TYPE_CHECKING:
    from mcp_server_web.providers import SafeSearch, SearchMode

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


KNOWN_TOOLS = ("web_search", "web_fetch", "http_request")
KNOWN_PROVIDERS = tuple(spec.name for spec in PROVIDERS)
"""Declared once, in providers/registry.py, as are each provider's settings below."""


TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off", "")


def _parse_bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise ConfigError(f"expected true or false, got {raw!r}")


def _parse_list(raw: str) -> tuple[str, ...]:
    return tuple(item.strip().lower() for item in raw.split(",") if item.strip())


def _parse_cidrs(raw: str) -> tuple[IPNetwork, ...]:
    networks = []
    for item in _parse_list(raw):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError as exc:
            raise ConfigError(f"{item!r} is not an IP network (expected e.g. 198.18.0.0/15)") from exc
    return tuple(networks)


def _positive_float(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError as exc:
        raise ConfigError(f"expected a number, got {raw!r}") from exc
    # float() reads "nan", "inf" and "1e999" as numbers; no timeout or size can be one (a NaN
    # deadline fails every call it guards, far from the setting that caused it).
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"expected a finite positive number, got {raw!r}")
    return value


def _port(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"expected a port number, got {raw!r}") from exc
    if not 0 <= value <= 65535:
        raise ConfigError(f"expected a port number from 0 to 65535, got {raw!r}")
    return value


def _positive_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"expected a whole number, got {raw!r}") from exc
    if value <= 0:
        raise ConfigError(f"expected a positive whole number, got {raw!r}")
    return value


def _text(raw: str) -> str:
    return raw.strip()


def _optional_text(raw: str) -> str | None:
    return raw.strip() or None


def _redis_url(raw: str) -> str | None:
    value = raw.strip() or None
    if value is not None:
        # The state library builds its client from it now: a URL no connection could come from
        # is a bad setting like any other, not a traceback once the server has started.
        from mcp_server_web.state import check_redis_url

        try:
            check_redis_url(value)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return value


def _path(raw: str) -> str:
    value = raw.strip()
    if not value.startswith("/"):
        raise ConfigError(f"must start with '/', got {raw!r}")
    return value


@dataclass(frozen=True)
class Kind:
    """What a setting accepts: how its text (a flag's value or a variable's) is read, and how
    --help says so."""

    parse: Callable[[str], Any]
    accepts: str
    """For --help: "a number > 0", "one of stdio, http"."""
    metavar: str = "VALUE"
    switch: bool = False
    """A yes/no setting: a switch on the command line (--x, --no-x), true or false in the
    environment."""


def _choice(*allowed: str) -> Kind:
    def parse(raw: str) -> str:
        value = raw.strip().lower()
        if value not in allowed:
            raise ConfigError(f"expected one of {', '.join(allowed)}, got {raw!r}")
        return value

    return Kind(parse, f"one of {', '.join(allowed)}", "{" + ",".join(allowed) + "}")


def _known_names(known: Sequence[str]) -> Kind:
    def parse(raw: str) -> tuple[str, ...]:
        names = _parse_list(raw)
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ConfigError(f"unknown name(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return names

    return Kind(parse, f"a comma-separated list of {', '.join(known)}", "NAMES")


SWITCH = Kind(_parse_bool, "true or false", switch=True)
PORT = Kind(_port, "0 to 65535", "PORT")
COUNT = Kind(_positive_int, "a whole number > 0", "N")
SECONDS = Kind(_positive_float, "a number > 0", "SECONDS")
RATE = Kind(_positive_float, "a number > 0", "RPS")
MEGABYTES = Kind(_positive_float, "a number > 0", "MB")
TEXT = Kind(_text, "text", "TEXT")
HOST = Kind(_text, "a host name or IP address", "HOST")
PATH = Kind(_path, "a path starting with /", "PATH")
SECRET = Kind(_optional_text, "text", "SECRET")
URL = Kind(_optional_text, "a URL", "URL")
REDIS_URL = Kind(_redis_url, "a redis:// or rediss:// URL", "URL")
EXECUTABLE = Kind(_optional_text, "a path or a command on PATH", "PATH")
LIST = Kind(_parse_list, "a comma-separated list", "LIST")
CIDRS = Kind(_parse_cidrs, "comma-separated IP ranges, e.g. 198.18.0.0/15", "CIDRS")


ProviderValue = Literal["key", "url", "rps", "daily_limit"]


@dataclass(frozen=True)
class Option:
    """One setting: its attribute on Settings, its flag, its environment variable, what it
    accepts and how to parse it. Its default is the Settings field's."""

    attr: str
    env: str
    kind: Kind
    help: str
    secret: bool = False
    flag: str | None = None
    default_file: str | None = None
    """A file read when neither the variable nor <NAME>_FILE is set (a Docker secret's path)."""
    provider: tuple[str, ProviderValue] | None = None
    """For a provider's key, URL, pace or daily limit: the provider, and which of these (kept in
    ``Settings.provider_keys``, ``provider_urls``, ``provider_rps``, ``provider_daily_limits``,
    not in a field of their own)."""
    default_help: str | None = None
    """The default in words, where the value alone would say nothing (an empty list that means
    "every configured provider")."""

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.attr.replace("_", "-")

    @property
    def negative_flag(self) -> str | None:
        """A switch's "off" spelling (--no-allow-private); None for a setting that takes a value."""
        return "--no-" + self.cli_flag.removeprefix("--") if self.kind.switch else None


def _provider_options() -> list[Option]:
    """Each provider's key, then the URLs that switch a provider on, then the endpoint overrides:
    derived from the providers' declarations (providers/registry.py), so a new provider brings
    its own settings and this module does not change.

    A key is read from ``<NAME>_API_KEY``, the name the providers' own SDKs and servers use; a
    self-hosted instance from ``<NAME>_URL`` (as SearXNG's servers do); an override of a hosted
    endpoint from ``MCP_WEB_<NAME>_URL``, ours alone."""
    keys = [
        Option(
            f"{p.name}_api_key",
            f"{p.name.upper()}_API_KEY",
            SECRET,
            f"{p.title} API key",
            True,
            provider=(p.name, "key"),
        )
        for p in PROVIDERS
        if p.needs == "key"
    ]
    urls = [
        Option(
            f"{p.name}_url",
            f"{p.name.upper()}_URL" if p.needs == "url" else f"MCP_WEB_{p.name.upper()}_URL",
            URL,
            f"base URL of a {p.title} instance" if p.needs == "url" else f"{p.title} endpoint override",
            provider=(p.name, "url"),
            default_help=None if p.needs == "url" else f"{p.title}'s own",
        )
        # Stable sort: the URLs that switch a provider on come first.
        for p in sorted(PROVIDERS, key=lambda p: p.needs != "url")
    ]
    limits = [
        option
        for p in PROVIDERS
        for option in (
            Option(
                f"{p.name}_rps",
                f"MCP_WEB_{p.name.upper()}_RPS",
                RATE,
                f"requests per second sent to {p.title}",
                provider=(p.name, "rps"),
                default_help=str(p.rps) if p.rps else "unpaced",
            ),
            Option(
                f"{p.name}_daily_limit",
                f"MCP_WEB_{p.name.upper()}_DAILY_LIMIT",
                COUNT,
                f"{p.title} calls per UTC day",
                provider=(p.name, "daily_limit"),
                default_help="no limit",
            ),
        )
    ]
    return [*keys, *urls, *limits]


OPTIONS: tuple[Option, ...] = (
    Option(
        "transport", "MCP_WEB_TRANSPORT", _choice("stdio", "http"), "serve MCP over stdio or streamable HTTP"
    ),
    Option("host", "MCP_WEB_HOST", HOST, "HTTP bind address"),
    Option("port", "MCP_WEB_PORT", PORT, "HTTP port"),
    Option("path", "MCP_WEB_PATH", PATH, "HTTP endpoint path"),
    Option(
        "auth_token",
        "MCP_WEB_AUTH_TOKEN",
        SECRET,
        "bearer token required over HTTP",
        secret=True,
        default_file="/run/secrets/mcp_web_auth_token",
    ),
    Option(
        "allow_unauthenticated_remote",
        "MCP_WEB_ALLOW_UNAUTHENTICATED_REMOTE",
        SWITCH,
        "DANGEROUS: serve HTTP on a non-loopback address without a token",
    ),
    Option(
        "allowed_hosts",
        "MCP_WEB_ALLOWED_HOSTS",
        LIST,
        "Host header allow-list (host or host:port; * for any)",
        default_help="the loopback names when bound to loopback, else any",
    ),
    Option(
        "allowed_origins",
        "MCP_WEB_ALLOWED_ORIGINS",
        LIST,
        "Origin header allow-list (* for any)",
        default_help="loopback origins when bound to loopback, else any",
    ),
    Option(
        "max_concurrency", "MCP_WEB_MAX_CONCURRENCY", COUNT, "tool calls and prompt fetches served at once"
    ),
    Option(
        "max_connections",
        "MCP_WEB_MAX_CONNECTIONS",
        COUNT,
        "HTTP connections open at once",
        default_help="derived from the open-file limit",
    ),
    Option(
        "max_connections_per_client",
        "MCP_WEB_MAX_CONNECTIONS_PER_CLIENT",
        COUNT,
        "HTTP connections open at once from one client address (a reverse proxy is one address)",
    ),
    Option(
        "request_read_timeout",
        "MCP_WEB_REQUEST_READ_TIMEOUT",
        SECONDS,
        "seconds an HTTP client has to send a whole request (head and body) before it is disconnected",
    ),
    Option(
        "log_level", "MCP_WEB_LOG_LEVEL", _choice("debug", "info", "warning", "error"), "stderr log level"
    ),
    Option("tools", "MCP_WEB_TOOLS", _known_names(KNOWN_TOOLS), "tools to expose"),
    Option(
        "search_providers",
        "MCP_WEB_SEARCH_PROVIDERS",
        _known_names(KNOWN_PROVIDERS),
        "search fallback order",
        default_help="every configured provider, then duckduckgo",
    ),
    Option(
        "allow_private",
        "MCP_WEB_ALLOW_PRIVATE",
        SWITCH,
        "allow private/loopback/link-local destinations (not cloud metadata; never sent to a third party)",
    ),
    Option(
        "allow_cidrs",
        "MCP_WEB_ALLOW_CIDRS",
        CIDRS,
        "extra allowed IP ranges, treated as public (the only way to open a cloud metadata address)",
    ),
    Option("respect_robots", "MCP_WEB_RESPECT_ROBOTS", SWITCH, "obey robots.txt"),
    Option("user_agent", "MCP_WEB_USER_AGENT", TEXT, "outbound User-Agent"),
    Option(
        "proxy",
        "MCP_WEB_PROXY",
        URL,
        "outbound proxy URL",
        default_help="unset (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY are honoured)",
    ),
    Option(
        "timeout",
        "MCP_WEB_TIMEOUT",
        SECONDS,
        "seconds to download a page (robots.txt and redirects included), and again to convert it",
    ),
    Option("max_response_mb", "MCP_WEB_MAX_RESPONSE_MB", MEGABYTES, "cap on a decoded body, MB"),
    Option("cache_ttl", "MCP_WEB_CACHE_TTL", SECONDS, "seconds a fetched document stays cached"),
    Option("cache_max_mb", "MCP_WEB_CACHE_MAX_MB", MEGABYTES, "cap on the fetch caches together, MB"),
    Option("pdf_max_pages", "MCP_WEB_PDF_MAX_PAGES", COUNT, "PDF pages converted at most"),
    Option(
        "render",
        "MCP_WEB_RENDER",
        _choice("auto", "off"),
        "load pages built by JavaScript in a headless browser when needed (auto, if a browser is "
        "found), or never (off)",
    ),
    Option(
        "browser",
        "MCP_WEB_BROWSER",
        EXECUTABLE,
        "Chromium or Chrome executable to render with",
        default_help="Playwright's browser if installed, else chromium-headless-shell, chromium or "
        "google-chrome on PATH",
    ),
    Option(
        "render_timeout",
        "MCP_WEB_RENDER_TIMEOUT",
        SECONDS,
        "seconds one render may take, waiting for a free browser included",
    ),
    Option("render_concurrency", "MCP_WEB_RENDER_CONCURRENCY", COUNT, "pages rendered at once"),
    Option(
        "render_max_mb",
        "MCP_WEB_RENDER_MAX_MB",
        MEGABYTES,
        "memory the browser's processes may hold while rendering (their private memory, summed), MB; "
        "past it the page holding the most is stopped",
    ),
    Option(
        "conversion_max_mb",
        "MCP_WEB_CONVERSION_MAX_MB",
        MEGABYTES,
        "memory one page's conversion may use (its worker process's resident size), MB",
    ),
    Option(
        "fetch_fallback",
        "MCP_WEB_FETCH_FALLBACK",
        _known_names(READERS),
        "providers asked, in order, for a page's text when it is a bot wall, refused by bot protection, "
        "or a JavaScript shell no browser read (each needs its API key); empty: a URL never goes to a "
        "third party",
        default_help="empty",
    ),
    *_provider_options(),
    Option("search_timeout", "MCP_WEB_SEARCH_TIMEOUT", SECONDS, "seconds one provider may take"),
    Option("search_deadline", "MCP_WEB_SEARCH_DEADLINE", SECONDS, "seconds one web_search may take"),
    Option(
        "search_mode",
        "MCP_WEB_SEARCH_MODE",
        _choice("fallback", "fanout"),
        "fallback: the first provider with results answers; fanout: ask the first "
        "MCP_WEB_SEARCH_FANOUT available providers at once and fuse their lists",
    ),
    Option("search_fanout", "MCP_WEB_SEARCH_FANOUT", COUNT, "providers asked at once in fanout mode"),
    Option(
        "safesearch",
        "MCP_WEB_SAFESEARCH",
        _choice("off", "moderate", "strict"),
        "safe search asked of every provider, each its own way (one without says so in its attempt)",
    ),
    Option("search_cache_ttl", "MCP_WEB_SEARCH_CACHE_TTL", SECONDS, "seconds a search answer stays cached"),
    Option(
        "auth_cooldown",
        "MCP_WEB_AUTH_COOLDOWN",
        SECONDS,
        "seconds a provider whose key was rejected (401/403) is left out",
    ),
    Option(
        "redis_url",
        "MCP_WEB_REDIS_URL",
        REDIS_URL,
        "Redis that replicas share state through (redis:// or rediss://, password in the URL)",
        secret=True,
        default_help="unset: state kept in this process's memory",
    ),
    Option("redis_prefix", "MCP_WEB_REDIS_PREFIX", TEXT, "prefix of every key this server writes in Redis"),
    Option(
        "read_budget",
        "MCP_WEB_READ_BUDGET",
        SECONDS,
        "seconds web_search(read=N) may spend reading its top results, after the search answered",
    ),
)
OPTIONS_BY_ATTR = {option.attr: option for option in OPTIONS}
_PROVIDER_FIELDS: dict[ProviderValue, str] = {
    "key": "provider_keys",
    "url": "provider_urls",
    "rps": "provider_rps",
    "daily_limit": "provider_daily_limits",
}
"""Where Settings keeps each kind of per-provider value."""


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to know, typed and validated. Read once at start-up."""

    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    auth_token: str | None = field(default=None, repr=False)
    allow_unauthenticated_remote: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_concurrency: int = 32
    max_connections: int | None = None
    """None: derived from the process's open-file limit (see server/connections.py)."""
    max_connections_per_client: int = 64
    request_read_timeout: float = 10.0
    log_level: str = "info"
    tools: tuple[str, ...] = ("web_search", "web_fetch")
    search_providers: tuple[str, ...] = ()
    allow_private: bool = False
    allow_cidrs: tuple[IPNetwork, ...] = ()
    respect_robots: bool = True
    user_agent: str = DEFAULT_USER_AGENT
    proxy: str | None = None
    timeout: float = 30.0
    max_response_mb: float = 10.0
    cache_ttl: float = 900.0
    cache_max_mb: float = 128.0
    pdf_max_pages: int = 100
    render: str = "auto"
    browser: str | None = None
    render_timeout: float = 20.0
    render_concurrency: int = 2
    render_max_mb: float = 1024.0
    conversion_max_mb: float = 1024.0
    fetch_fallback: tuple[str, ...] = ()
    provider_keys: Mapping[str, str] = field(default_factory=dict, repr=False, hash=False)
    """API keys by provider name (from TAVILY_API_KEY and the like)."""
    provider_urls: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Endpoints by provider name (SEARXNG_URL, MCP_WEB_TAVILY_URL and the like)."""
    search_timeout: float = 10.0
    search_deadline: float = 25.0
    search_cache_ttl: float = 600.0
    provider_rps: Mapping[str, float] = field(
        default_factory=lambda: {p.name: p.rps for p in PROVIDERS if p.rps}, hash=False
    )
    """Requests per second by provider (MCP_WEB_BRAVE_RPS and the like; Brave's default is 1)."""
    provider_daily_limits: Mapping[str, int] = field(default_factory=dict, hash=False)
    """Calls per UTC day by provider (MCP_WEB_BRAVE_DAILY_LIMIT and the like)."""
    auth_cooldown: float = 3600.0
    redis_url: str | None = field(default=None, repr=False)
    redis_prefix: str = "mcp-web:"
    read_budget: float = 15.0
    safesearch: SafeSearch = "moderate"
    search_mode: SearchMode = "fallback"
    search_fanout: int = 2

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Settings:
        """Settings from values by option attribute, providers' included (``tavily_api_key``,
        ``searxng_url``): those go into ``provider_keys`` and ``provider_urls``."""
        fields: dict[str, Any] = dict(values)
        defaults = cls()
        by_kind: dict[ProviderValue, dict[str, Any]] = {
            which: dict(fields.pop(attr, getattr(defaults, attr))) for which, attr in _PROVIDER_FIELDS.items()
        }
        for attr in [attr for attr in fields if attr in OPTIONS_BY_ATTR]:
            option = OPTIONS_BY_ATTR[attr]
            if option.provider is not None:
                name, which = option.provider
                value = fields.pop(attr)
                into = by_kind[which]
                if value:
                    into[name] = value
                else:
                    into.pop(name, None)
        for which, into in by_kind.items():
            fields[_PROVIDER_FIELDS[which]] = into
        return cls(**fields)

    def provider_key(self, name: str) -> str | None:
        return self.provider_keys.get(name)

    def provider_url(self, name: str) -> str | None:
        return self.provider_urls.get(name)

    def value(self, option: Option) -> Any:
        """The setting an option declares (a provider's key or URL included)."""
        if option.provider is None:
            return getattr(self, option.attr)
        name, which = option.provider
        held: Mapping[str, Any] = getattr(self, _PROVIDER_FIELDS[which])
        return held.get(name)

    @property
    def max_response_bytes(self) -> int:
        return int(self.max_response_mb * 1024 * 1024)

    @property
    def cache_max_bytes(self) -> int:
        return int(self.cache_max_mb * 1024 * 1024)

    @property
    def render_max_bytes(self) -> int:
        return int(self.render_max_mb * 1024 * 1024)

    @property
    def conversion_max_bytes(self) -> int:
        return int(self.conversion_max_mb * 1024 * 1024)

    def describe(self) -> dict[str, str]:
        """The effective settings as strings, secrets masked: for logs and `doctor`."""
        described: dict[str, str] = {}
        for option in OPTIONS:
            value = self.value(option)
            if option.secret and value:
                described[option.env] = "***"
            elif isinstance(value, tuple):
                described[option.env] = ",".join(str(item) for item in value)
            else:
                described[option.env] = "" if value is None else str(value)
        return described


_SETTINGS_FIELDS = {settings_field.name: settings_field for settings_field in fields(Settings)}


def _read_env(env: Mapping[str, str], option: Option) -> str | None:
    if option.env in env:
        return env[option.env]
    path: Path | None = None
    if option.secret and f"{option.env}_FILE" in env:
        path = Path(env[f"{option.env}_FILE"])
    elif option.default_file is not None and Path(option.default_file).is_file():
        path = Path(option.default_file)
    if path is not None:
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"{option.env}_FILE: cannot read {path}: {exc.strerror}") from exc
    return None


def shown_default(option: Option) -> str:
    """An option's default as --help shows it: the Settings field's value, or its words."""
    if option.default_help is not None:
        return option.default_help
    field = _SETTINGS_FIELDS.get(option.attr)
    value: Any = None
    if field is not None and field.default is not MISSING:
        value = field.default
    elif field is not None and callable(field.default_factory):
        value = field.default_factory()
    if value is None:
        return f"unset (read from {option.default_file} when it exists)" if option.default_file else "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ",".join(str(item) for item in value) or "none"
    return str(value)


def setting_help(option: Option) -> str:
    """The --help line of a setting: what it does, its variable, what it accepts, its default."""
    return f"{option.help} [{option.env}: {option.kind.accepts}; default: {shown_default(option)}]"


class _Switch(argparse.BooleanOptionalAction):
    """--x / --no-x, kept as the text "true" or "false" like any flag's value: load_settings
    parses flags and variables alike."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        if option_string is not None and option_string in self.option_strings:
            setattr(namespace, self.dest, "false" if option_string.startswith("--no-") else "true")


def add_setting_flags(parser: argparse.ArgumentParser, *, default: Any = None) -> None:
    """Add one flag per setting, a switch (--x, --no-x) for a yes/no one, unless the parser has
    an option of that name already (a command's own wins). Values stay raw strings here and are
    parsed with the environment's in load_settings."""
    group = parser.add_argument_group("settings (each also read from the environment variable in brackets)")
    for option in OPTIONS:
        if option.cli_flag in parser._option_string_actions:
            continue
        text = setting_help(option).replace("%", "%%")  # argparse %-formats help
        dest = f"setting_{option.attr}"
        if option.kind.switch:
            group.add_argument(option.cli_flag, action=_Switch, dest=dest, default=default, help=text)
        else:
            group.add_argument(
                option.cli_flag, dest=dest, metavar=option.kind.metavar, default=default, help=text
            )


def fold_switch_values(args: Sequence[str]) -> list[str]:
    """Yes/no flags written as they were when they took a value ("--allow-private true",
    "--respect-robots=no") turned into the switch they mean, so configs written then still work.

    Only a word the environment accepts for true or false is read as a switch's value, so a bare
    switch never swallows the command or URL after it. A value a switch cannot mean is a
    ConfigError naming the flag.
    """
    switches = {option.cli_flag: option for option in OPTIONS if option.kind.switch}
    words = (*TRUE_WORDS, *FALSE_WORDS)
    folded: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":  # what follows is positional, whatever it looks like
            folded.extend(args[index:])
            break
        flag, equals, value = arg.partition("=")
        option = switches.get(flag)
        following = args[index + 1] if index + 1 < len(args) else None
        if option is not None and not equals and following is not None and following.strip().lower() in words:
            value, equals = following, "="
            index += 1
        if option is not None and equals:
            try:
                on = _parse_bool(value)
            except ConfigError as exc:
                raise ConfigError(f"{flag}: {exc}") from None
            folded.append(option.cli_flag if on else str(option.negative_flag))
        else:
            folded.append(arg)
        index += 1
    return folded


def load_settings(
    flags: Mapping[str, str | None] | None = None, env: Mapping[str, str] | None = None
) -> Settings:
    """Build Settings from raw flag values (by attribute name) and the environment; flags win."""
    flags = flags or {}
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for option in OPTIONS:
        raw = flags.get(option.attr)
        source = option.cli_flag
        if raw is None:
            raw = _read_env(env, option)
            source = option.env
        if raw is None:
            continue
        try:
            values[option.attr] = option.kind.parse(raw)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
    return Settings.from_values(values)


def check_exposure(settings: Settings) -> None:
    """Refuse to serve HTTP beyond this machine without a token, unless told so loudly.

    Checked when serving, not when reading settings, so `doctor` can still explain such a setup.
    """
    if settings.transport != "http" or is_loopback_host(settings.host) or settings.auth_token:
        return
    if not settings.allow_unauthenticated_remote:
        raise ConfigError(
            f"refusing to serve HTTP on {settings.host} without a token: set MCP_WEB_AUTH_TOKEN (or "
            "MCP_WEB_AUTH_TOKEN_FILE), bind to 127.0.0.1, or set MCP_WEB_ALLOW_UNAUTHENTICATED_REMOTE=true "
            "if something in front of this server authenticates callers."
        )


def key_env(provider: str) -> str:
    """The environment variable of a provider's API key."""
    return next(option.env for option in OPTIONS if option.provider == (provider, "key"))


def check_fetch_fallback(settings: Settings) -> None:
    """Refuse a fallback provider listed without its key: the operator asked for it, and running
    without it would leave every bot wall unread with no word why until a page met one."""
    missing = [name for name in settings.fetch_fallback if not settings.provider_key(name)]
    if missing:
        keys = " and ".join(key_env(name) for name in missing)
        raise ConfigError(
            f"MCP_WEB_FETCH_FALLBACK lists {', '.join(missing)}, which needs an API key: set {keys}, or "
            "remove it from MCP_WEB_FETCH_FALLBACK."
        )


def is_loopback_host(host: str) -> bool:
    """True for a bind address or host name that only this machine can reach."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def settings_from_namespace(namespace: argparse.Namespace, env: Mapping[str, str] | None = None) -> Settings:
    flags = {option.attr: getattr(namespace, f"setting_{option.attr}", None) for option in OPTIONS}
    return load_settings(flags, env)
