"""The command line: one-shot fetch, search and doctor, run as a user runs them (a subprocess).

Every run gets an environment cleaned of the developer's own settings and keys, with every
search endpoint pointed at loopback, so no test can reach a real provider.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import fields
from typing import Any

import pytest

from mcp_server_web.cli import build_parser, parse_arguments
from mcp_server_web.config import OPTIONS, OPTIONS_BY_ATTR, Option, Settings, settings_from_namespace
from tests.support.fakes.base import FakeProvider, sample_results
from tests.support.origin import Origin
from tests.support.samples import ARTICLE_TITLE, article_html, long_markdown_html
from tests.support.timing import child_cpu_time

# Nothing listens on the discard port of loopback: a provider that is not faked fails fast, locally.
NOWHERE = "http://127.0.0.1:9"
_PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}


def clean_env(**extra: str) -> dict[str, str]:
    """os.environ without any setting, key or proxy of the developer's, endpoints on loopback."""
    owned = {option.env for option in OPTIONS} | {f"{option.env}_FILE" for option in OPTIONS}
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in owned and not name.startswith("MCP_WEB_") and name.lower() not in _PROXY_VARIABLES
    }
    env.update(
        {
            "PYTHONIOENCODING": "utf-8",
            "MCP_WEB_SEARCH_PROVIDERS": "duckduckgo",
            "MCP_WEB_TAVILY_URL": NOWHERE,
            "MCP_WEB_EXA_URL": NOWHERE,
            "MCP_WEB_BRAVE_URL": NOWHERE,
            "MCP_WEB_DUCKDUCKGO_URL": NOWHERE,
        }
    )
    env.update(extra)
    return env


def env_for(*fakes: FakeProvider) -> dict[str, str]:
    """Environment variables that point the server at these fake providers."""
    env: dict[str, str] = {}
    for fake in fakes:
        for attr, value in fake.settings().items():
            env[OPTIONS_BY_ATTR[attr].env] = str(value)
    return env


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_server_web", *args],
        env=env if env is not None else clean_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )


# --------------------------------------------------------------------------------------------
# fetch
# --------------------------------------------------------------------------------------------


def test_fetch_prints_the_markdown(origin: Origin) -> None:
    url = origin.serve("/article", article_html())
    out = run_cli("fetch", url, "--allow-cidrs", "127.0.0.1/32")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"# {ARTICLE_TITLE}")
    assert "Paragraph 12: rivers carry sediment" in out.stdout
    assert "SECRET_SCRIPT_TEXT" not in out.stdout
    assert "untrusted-content" not in out.stdout  # the fence is for models, not for a terminal
    assert out.stderr == ""


def test_fetch_prints_the_whole_document_across_pages(origin: Origin) -> None:
    # About 150,000 characters of Markdown: more than one page at the tool's 100,000 maximum.
    url = origin.serve("/long", long_markdown_html(sections=120))
    out = run_cli("fetch", url, "--allow-cidrs", "127.0.0.1/32")
    assert out.returncode == 0, out.stderr
    assert len(out.stdout) > 100_000
    assert "start_index=" not in out.stdout  # no continuation line between or after pages
    assert "untrusted-content" not in out.stdout  # nor any page's fence tags
    found = re.findall(r"Section (\d+) paragraph (\d+)\.", out.stdout)
    # Every paragraph exactly once, in order: the pages were joined without loss or overlap.
    assert found == [(str(s), str(p)) for s in range(120) for p in range(4)]
    assert out.stdout.rstrip().endswith("The quick brown fox jumps over the lazy dog.")


def test_fetch_one_page_with_max_length(origin: Origin) -> None:
    url = origin.serve("/long", long_markdown_html(sections=10))
    out = run_cli("fetch", url, "--max-length", "600", "--format", "text", "--allow-cidrs", "127.0.0.1/32")
    assert out.returncode == 0, out.stderr
    continuation = re.search(
        r"Call web_fetch again with start_index=(\d+) and snapshot=[0-9a-f]{12} to continue\.\]\n$",
        out.stdout,
    )
    assert continuation is not None, out.stdout[-300:]
    assert int(continuation.group(1)) <= 600
    assert "#" not in out.stdout  # plain text, not Markdown headings
    # One page exactly as a model gets it: fenced, with the continuation line after the fence.
    assert re.match(r'<untrusted-content id="[0-9a-f]{16}" source="[^"]*">\n', out.stdout)
    assert re.search(r'\n</untrusted-content id="[0-9a-f]{16}">\n\n\[\d+ more characters', out.stdout)


def test_fetch_whole_page_keeps_navigation(origin: Origin) -> None:
    url = origin.serve("/article", article_html())
    main_only = run_cli("fetch", url, "--allow-cidrs", "127.0.0.1/32")
    whole = run_cli("fetch", url, "--whole-page", "--allow-cidrs", "127.0.0.1/32")
    assert main_only.returncode == whole.returncode == 0, whole.stderr
    assert "About us" not in main_only.stdout
    assert "About us" in whole.stdout


def test_setting_flags_work_before_the_command_too(origin: Origin) -> None:
    url = origin.serve("/article", article_html())
    out = run_cli("--allow-cidrs", "127.0.0.1/32", "fetch", url)
    assert out.returncode == 0, out.stderr
    assert f"# {ARTICLE_TITLE}" in out.stdout


def test_fetch_of_a_blocked_address_fails_with_its_code(origin: Origin) -> None:
    # No --allow-cidrs: the loopback origin is a private address, refused by default.
    out = run_cli("fetch", origin.serve("/article", article_html()))
    assert out.returncode == 1
    assert out.stderr.startswith("blocked_address:")
    assert out.stdout == ""
    assert origin.requests == []


def test_fetch_of_a_private_ip_literal_is_refused() -> None:
    out = run_cli("fetch", "http://10.0.0.1/")
    assert out.returncode == 1
    assert "blocked_address" in out.stderr


def test_bad_setting_exits_2() -> None:
    out = run_cli("fetch", "http://example.com/", "--timeout", "soon")
    assert out.returncode == 2
    assert "--timeout" in out.stderr and "expected a number" in out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["fetch", "http://example.com/", "--timeout", "nan"], {}, "--timeout"),
        (["--search-deadline=-Infinity", "doctor"], {}, "--search-deadline"),
        (["doctor"], {"MCP_WEB_TIMEOUT": "inf"}, "MCP_WEB_TIMEOUT"),
        ([], {"MCP_WEB_CACHE_MAX_MB": "NaN"}, "MCP_WEB_CACHE_MAX_MB"),
    ],
)
def test_nan_and_infinity_settings_exit_2_naming_the_setting(
    args: list[str], env: dict[str, str], named: str
) -> None:
    out = run_cli(*args, env=clean_env(**env))
    assert out.returncode == 2, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert named in last and "finite" in last, out.stderr
    assert out.stdout == ""


# --------------------------------------------------------------------------------------------
# search
# --------------------------------------------------------------------------------------------


def test_search_prints_numbered_results_and_the_provider(fakes: dict[str, FakeProvider]) -> None:
    brave = fakes["brave"]
    brave.answer(sample_results(5))
    out = run_cli(
        "search",
        "rivers and valleys",
        "--max-results",
        "3",
        env=clean_env(**env_for(brave), MCP_WEB_SEARCH_PROVIDERS="brave"),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith('Results for "rivers and valleys" from brave:')
    assert "1. [Result r0](https://site0.example.com/r/0)" in out.stdout
    assert "3. [Result r2](https://site2.example.com/r/2)" in out.stdout
    assert "4. " not in out.stdout
    assert "untrusted-content" not in out.stdout
    assert brave.params()["q"] == "rivers and valleys"


def test_search_says_why_earlier_providers_failed(fakes: dict[str, FakeProvider]) -> None:
    tavily, brave = fakes["tavily"], fakes["brave"]
    tavily.fail("server")
    brave.answer(sample_results(2))
    out = run_cli(
        "search",
        "rivers",
        "--provider",
        "brave",
        env=clean_env(**env_for(tavily, brave), MCP_WEB_SEARCH_PROVIDERS="tavily,brave"),
    )
    # --provider pins brave: tavily is not tried at all.
    assert out.returncode == 0, out.stderr
    assert "from brave" in out.stdout
    assert tavily.requests == []

    fallback = run_cli(
        "search",
        "rivers",
        "--topic",
        "news",
        env=clean_env(**env_for(tavily, brave), MCP_WEB_SEARCH_PROVIDERS="tavily,brave"),
    )
    assert fallback.returncode == 0, fallback.stderr
    assert "from brave" in fallback.stdout
    assert re.search(r"- tavily failed: .+", fallback.stdout), fallback.stdout
    assert tavily.requests


def test_search_failure_exits_1(fakes: dict[str, FakeProvider]) -> None:
    brave = fakes["brave"]
    brave.fail("auth")
    out = run_cli("search", "rivers", env=clean_env(**env_for(brave), MCP_WEB_SEARCH_PROVIDERS="brave"))
    assert out.returncode == 1
    assert out.stderr.startswith("all_providers_failed:")
    assert out.stdout == ""


# --------------------------------------------------------------------------------------------
# doctor
# --------------------------------------------------------------------------------------------


def test_doctor_masks_secrets_and_explains_providers() -> None:
    secret = "tvly-super-secret-value"
    out = run_cli(
        "doctor",
        "--tools",
        "web_search,web_fetch,http_request",
        env=clean_env(
            TAVILY_API_KEY=secret,
            MCP_WEB_SEARCH_PROVIDERS="tavily,brave",
            MCP_WEB_PROXY="http://proxyuser:proxypass@127.0.0.1:3128",
        ),
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert secret not in text and "proxypass" not in text
    assert re.search(r"^  TAVILY_API_KEY +\= \*\*\*$", text, re.M)
    assert re.search(r"^  MCP_WEB_PROXY +\= http://\*\*\*@127\.0\.0\.1:3128$", text, re.M)
    assert re.search(r"^  BRAVE_API_KEY +\= $", text, re.M)  # unset: shown empty, not masked
    assert "Tools enabled: web_search, web_fetch, http_request" in text
    assert "  1. tavily (Tavily)" in text
    assert "  2. " not in text
    assert re.search(
        r"^  brave: listed in MCP_WEB_SEARCH_PROVIDERS but not configured: Set BRAVE_API_KEY", text, re.M
    )
    assert re.search(r"^  exa: not listed in MCP_WEB_SEARCH_PROVIDERS; Set EXA_API_KEY", text, re.M)
    assert re.search(r"^  duckduckgo: not listed in MCP_WEB_SEARCH_PROVIDERS$", text, re.M)


def test_doctor_default_chain_ends_with_duckduckgo() -> None:
    env = clean_env(BRAVE_API_KEY="k", MCP_WEB_DUCKDUCKGO_DAILY_LIMIT="500")
    del env["MCP_WEB_SEARCH_PROVIDERS"]  # the default order: configured providers, DuckDuckGo last
    out = run_cli("doctor", env=env)
    assert out.returncode == 0, out.stderr
    # Each provider's pace (Brave's free plan: 1 a second, by default) and daily budget.
    assert (
        "  1. brave (Brave Search): at most 1 request(s) per second\n"
        "  2. duckduckgo (DuckDuckGo): 500 calls per UTC day\n"
    ) in out.stdout
    assert "GET /healthz" in out.stdout
    assert re.search(r"^  tavily: Set TAVILY_API_KEY", out.stdout, re.M)
    assert re.search(r"^  searxng: .+", out.stdout, re.M)


# --------------------------------------------------------------------------------------------
# the parser
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--timeout", "5", "fetch", "http://x/"], {"command": "fetch", "setting_timeout": "5"}),
        (["fetch", "http://x/", "--timeout", "7"], {"command": "fetch", "setting_timeout": "7"}),
        (["--timeout", "5", "search", "q", "--timeout", "7"], {"command": "search", "setting_timeout": "7"}),
        (["--transport", "http"], {"command": None, "setting_transport": "http"}),
        (["serve", "--port", "9000"], {"command": "serve", "setting_port": "9000"}),
        (["doctor"], {"command": "doctor", "setting_timeout": None}),
    ],
)
def test_setting_flags_parse_on_either_side_of_the_command(argv: list[str], expected: dict[str, Any]) -> None:
    namespace = build_parser().parse_args(argv)
    for name, value in expected.items():
        assert getattr(namespace, name) == value


BOOLEAN = [
    OPTIONS_BY_ATTR[f.name] for f in fields(Settings) if f.type == "bool" and f.name in OPTIONS_BY_ATTR
]


def test_every_yes_no_setting_is_found() -> None:
    assert {"allow_private", "respect_robots", "allow_unauthenticated_remote"} <= {o.attr for o in BOOLEAN}


@pytest.mark.parametrize("option", BOOLEAN, ids=lambda option: option.attr)
def test_yes_no_settings_are_switches(option: Option) -> None:
    """--x turns it on and --no-x off, before or after a command, and either wins over the
    variable; a bare switch does not swallow the command that follows it."""
    negative = "--no-" + option.cli_flag.removeprefix("--")
    for argv, expected in (
        ([option.cli_flag, "doctor"], True),
        ([negative, "doctor"], False),
        (["doctor", option.cli_flag], True),
        (["fetch", "http://x/", negative], False),
        ([option.cli_flag], True),
    ):
        for variable in ("true", "false"):
            namespace = build_parser().parse_args(argv)
            settings = settings_from_namespace(namespace, {option.env: variable})
            assert getattr(settings, option.attr) is expected, (argv, variable)
            assert namespace.command == next((word for word in argv if word in ("doctor", "fetch")), None)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--allow-private", "true", "doctor"], True),
        (["--allow-private", "False", "doctor"], False),
        (["doctor", "--allow-private", "no"], False),
        (["fetch", "http://x/", "--allow-private", "1"], True),
        (["--allow-private=off", "doctor"], False),
        (["--allow-private=yes"], True),
    ],
)
def test_yes_no_settings_still_take_a_value_as_they_used_to(argv: list[str], expected: bool) -> None:
    # Configs written when these flags took a value keep working, with the same spellings the
    # environment variables accept.
    namespace = parse_arguments(build_parser(), argv)
    assert settings_from_namespace(namespace, {}).allow_private is expected
    assert namespace.command == next((word for word in argv if word in ("doctor", "fetch")), None)


def test_a_yes_no_flag_with_a_value_it_cannot_mean_is_a_clear_error() -> None:
    out = run_cli("--respect-robots=maybe", "doctor")
    assert out.returncode == 2
    assert "--respect-robots" in out.stderr and "expected true or false" in out.stderr
    assert out.stdout == ""


def test_a_switch_before_the_command_reaches_the_command(origin: Origin) -> None:
    url = origin.serve("/article", article_html())
    out = run_cli("--allow-private", "fetch", url)
    assert out.returncode == 0, out.stderr
    assert f"# {ARTICLE_TITLE}" in out.stdout
    refused = run_cli("--allow-private", "fetch", url, "--no-allow-private")
    assert refused.returncode == 1 and refused.stderr.startswith("blocked_address:")


def help_entries(text: str) -> dict[str, str]:
    """--help's option entries by flag (each spelling of a switch), lines joined, spaces collapsed."""
    entries: dict[str, str] = {}
    # An entry starts at a line indented by two and goes on with the lines indented further.
    for chunk in re.split(r"\n(?=  -|\S)", text):
        if chunk.startswith("  -"):
            head = re.split(r"\s{2,}", chunk.strip(), maxsplit=1)[0]
            for flag in re.findall(r"(?:^|, )(--?[a-z][a-z0-9-]*)", head):
                entries[flag] = " ".join(chunk.split())
    return entries


@pytest.mark.parametrize("command", [[], ["fetch"], ["doctor"]])
def test_help_gives_each_setting_its_variable_accepted_values_and_default(command: list[str]) -> None:
    out = run_cli(*command, "--help", env=clean_env(COLUMNS="100"))
    assert out.returncode == 0, out.stderr
    entries = help_entries(out.stdout)
    for option in OPTIONS:
        entry = entries.get(option.cli_flag)
        assert entry, f"{option.cli_flag} missing from --help"
        assert option.env in entry and "default: " in entry, entry
    for flag, fragments in {
        "--transport": ["stdio, http", "default: stdio"],
        "--port": ["0 to 65535", "default: 8000"],
        "--timeout": ["a number > 0", "default: 30]"],
        "--max-concurrency": ["a whole number > 0", "default: 32]"],
        "--log-level": ["debug, info, warning, error", "default: info"],
        "--tools": ["web_search, web_fetch, http_request", "default: web_search,web_fetch"],
        "--allow-private": ["--no-allow-private", "true or false", "default: false"],
        "--respect-robots": ["--no-respect-robots", "default: true"],
        "--allow-cidrs": ["default: none"],
        "--brave-api-key": ["default: unset"],
    }.items():
        for fragment in fragments:
            assert fragment in entries[flag], (fragment, entries[flag])
    assert entries["--no-allow-private"] == entries["--allow-private"]


def test_subcommand_help_is_fast() -> None:
    out, cpu = child_cpu_time(lambda: run_cli("fetch", "--help"))
    assert out.returncode == 0
    assert "--whole-page" in out.stdout and "--allow-cidrs" in out.stdout
    assert cpu < 10, f"{cpu:.1f} s of CPU"
    # The heavy modules are not even imported to build the parser.
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, mcp_server_web.cli as c; c.build_parser();"
            "print(sorted(m for m in ('mcp', 'httpx', 'mcp_server_web.cli.commands') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(),
    )
    assert probe.stdout.strip() == "[]"


def test_doctor_says_what_a_listed_provider_lacks_when_none_is_left() -> None:
    out = run_cli("doctor", env=clean_env(MCP_WEB_SEARCH_PROVIDERS="tavily"))
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith("  none:"))
    assert "TAVILY_API_KEY" in line and "set MCP_WEB_SEARCH_PROVIDERS" not in line, line


# --------------------------------------------------------------------------------------------
# log levels
# --------------------------------------------------------------------------------------------

# readability logs "ruthless removal did not work" at INFO for a page whose paragraphs are all
# too short to score; it does so in the conversion worker process.
TERSE_PAGE = "<html><head><title>Short</title></head><body><p>Hello there.</p><p>Hi.</p></body></html>"
READABILITY_INFO = "readability.readability: ruthless removal did not work"


@pytest.mark.parametrize(
    ("flags", "env", "shown"),
    [
        ([], {}, False),  # a one-shot command's own default: warnings only
        (["--log-level", "error"], {}, False),
        ([], {"MCP_WEB_LOG_LEVEL": "warning"}, False),
        (["--log-level", "info"], {}, True),
        ([], {"MCP_WEB_LOG_LEVEL": "debug"}, True),
    ],
)
def test_libraries_log_at_our_level_in_the_conversion_workers_too(
    origin: Origin, flags: list[str], env: dict[str, str], shown: bool
) -> None:
    url = origin.serve("/terse", TERSE_PAGE)
    out = run_cli("fetch", url, "--allow-cidrs", "127.0.0.1/32", *flags, env=clean_env(**env))
    assert out.returncode == 0, out.stderr
    assert "Hello there." in out.stdout
    assert (READABILITY_INFO in out.stderr) is shown, out.stderr


def test_doctor_shows_the_log_level_a_server_would_use() -> None:
    out = run_cli("doctor")
    assert re.search(r"^  MCP_WEB_LOG_LEVEL +\= info$", out.stdout, re.M), out.stdout


def test_doctor_lists_the_fetch_fallback_and_a_missing_key_stops_the_server() -> None:
    env = clean_env(MCP_WEB_FETCH_FALLBACK="exa,tavily", TAVILY_API_KEY="tvly-doctor-key-123456")
    out = run_cli("doctor", env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = lines.index("Read-through (MCP_WEB_FETCH_FALLBACK):")
    assert "the URL is sent to them" in lines[start + 1]
    assert lines[start + 2].startswith("  1. exa (Exa): no key, set EXA_API_KEY")
    assert lines[start + 3] == "  2. tavily (Tavily)"
    assert "tvly-doctor-key" not in out.stdout
    for command in ([], ["fetch", "http://127.0.0.1:9/"]):
        refused = run_cli(*command, env=env)
        assert refused.returncode == 2 and refused.stdout == ""
        assert "MCP_WEB_FETCH_FALLBACK lists exa, which needs an API key: set EXA_API_KEY" in refused.stderr


def test_doctor_says_nothing_goes_to_a_third_party_by_default() -> None:
    out = run_cli("doctor")
    assert "  not set: a page web_fetch cannot read is never sent to a third party." in out.stdout
    refused = run_cli("--fetch-fallback", "brave", "doctor")
    assert refused.returncode == 2 and "unknown name(s) brave; known: tavily, exa" in refused.stderr


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("foo://:redis-pass-secret@127.0.0.1:6379/0", "redis:// or rediss://"),
        ("unix:///run/redis.sock", "redis:// or rediss://"),
        ("redis://:redis-pass-secret@127.0.0.1:99999/0", "port"),
        ("redis://:redis-pass-secret@127.0.0.1:6379/0?socket_timeout=soon", "socket_timeout"),
        ("redis://:redis-pass-secret@127.0.0.1:6379/0?no_such_option=1", "no_such_option"),
    ],
)
@pytest.mark.parametrize("command", [[], ["--transport", "http", "--port", "0"], ["doctor"]])
def test_an_unusable_redis_url_is_one_line_and_exit_2_like_any_bad_setting(
    url: str, said: str, command: list[str]
) -> None:
    """Over stdio, over HTTP (where exit 3 would mean the port could not be bound) and in doctor:
    the setting is named, the password is not, and nothing starts."""
    out = run_cli(*command, env=clean_env(MCP_WEB_REDIS_URL=url))
    assert out.returncode == 2, out.stderr[-3000:]
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("usage:"), out.stderr[-3000:]
    assert "MCP_WEB_REDIS_URL" in lines[1] and said.lower() in lines[1].lower(), lines[1]
    assert "redis-pass-secret" not in out.stderr
