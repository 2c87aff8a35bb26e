"""FetchConfig: what the fetch library needs to know, and nothing about where it came from.

The server builds one from its Settings (server/compose.py); a library caller builds one by hand,
and ``FetchConfig()`` is a sensible start: public addresses only, robots.txt obeyed, 30 seconds,
10 MB per response.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from dataclasses import dataclass

from mcp_server_web.identity import DEFAULT_USER_AGENT, ROBOTS_TOKEN

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


_MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class FetchConfig:
    """The limits and policy of one Fetcher and the FetchService on top of it."""

    timeout: float = 30.0
    """Seconds one download may take, robots.txt and redirects included; a conversion gets as
    long again, and a PDF's text extraction half of it."""
    max_response_bytes: int = 10 * _MB
    """Cap on a response body after decompression."""
    user_agent: str = DEFAULT_USER_AGENT
    respect_robots: bool = True
    """Obey robots.txt (read once per origin, before its first page)."""
    robots_token: str = ROBOTS_TOKEN
    """The name robots.txt User-agent lines are matched against."""
    proxy: str | None = None
    """Outbound proxy for http and https; None falls back to HTTP(S)_PROXY / ALL_PROXY."""
    allow_private: bool = False
    """Turn the address policy off: loopback, private and link-local destinations allowed."""
    allow_cidrs: tuple[IPNetwork, ...] = ()
    """Ranges allowed although the address policy would refuse them."""
    cache_max_bytes: int = 128 * _MB
    """What the documents, responses and robots.txt rules cached together may hold."""
    cache_ttl: float = 900.0
    """Seconds a downloaded response and its documents stay cached."""
    pdf_max_pages: int = 100
    """PDF pages converted at most."""


ADMISSION = (
    "allow_private",
    "allow_cidrs",
    "respect_robots",
    "robots_token",
    "user_agent",
    "max_response_bytes",
)
"""The FetchConfig fields that decide whether a page may be read and what is asked of its site:
the address policy and its allowed ranges, robots.txt and the names it is read for, the user agent
(sites answer by it), and the response cap. A document admitted under other values may be one
this config would refuse. Limits of time and of the cache only bound the work, and are left out."""


def admission_scope(config: FetchConfig) -> str:
    """12 hex digits naming config's admission policy (``ADMISSION``), the same in every process.

    What a FetchService keeps (documents, responses, single-flight, robots.txt rules) is kept
    under it: deployments of different policies sharing one Redis, or a deployment restarted with
    a tightened policy over the entries of its former self, never find each other's documents.
    """
    values = {name: getattr(config, name) for name in ADMISSION}
    values["allow_cidrs"] = sorted(str(network) for network in config.allow_cidrs)
    text = json.dumps(values, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:12]
