"""robots.txt policy (RFC 9309), fetched once per origin and cached.

Parsing and matching are protego's (longest match, Allow wins ties, wildcards, our product
token). What this module adds is the RFC's treatment of fetch outcomes: 2xx is parsed (the first
500 KiB of it), 4xx means everything is allowed, 5xx means everything is disallowed. A host that
cannot be reached at all, or does not answer in time, is reported as that error: the page could
not be fetched either, and "robots.txt disallows it" would point the user the wrong way.

robots.txt is read inside the time limit of the fetch that needs it, and gives up a little before
that limit runs out, so a robots.txt that never answers is reported as exactly that.

The cache of parsed files is bounded by bytes, measured: protego keeps a few hundred bytes of
objects per rule (half a megabyte of wildcard rules is ~40 MB parsed), and the decoded text is not
kept at all (one astral character makes CPython store all of it at 4 bytes a character), only
the Disallow values, as UTF-8, to quote the rule that refused a URL. A file whose parsed rules
are larger than the whole cache is obeyed but not kept: it is read again when next needed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
from protego import Protego

from mcp_server_web.errors import (
    BlockedAddress,
    FetchTimeout,
    HTTPStatusError,
    InvalidURL,
    RobotsDisallowed,
)
from mcp_server_web.fetch.config import admission_scope
from mcp_server_web.fetch.net.client import Fetcher
from mcp_server_web.identity import ROBOTS_TOKEN
from mcp_server_web.state import KeyValueStore, MemoryState, StateBackend

logger = logging.getLogger(__name__)

# RFC 9309 2.5: crawlers must parse at least 500 KiB of a robots.txt.
ROBOTS_MAX_BYTES = 500 * 1024
_QUOTED_RULE_MAX = 100
ROBOTS_TIMEOUT = 10.0
ROBOTS_TTL = 3600.0
ROBOTS_CACHE_BYTES = 16 * 1024 * 1024
"""Default byte bound of the cache of parsed robots.txt files (FetchService passes its own share)."""
# Share of the time left to the calling fetch that robots.txt may use: the rest is headroom for
# the robots.txt timeout to fire first, with its own message.
_SHARE_OF_TIME_LEFT = 0.95
_MIN_TIMEOUT = 0.01


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """What one origin's robots.txt says, or what the RFC says to assume when it could not be read."""

    robots_url: str
    parser: Protego | None = None
    disallows: bytes = b""
    """The file's Disallow values, one a line, UTF-8: only to quote the rule that refused a URL."""
    unavailable_reason: str | None = None
    """Set when the file could not be read (5xx, timeout, no connection): everything is disallowed."""

    def refusal(self, url: str, token: str) -> str | None:
        """A sentence saying why url may not be fetched, or None when it may."""
        if self.unavailable_reason is not None:
            return (
                f"{self.robots_url} could not be read ({self.unavailable_reason}); RFC 9309 says to treat an "
                f"unreachable robots.txt as disallowing everything."
            )
        if self.parser is None or self.parser.can_fetch(url, token):
            return None
        path = _path_of(url)
        rule = _matching_disallow(self.disallows.decode("utf-8", errors="replace"), path)
        if rule and len(rule) > _QUOTED_RULE_MAX:
            rule = rule[:_QUOTED_RULE_MAX] + "…"  # the site writes it: enough to recognise it
        matched = f" (rule '{rule}')" if rule else ""
        return f"{self.robots_url} disallows {path} for user agent '{token}'{matched}."


def _path_of(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _matching_disallow(disallows: str, path: str) -> str | None:
    """The longest Disallow value that matches path (RFC 9309 wildcards): shown as the reason.

    protego decides; this only finds a line to quote, comparing both sides percent-decoded.
    """
    best: str | None = None
    decoded_path = unquote(path)
    for pattern in disallows.splitlines():
        if (best is None or len(pattern) > len(best)) and _pattern_matches(unquote(pattern), decoded_path):
            best = pattern
    return None if best is None else f"Disallow: {best}"


def _pattern_matches(pattern: str, path: str) -> bool:
    anchored = pattern.endswith("$")
    pieces = (pattern[:-1] if anchored else pattern).split("*")
    if not path.startswith(pieces[0]):
        return False
    if len(pieces) == 1:
        return path == pieces[0] if anchored else True
    position = len(pieces[0])
    for piece in pieces[1:-1]:
        found = path.find(piece, position)
        if found == -1:
            return False
        position = found + len(piece)
    last = pieces[-1]
    if anchored:
        return len(path) - len(last) >= position and path.endswith(last)
    return path.find(last, position) != -1


def _disallow_values(text: str) -> bytes:
    values: dict[str, None] = {}
    for line in text.splitlines():
        field, _, value = line.split("#", 1)[0].partition(":")
        if field.strip().lower() == "disallow" and (pattern := value.strip()):
            values[pattern] = None
    return "\n".join(values).encode("utf-8")


def _parsed(
    robots_url: str, text: str, token: str, measure: Callable[[str, RobotsRules], int]
) -> tuple[RobotsRules, int]:
    """The rules of a downloaded robots.txt and the bytes they keep alive (CPU-bound: off the loop)."""
    parser = Protego.parse(text)
    # protego builds its index for our token on the first query: built here, it is measured too.
    parser.can_fetch(robots_url.removesuffix("robots.txt"), token)
    rules = RobotsRules(robots_url, parser=parser, disallows=_disallow_values(text))
    return rules, measure(robots_url, rules)


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
        max_bytes: int = ROBOTS_CACHE_BYTES,
        state: StateBackend | None = None,
    ) -> None:
        state = MemoryState() if state is None else state
        self._fetcher = fetcher
        self._timeout = timeout
        self._token = token
        self._rules = state.store("robots", ttl=ttl, max_bytes=max_bytes)
        self._flights = state.flight("robots")
        # Rules are read under the fetcher's policy and user agent: a policy that may not reach a
        # host must not read (nor quote) the robots.txt another policy read there.
        self._scope = admission_scope(fetcher.config)

    @property
    def cache(self) -> KeyValueStore:
        return self._rules

    async def check(self, url: str) -> None:
        """Raise RobotsDisallowed when robots.txt forbids url; return quietly when it allows it."""
        robots_url = robots_url_for(url)
        key = (self._scope, robots_url)
        rules: RobotsRules | None = await self._rules.get(key)
        if rules is None:
            rules = (await self._flights.run(key, lambda: self._load(robots_url)))[0]
        reason = rules.refusal(url, self._token)
        if reason is not None:
            raise RobotsDisallowed(reason, parameters=("respect_robots",))

    async def _load(self, robots_url: str) -> RobotsRules:
        rules, size = await self._download(robots_url)
        await self._rules.put((self._scope, robots_url), rules, size=size)
        return rules

    def _time_allowed(self) -> float:
        left = anyio.current_effective_deadline() - anyio.current_time()
        return max(_MIN_TIMEOUT, min(self._timeout, left * _SHARE_OF_TIME_LEFT))

    async def _download(self, robots_url: str) -> tuple[RobotsRules, int | None]:
        """The rules, and their size in the cache when already measured."""
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
                "a site's first page).",
                parameters=("timeout", "respect_robots"),
            ) from None
        except BlockedAddress:
            # The site's own host (or where its robots.txt points) is off limits: that refusal,
            # not "robots.txt unavailable", is what the user needs to hear.
            raise
        except (HTTPStatusError, InvalidURL) as exc:
            if isinstance(exc, HTTPStatusError) and exc.status is None:
                # The host cannot be reached at all: that, not robots.txt, is the user's problem.
                raise
            return RobotsRules(robots_url, unavailable_reason=exc.message), None
        if response.status >= 500:
            return RobotsRules(robots_url, unavailable_reason=f"the server answered {response.status}"), None
        if response.status >= 400:
            # RFC 9309 2.3.1.3: "unavailable" (4xx) means no restrictions.
            return RobotsRules(robots_url), None
        if response.status >= 300:
            reason = f"it answered {response.status} without a usable redirect"
            return RobotsRules(robots_url, unavailable_reason=reason), None
        text = response.body.decode("utf-8", errors="replace")
        logger.debug("robots.txt %s: %d bytes", robots_url, len(response.body))
        # Half a megabyte of wildcard rules takes protego ~0.4 s (and measuring them a little
        # more): off the event loop, which serves every other call meanwhile.
        # Text and rules cross in a box that is emptied on both sides: an idle anyio worker thread
        # keeps its last call's function, arguments and result alive until its next call (up to
        # 10 s), and tens of MB of parsed rules must not outlive the cache's decision to drop them.
        box: list[Any] = [text]
        token, scope, store = self._token, self._scope, self._rules

        def measure(url: str, rules: RobotsRules) -> int:
            return store.measure((scope, url), rules)

        await anyio.to_thread.run_sync(lambda: box.append(_parsed(robots_url, box.pop(), token, measure)))
        rules: tuple[RobotsRules, int] = box.pop()
        return rules
