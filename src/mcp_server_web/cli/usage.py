"""Today's search calls and benched keys, as doctor shows them.

doctor runs in a process of its own, and these figures are kept where the servers keep their
state: in Redis when MCP_WEB_REDIS_URL is set (read there directly, as every replica counts
them), else in the memory of the server that made the calls, so they are read from that
server's ``GET /healthz`` (over HTTP, on this machine, with a short deadline). What comes back
is another process's text: it is size-bounded, parsed strictly, and only known provider names,
whole numbers and a short printable reason are kept.
"""

from __future__ import annotations

import ipaddress
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from mcp_server_web.config import KNOWN_PROVIDERS, Settings
from mcp_server_web.server.http import HEALTH_PATH

ASK_TIMEOUT = 2.0
"""Seconds doctor waits for a running server's answer: a local server answers in milliseconds."""
MAX_HEALTH_BYTES = 64 * 1024
MAX_REASON_CHARS = 200


@dataclass(frozen=True, slots=True)
class ProviderUse:
    """One provider's figures, as a running server reported them."""

    calls_today: int
    daily_limit: int | None
    benched_seconds: int | None
    benched_reason: str


@dataclass(frozen=True, slots=True)
class ServerUsage:
    """What a running server said (``usage``), or why nothing could be read (``unavailable``)."""

    source: str
    usage: Mapping[str, ProviderUse]
    unavailable: str | None = None


def health_url(settings: Settings) -> str:
    """Where the HTTP server these settings describe answers /healthz, reached from this machine.

    A wildcard bind address (0.0.0.0, ::) is reached on loopback; a named bind address as it is.
    """
    host = settings.host.strip("[]")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None and address.is_unspecified:
        host = "::1" if address.version == 6 else "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{settings.port}{HEALTH_PATH}"


def read_server_usage(settings: Settings, transport: httpx.BaseTransport | None = None) -> ServerUsage:
    """Ask the running HTTP server for today's figures; never raises."""
    url = health_url(settings)
    try:
        # trust_env=False: a proxy set for the fetcher must not carry a request to our own server.
        with (
            httpx.Client(timeout=ASK_TIMEOUT, trust_env=False, transport=transport) as client,
            client.stream("GET", url) as response,
        ):
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_HEALTH_BYTES:
                    return ServerUsage(url, {}, f"{url} answered with more than {MAX_HEALTH_BYTES} bytes")
    except httpx.HTTPError as exc:
        return ServerUsage(url, {}, f"no server answered at {url} ({type(exc).__name__})")
    return ServerUsage(f"the server at {url}", *parse_health(url, response.status_code, body))


async def read_shared_usage(settings: Settings, names: tuple[str, ...], where: str) -> ServerUsage:
    """Read today's figures from the Redis the replicas share (where: that Redis, as shown)."""
    from mcp_server_web.providers import search_status
    from mcp_server_web.server.compose import state_backend

    state = state_backend(settings)
    try:
        status = await search_status(
            state, names, rps=settings.provider_rps, daily_limits=settings.provider_daily_limits
        )
        answered = state.shared_status == "ok"
    finally:
        await state.aclose()
    if not answered:
        return ServerUsage(where, {}, f"{where} did not answer")
    usage = {name: use for name, entry in status.items() if (use := _provider_use(entry)) is not None}
    return ServerUsage(where, usage)


def parse_health(url: str, status: int, body: bytes) -> tuple[dict[str, ProviderUse], str | None]:
    try:
        document = json.loads(body)
    except ValueError:
        return {}, f"{url} answered HTTP {status} with something that is not JSON"
    search = document.get("search") if isinstance(document, dict) else None
    if not isinstance(search, dict):
        return {}, f"{url} answered HTTP {status} without search figures (web_search may be off there)"
    usage: dict[str, ProviderUse] = {}
    for name in KNOWN_PROVIDERS:
        entry = search.get(name)
        if isinstance(entry, dict) and (use := _provider_use(entry)) is not None:
            usage[name] = use
    return usage, None


def _whole(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return int(value) if value >= 0 else None


def _provider_use(entry: Mapping[str, object]) -> ProviderUse | None:
    calls = _whole(entry.get("calls_today"))
    if calls is None:
        return None
    cooling = entry.get("cooling_down")
    seconds: int | None = None
    reason = ""
    if isinstance(cooling, dict):
        seconds = _whole(cooling.get("seconds"))
        raw = cooling.get("reason")
        if isinstance(raw, str):
            reason = "".join(c if c.isprintable() else " " for c in raw)[:MAX_REASON_CHARS]
    return ProviderUse(calls, _whole(entry.get("daily_limit")), seconds, reason)


def usage_lines(settings: Settings, chain: list[str], report: ServerUsage) -> list[str]:
    """doctor's lines on today's use of the providers in chain."""
    if report.unavailable is not None:
        return [f"  Today's calls and benched keys: not shown, {report.unavailable}."]
    lines = [f"  Today (UTC), as {report.source} counts them:"]
    for name in chain:
        use = report.usage.get(name)
        if use is None:
            lines.append(f"    {name}: not reported")
            continue
        of = f" of {use.daily_limit}" if use.daily_limit is not None else ""
        line = f"    {name}: {use.calls_today}{of} call(s)"
        if use.benched_seconds:
            line += (
                f"; not asked for another {use.benched_seconds} s ({use.benched_reason or 'cooling down'})"
            )
        lines.append(line)
    return lines
