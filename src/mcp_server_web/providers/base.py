"""The search port: what every provider adapter takes, returns and raises.

An adapter is a short class over ``SearchProvider``, declared in ``registry.PROVIDERS``: it
maps a ``SearchQuery`` to its provider's request and the provider's answer to ``SearchResult``
values, and turns every failure into a ``ProviderError`` whose ``kind`` tells the chain whether
to fail over and whether to cool the provider down. Adapters know nothing about MCP or about
the other providers.
"""

from __future__ import annotations

import email.utils
import html
import re
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import ClassVar, Literal

import httpx

from mcp_server_web.providers.redact import Redactor, url_secrets
from mcp_server_web.providers.registry import spec_for

Topic = Literal["general", "news"]
TimeRange = Literal["day", "week", "month", "year"]
TOPICS: tuple[Topic, ...] = ("general", "news")
TIME_RANGES: tuple[TimeRange, ...] = ("day", "week", "month", "year")
SafeSearch = Literal["off", "moderate", "strict"]
SAFESEARCH_LEVELS: tuple[SafeSearch, ...] = ("off", "moderate", "strict")
PAGE_LIMIT = 5

ErrorKind = Literal["auth", "rate_limit", "quota", "timeout", "upstream", "blocked", "bad_response", "config"]
"""Why a provider failed. The chain fails over on every kind; rate_limit, quota and blocked
also put the provider in a cooldown."""
COOLDOWN_KINDS: frozenset[ErrorKind] = frozenset({"rate_limit", "quota", "blocked"})


@dataclass(frozen=True, slots=True)
class SearchQuery:
    query: str
    max_results: int = 5
    topic: Topic = "general"
    time_range: TimeRange | None = None
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    country: str | None = None
    """ISO 3166-1 alpha-2, upper case ("DE"), or None for no region."""
    language: str | None = None
    """ISO 639-1, lower case ("de"), or None for the provider's default."""
    page: int = 1
    """1 to PAGE_LIMIT: which max_results-sized page of the ranking."""
    safesearch: SafeSearch = "moderate"
    published_after: date | None = None
    published_before: date | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str
    """Plain text: tags and entities removed, whitespace collapsed."""
    published: str | None = None
    """ISO 8601 with a timezone (see ``iso_datetime``), or None when the provider gives no date."""
    score: float | None = None
    """Unused by the adapters: providers' scores mean different things (see the README)."""
    sources: tuple[str, ...] = ()
    """With fan-out: every provider that returned this result (the chain fills it in)."""


class ProviderError(Exception):
    """A provider could not answer. ``message`` is one plain sentence and never holds a key."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after
        """Seconds the provider asked us to wait, when it said so."""
        self.status = status

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """What an adapter is built with: its credential or instance, its endpoint, shared limits."""

    api_key: str | None = field(repr=False)
    base_url: str
    user_agent: str
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Every secret configured (all providers' keys, credentials in URLs): whatever a provider
    says is quoted without them. The adapter's own key and URL credentials are always added."""
    key_name: str = "api_key"
    """What the caller calls the key, for messages that ask for one (the server: TAVILY_API_KEY)."""
    url_name: str = "base_url"
    """What the caller calls the endpoint, for messages that ask to change it."""
    setup_hint: str = ""
    """How to switch the provider on, for the message when it is not (registry.ProviderSpec.hint)."""


class SearchProvider(ABC):
    """One search backend. Subclasses declare their endpoint and implement ``search``; who they
    are (name, title, settings, how to switch them on) is their entry in ``registry.PROVIDERS``."""

    default_url: ClassVar[str]
    """The provider's own endpoint ("" for a self-hosted one); its URL setting overrides it."""
    pages: ClassVar[bool] = False
    """Whether the provider takes a page (or offset) itself; if not, the chain emulates paging by
    asking for page * max_results results and keeping the last max_results."""

    def __init__(self, config: ProviderConfig, http: httpx.AsyncClient) -> None:
        self.spec = spec_for(type(self))
        self.name = self.spec.name
        """Identifier in ``ProvidersConfig.order`` and in answers (e.g. "brave")."""
        self.title = self.spec.title
        """Human name (e.g. "Brave Search"), in messages."""
        self.config = config
        self.http = http
        """The shared client every adapter's requests go over, SDKs' included (not SSRF-guarded:
        the endpoints are the operator's configuration, not model input)."""
        self.redactor = Redactor((*config.secrets, config.api_key, *url_secrets(config.base_url)))
        """Quotes provider text without any configured secret (see ``redact``)."""

    @abstractmethod
    async def search(self, query: SearchQuery, *, timeout: float) -> list[SearchResult]:  # noqa: ASYNC109
        """Results for query, at most query.max_results; ProviderError on any failure.

        ``timeout`` is this attempt's budget in seconds; the chain also enforces it.
        """

    def unsupported(self, query: SearchQuery) -> tuple[str, ...]:
        """One sentence per option of query this provider has no parameter for (and so ignores),
        for the attempt's notes: a model asked for German results should learn it did not get them."""
        return ()

    async def aclose(self) -> None:
        """Release what the adapter opened itself (SDK clients); the shared client is not ours."""
        return None


# "[^<>]": a run stops at the next "<", so "<<<<..." costs linear time, not quadratic.
_TAG = re.compile(r"<[^<>]+>")
_SPACE = re.compile(r"\s+")


def plain_text(fragment: str | None) -> str:
    """A snippet as plain text: tags dropped, entities decoded, whitespace collapsed."""
    if not fragment:
        return ""
    without_tags = _TAG.sub(" ", fragment)
    return _SPACE.sub(" ", html.unescape(without_tags)).strip()


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Parse a Retry-After header (delta seconds or an HTTP date) into seconds from now."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    delta = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, delta)


def status_error(
    provider: str, status: int, detail: str = "", retry_after: float | None = None
) -> ProviderError:
    """The usual meaning of an HTTP status from a search API, for adapters without finer signals."""
    suffix = f": {detail}" if detail else ""
    if status in (401, 403):
        return ProviderError(
            "auth", f"{provider} rejected the API key (HTTP {status}){suffix}.", status=status
        )
    if status == 402:
        return ProviderError(
            "quota", f"{provider} says the plan's credits are used up (HTTP 402){suffix}.", status=status
        )
    if status == 429:
        return ProviderError(
            "rate_limit",
            f"{provider} is rate-limiting requests (HTTP 429){suffix}.",
            retry_after=retry_after,
            status=status,
        )
    if status >= 500:
        return ProviderError(
            "upstream", f"{provider} had a server error (HTTP {status}){suffix}.", status=status
        )
    return ProviderError(
        "bad_response", f"{provider} refused the request (HTTP {status}){suffix}.", status=status
    )


_RELATIVE = re.compile(r"(\d+)\s+(minute|hour|day|week|month|year)s?\s+ago", re.I)
_RELATIVE_SECONDS = {
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}


def iso_datetime(value: object, *, now: datetime | None = None) -> str | None:
    """A provider's date as ISO 8601 with a timezone, or None when it is not a date we can read.

    Taken: ISO 8601 (a date alone is midnight; no zone is UTC, which is what the providers that
    leave it out mean), RFC 2822 ("Tue, 04 Nov 2025 15:30:00 GMT", Tavily) and relative ages
    ("2 days ago", Brave's news), counted back from ``now`` (the time of the answer).
    """
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    when: datetime | None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        when = None
    if when is None:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            when = None
    if when is None:
        try:
            when = datetime.strptime(text, "%B %d, %Y")  # Brave's web "age": "November 1, 2026"
        except ValueError:
            when = None
    if when is None and (relative := _RELATIVE.fullmatch(text)):
        seconds = int(relative.group(1)) * _RELATIVE_SECONDS[relative.group(2).lower()]
        when = (now or datetime.now(UTC)) - timedelta(seconds=seconds)
        when = when.replace(microsecond=0)
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.isoformat()
