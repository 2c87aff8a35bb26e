"""What the chain does to a provider's results before answering: filter, deduplicate, trim.

Providers differ in how well they honour domain filters and how often they repeat a page under
slightly different URLs; applying the same rules to every provider's output makes the answer
depend on the query, not on which provider happened to answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcp_server_web.providers.base import SearchQuery, SearchResult

# Query parameters that identify a click, not a page.
_TRACKING_PREFIXES = ("utm_",)
_TRACKING_PARAMS = frozenset({"fbclid", "gclid", "msclkid", "mc_cid", "mc_eid", "ref_src", "igshid"})


def normalize_domain(raw: str) -> str:
    """A domain filter as the bare host: "https://www.Example.com/docs" -> "example.com"."""
    text = raw.strip().lower()
    if "://" in text:
        text = urlsplit(text).hostname or ""
    text = text.split("/", 1)[0].split(":", 1)[0].strip(".")
    return text.removeprefix("www.")


def host_of(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.lower().rstrip(".")


def in_domains(host: str, domains: Iterable[str]) -> bool:
    """True when host is one of domains or a subdomain of one."""
    bare = host.removeprefix("www.")
    return any(bare == domain or bare.endswith("." + domain) for domain in domains)


def normalize_url(url: str) -> str:
    """The identity of a result page: scheme-less, lower-case host without www, no fragment,
    no tracking parameters, no trailing slash."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.")
    port = f":{parts.port}" if parts.port and parts.port not in (80, 443) else ""
    query = urlencode(
        [
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if k.lower() not in _TRACKING_PARAMS and not k.lower().startswith(_TRACKING_PREFIXES)
        ]
    )
    path = parts.path.rstrip("/") or ""
    return urlunsplit(("", host + port, path, query, ""))


def refine(results: Sequence[SearchResult], query: SearchQuery) -> list[SearchResult]:
    """Drop results outside the domain filters, non-http(s) URLs and duplicates; keep max_results."""
    include = [normalize_domain(d) for d in query.include_domains if normalize_domain(d)]
    exclude = [normalize_domain(d) for d in query.exclude_domains if normalize_domain(d)]
    kept: list[SearchResult] = []
    seen: set[str] = set()
    for result in results:
        if urlsplit(result.url).scheme not in ("http", "https"):
            continue
        host = host_of(result.url)
        if not host or (include and not in_domains(host, include)) or in_domains(host, exclude):
            continue
        identity = normalize_url(result.url)
        if identity in seen:
            continue
        seen.add(identity)
        kept.append(result)
        if len(kept) == query.max_results:
            break
    return kept
