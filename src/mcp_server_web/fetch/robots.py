"""robots.txt policy (RFC 9309), fetched once per origin and cached.

Parsing and matching are protego's (longest match, Allow wins ties, wildcards, our product
token). What this module adds is the RFC's treatment of fetch outcomes: 2xx is parsed (the first
500 KiB of it), 4xx means everything is allowed, 5xx means everything is disallowed. A host that
cannot be reached at all, or does not answer in time, is reported as that error: the page could
not be fetched either, and "robots.txt disallows it" would point the user the wrong way.

robots.txt is read inside the time limit of the fetch that needs it, and gives up a little before
that limit runs out, so a robots.txt that never answers is reported as exactly that.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
from cachetools import TTLCache
from protego import Protego

from mcp_server_web.config import ROBOTS_TOKEN
from mcp_server_web.errors import (
    BlockedAddress,
    FetchTimeout,
    HTTPStatusError,
    InvalidURL,
    RobotsDisallowed,
)
from mcp_server_web.fetch.cache import SingleFlight
from mcp_server_web.fetch.client import Fetcher

logger = logging.getLogger(__name__)

# RFC 9309 2.5: crawlers must parse at least 500 KiB of a robots.txt.
ROBOTS_MAX_BYTES = 500 * 1024
_QUOTED_RULE_MAX = 100
ROBOTS_TIMEOUT = 10.0
ROBOTS_TTL = 3600.0
ROBOTS_MAX_ORIGINS = 2048
# Share of the time left to the calling fetch that robots.txt may use: the rest is headroom for
# the robots.txt timeout to fire first, with its own message.
_SHARE_OF_TIME_LEFT = 0.95
_MIN_TIMEOUT = 0.01
_TURN_OFF = "Set MCP_WEB_RESPECT_ROBOTS=false to ignore robots.txt."


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """What one origin's robots.txt says, or what the RFC says to assume when it could not be read."""

    robots_url: str
    parser: Protego | None = None
    text: str = ""
    unavailable_reason: str | None = None
    """Set when the file could not be read (5xx, timeout, no connection): everything is disallowed."""

    def refusal(self, url: str, token: str) -> str | None:
        """A sentence saying why url may not be fetched, or None when it may."""
        if self.unavailable_reason is not None:
            return (
                f"{self.robots_url} could not be read ({self.unavailable_reason}); RFC 9309 says to treat an "
                f"unreachable robots.txt as disallowing everything. {_TURN_OFF}"
            )
        if self.parser is None or self.parser.can_fetch(url, token):
            return None
        path = _path_of(url)
        rule = _matching_disallow(self.text, path)
        if rule and len(rule) > _QUOTED_RULE_MAX:
            rule = rule[:_QUOTED_RULE_MAX] + "…"  # the site writes it: enough to recognise it
        matched = f" (rule '{rule}')" if rule else ""
        return f"{self.robots_url} disallows {path} for user agent '{token}'{matched}. {_TURN_OFF}"


def _path_of(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _matching_disallow(text: str, path: str) -> str | None:
    """The longest Disallow line whose literal prefix matches path: shown to the user as the reason.

    protego decides; this only finds a line to quote, so a wildcard rule is matched by the
    part before its first wildcard.
    """
    best: str | None = None
    best_length = -1
    for line in text.splitlines():
        field, _, value = line.split("#", 1)[0].partition(":")
        if field.strip().lower() != "disallow":
            continue
        pattern = value.strip()
        literal = pattern.split("*", 1)[0].rstrip("$")
        if pattern and path.startswith(literal) and len(pattern) > best_length:
            best, best_length = f"Disallow: {pattern}", len(pattern)
    return best


def robots_url_for(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/robots.txt"


class RobotsPolicy:
    """Answers "may we fetch this URL?" for our product token, one robots.txt download per origin."""

    def __init__(
        self,
        fetcher: Fetcher,
        token: str = ROBOTS_TOKEN,
        ttl: float = ROBOTS_TTL,
        timeout: float = ROBOTS_TIMEOUT,
    ) -> None:
        self._fetcher = fetcher
        self._timeout = timeout
        self._token = token
        self._rules: TTLCache[str, RobotsRules] = TTLCache(maxsize=ROBOTS_MAX_ORIGINS, ttl=ttl)
        self._flights: SingleFlight[RobotsRules] = SingleFlight()

    async def check(self, url: str) -> None:
        """Raise RobotsDisallowed when robots.txt forbids url; return quietly when it allows it."""
        robots_url = robots_url_for(url)
        rules = self._rules.get(robots_url)
        if rules is None:
            rules, _ = await self._flights.run(robots_url, lambda: self._load(robots_url))
        reason = rules.refusal(url, self._token)
        if reason is not None:
            raise RobotsDisallowed(reason)

    async def _load(self, robots_url: str) -> RobotsRules:
        rules = await self._download(robots_url)
        self._rules[robots_url] = rules
        return rules

    def _time_allowed(self) -> float:
        left = anyio.current_effective_deadline() - anyio.current_time()
        return max(_MIN_TIMEOUT, min(self._timeout, left * _SHARE_OF_TIME_LEFT))

    async def _download(self, robots_url: str) -> RobotsRules:
        timeout = self._time_allowed()
        try:
            response = await self._fetcher.fetch(
                robots_url,
                accept="text/plain, */*;q=0.1",
                max_bytes=ROBOTS_MAX_BYTES,
                truncate=True,
                timeout=timeout,
            )
        except FetchTimeout:
            # Not cached, like any failure to reach the host: the next call tries again.
            raise FetchTimeout(
                f"{robots_url} did not answer within {timeout:.3g} seconds (robots.txt is read before "
                f"a site's first page); raise MCP_WEB_TIMEOUT to allow slower sites. {_TURN_OFF}"
            ) from None
        except BlockedAddress:
            # The site's own host (or where its robots.txt points) is off limits: that refusal,
            # not "robots.txt unavailable", is what the user needs to hear.
            raise
        except (HTTPStatusError, InvalidURL) as exc:
            if isinstance(exc, HTTPStatusError) and exc.status is None:
                # The host cannot be reached at all: that, not robots.txt, is the user's problem.
                raise
            return RobotsRules(robots_url, unavailable_reason=exc.message)
        if response.status >= 500:
            return RobotsRules(robots_url, unavailable_reason=f"the server answered {response.status}")
        if response.status >= 400:
            # RFC 9309 2.3.1.3: "unavailable" (4xx) means no restrictions.
            return RobotsRules(robots_url)
        if response.status >= 300:
            reason = f"it answered {response.status} without a usable redirect"
            return RobotsRules(robots_url, unavailable_reason=reason)
        text = response.body.decode("utf-8", errors="replace")
        logger.debug("robots.txt %s: %d bytes", robots_url, len(response.body))
        # Half a megabyte of wildcard rules takes protego ~0.4 s: off the event loop, which serves
        # every other call meanwhile.
        parser = await anyio.to_thread.run_sync(Protego.parse, text)
        return RobotsRules(robots_url, parser=parser, text=text)
