"""Fetcher: the one outbound HTTP path of the project.

Everything that leaves the machine goes through ``Fetcher.fetch``, which is where the safety rules
live: strict URL parsing, the address policy checked at connection time with DNS pinning, redirects
followed by hand (each hop re-vetted and passed to an optional hop check such as robots.txt), a
total deadline, and a body size cap that holds after decompression.
The network layer it sends through (DNS pinning, proxies) is in transport.py.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import TracebackType
from typing import Self

import anyio
import httpcore
import httpx

from mcp_server_web.errors import FetchTimeout, HTTPStatusError, InvalidArgument
from mcp_server_web.fetch.config import FetchConfig
from mcp_server_web.fetch.doc.sniff import valid_media_type
from mcp_server_web.fetch.net.addresses import AddressPolicy, literal_ip
from mcp_server_web.fetch.net.decode import ACCEPT_ENCODING, BodyDecoder, too_large
from mcp_server_web.fetch.net.proxy import ProxyRoutes
from mcp_server_web.fetch.net.resolution import Resolver, SystemResolver, vet_host
from mcp_server_web.fetch.net.transport import GuardedTransport
from mcp_server_web.fetch.net.urls import parse_url, resolve_redirect
from mcp_server_web.fetch.types import DownloadProgress, FetchResponse, HopCheck

logger = logging.getLogger(__name__)

DEFAULT_ACCEPT = "text/markdown, text/html;q=0.9, */*;q=0.1"
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
PROGRESS_STEP = 64 * 1024
"""Bytes between two progress reports, so a fast download does not flood the client."""
CONNECT_TIMEOUT_CAP = 10.0
MAX_HEADER_BYTES = 100 * 1024
"""What httpcore lets h11 buffer for one incomplete event (the header block, a chunk header):
AsyncHTTP11Connection.MAX_INCOMPLETE_EVENT_SIZE in httpcore 1.0. Only used to explain the refusal."""
# h11's words when that buffer overflows (h11 0.16, _connection.py).
_HEADER_OVERFLOW = "Receive buffer too long"
_COMPLAINT_LIMIT = 100

# Headers the caller may not set: they would let a request lie about its framing or body
# encoding (which our decoder relies on), or pick the virtual host behind the vetted address.
CONTROLLED_HEADERS = frozenset(
    {
        "host",
        "accept-encoding",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "proxy-authorization",
        "proxy-connection",
    }
)
# What a request keeps when a redirect sends it to another origin: headers that say what the
# client can read, and nothing else. Whatever else a caller set may be a credential for the first
# origin (Authorization, Cookie, X-Api-Key, X-Auth-Token, Api-Key, or a name no list can foresee),
# and an ETag or date in If-None-Match/If-Modified-Since belongs to the first origin's resource.
# A body is never resent to another origin either: such a 307/308 is returned, not followed.
_CROSS_ORIGIN_HEADERS = frozenset(
    {"accept", "accept-encoding", "accept-language", "cache-control", "pragma", "user-agent"}
)
_BODY_HEADERS = frozenset({"content-type", "content-encoding", "content-language", "content-location"})


# --------------------------------------------------------------------------------------------
# Fetcher
# --------------------------------------------------------------------------------------------


class Fetcher:
    """Fetches URLs under the address policy, the size cap and the time limit of its FetchConfig.

    Use as ``async with Fetcher(FetchConfig()) as fetcher`` (or call ``aclose()``). ``resolver`` and
    ``network_backend`` are for tests; ``environ`` stands in for os.environ when reading the
    standard proxy variables.
    """

    def __init__(
        self,
        config: FetchConfig,
        *,
        resolver: Resolver | None = None,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._config = config
        self._policy = AddressPolicy(allow_private=config.allow_private, allow_cidrs=config.allow_cidrs)
        self._resolver = resolver or SystemResolver()
        self._routes = ProxyRoutes.configured(config.proxy, environ)
        self._transport = GuardedTransport(
            policy=self._policy,
            resolver=self._resolver,
            backend=network_backend or httpcore.AnyIOBackend(),
            routes=self._routes,
        )
        self._client = httpx.AsyncClient(
            transport=self._transport,
            follow_redirects=False,  # we follow them, re-vetting every hop
            trust_env=False,  # proxies are routed above; no .netrc or other ambient state
            cookies=_refuse_all_cookies(),  # one agent's fetches must not leak state into another's
            headers={"User-Agent": config.user_agent},
        )

    @property
    def config(self) -> FetchConfig:
        return self._config

    @property
    def policy(self) -> AddressPolicy:
        return self._policy

    @property
    def resolver(self) -> Resolver:
        return self._resolver

    @property
    def routes(self) -> ProxyRoutes:
        """Which outbound proxy each URL goes through (a browser's proxy follows the same)."""
        return self._routes

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        accept: str = DEFAULT_ACCEPT,
        max_bytes: int | None = None,
        truncate: bool = False,
        timeout: float | None = None,  # noqa: ASYNC109 - also sets httpx's per-phase timeouts
        on_progress: DownloadProgress | None = None,
        hop_check: HopCheck | None = None,
    ) -> FetchResponse:
        """Request url, following up to 5 redirects, and return the complete decoded response.

        Any status is returned (4xx/5xx included); failures to get a response raise typed errors:
        InvalidURL, BlockedAddress, FetchTimeout (``timeout`` seconds, default the config's,
        for everything including redirects), TooLarge (body over ``max_bytes`` after
        decompression, default the config's ``max_response_bytes``; with ``truncate=True`` the body is cut
        there instead), HTTPStatusError (cannot connect, broken redirect, bad encoding).
        A redirect to another origin carries only the headers of _CROSS_ORIGIN_HEADERS, and one
        that would resend a body to another origin is returned as the answer, unfollowed.
        ``hop_check`` is awaited with every URL before it is requested; literal IP hosts have
        been vetted by then, host names are vetted when the connection is opened.
        """
        limit = self._config.timeout if timeout is None else timeout
        cap = self._config.max_response_bytes if max_bytes is None else max_bytes
        start = parse_url(url)
        logger.debug("fetch %s %s", method, start)
        try:
            with anyio.fail_after(limit):
                return await self._follow(
                    start,
                    method=method.upper(),
                    headers=headers,
                    content=content,
                    accept=accept,
                    cap=cap,
                    truncate=truncate,
                    limit=limit,
                    on_progress=on_progress,
                    hop_check=hop_check,
                )
        except TimeoutError:
            raise FetchTimeout(
                f"fetching {start} took longer than the {limit:g}-second limit.", parameters=("timeout",)
            ) from None

    async def _follow(
        self,
        start: httpx.URL,
        *,
        method: str,
        headers: Mapping[str, str] | None,
        content: bytes | None,
        accept: str,
        cap: int,
        truncate: bool,
        limit: float,
        on_progress: DownloadProgress | None,
        hop_check: HopCheck | None,
    ) -> FetchResponse:
        current = start
        request_headers = _request_headers(headers, accept)
        redirects: list[str] = []
        for hop in range(MAX_REDIRECTS + 1):
            address = literal_ip(current.host)
            if address is not None:
                self._policy.check(address, current.host)
            if hop_check is not None:
                await hop_check(str(current))
            async with self._exchange(current, method, request_headers, content, limit) as response:
                status = response.status_code
                if status in REDIRECT_STATUSES:
                    location = response.headers.get("location")
                    if location is None:
                        raise HTTPStatusError(
                            f"{current} answered {status} (a redirect) without a Location header.", status
                        )
                    target = resolve_redirect(current, location)
                    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
                        method, content = "GET", None
                        request_headers = _without(request_headers, _BODY_HEADERS)
                    elsewhere = _origin(target) != _origin(current)
                    if elsewhere and content is not None:
                        # The same request, body included, asked for at another origin (a 307 or
                        # 308; a 301 or 302 after PUT, PATCH or DELETE). Resending it would hand
                        # the body (a password, a token) to a host the caller never named;
                        # dropping it would change the request. Neither: the redirect itself is
                        # the answer, and the caller decides. A target that is or resolves to a
                        # refused address is still refused as such, as it would be when followed.
                        await vet_host(target.host, _port(target), self._resolver, self._policy)
                        logger.debug("not following %d %s -> %s with a body", status, current, target)
                        body = await _read_body(response, current, method, cap, truncate, on_progress)
                        return _fetch_response(start, current, response, body, redirects)
                    redirects.append(str(current))
                    if hop == MAX_REDIRECTS:
                        raise HTTPStatusError(
                            f"too many redirects (more than {MAX_REDIRECTS}) starting from {start}.", status
                        )
                    if elsewhere:
                        request_headers = _only(request_headers, _CROSS_ORIGIN_HEADERS)
                    logger.debug("redirect %d %s -> %s", status, current, target)
                    current = target
                    continue
                body = await _read_body(response, current, method, cap, truncate, on_progress)
                return _fetch_response(start, current, response, body, redirects)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    @asynccontextmanager
    async def _exchange(
        self,
        url: httpx.URL,
        method: str,
        headers: httpx.Headers,
        content: bytes | None,
        limit: float,
    ) -> AsyncIterator[httpx.Response]:
        """One request; the response body is read inside the block, network errors translated."""
        timeouts = httpx.Timeout(connect=min(CONNECT_TIMEOUT_CAP, limit), read=limit, write=limit, pool=limit)
        with _translate_errors(url, limit):
            async with self._client.stream(
                method, url, headers=headers, content=content, timeout=timeouts
            ) as response:
                yield response


def _refuse_all_cookies() -> CookieJar:
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


def _request_headers(headers: Mapping[str, str] | None, accept: str) -> httpx.Headers:
    merged = httpx.Headers({"Accept": accept})
    for name, value in (headers or {}).items():
        if name.lower() not in CONTROLLED_HEADERS:
            merged[name] = value
    # Only encodings decode.py can undo under the size cap.
    merged["Accept-Encoding"] = ACCEPT_ENCODING
    return merged


def _without(headers: httpx.Headers, names: frozenset[str]) -> httpx.Headers:
    return httpx.Headers([(k, v) for k, v in headers.multi_items() if k.lower() not in names])


def _only(headers: httpx.Headers, names: frozenset[str]) -> httpx.Headers:
    return httpx.Headers([(k, v) for k, v in headers.multi_items() if k.lower() in names])


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def _where(url: httpx.URL) -> str:
    host = url.raw_host.decode("ascii")
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{_port(url)}"


def _reason(exc: BaseException) -> str:
    """A plain reason from the OS error at the root of a network exception."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, ConnectionResetError):
            return "connection reset by the server"
        if isinstance(seen, OSError) and seen.errno:
            text = seen.strerror or os.strerror(seen.errno)
            return text[:1].lower() + text[1:]  # "Network is unreachable" mid-sentence
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


@contextmanager
def _translate_errors(url: httpx.URL, limit: float) -> Iterator[None]:
    where = _where(url)
    try:
        yield
    except httpx.ConnectTimeout:
        raise FetchTimeout(
            f"could not connect to {where} within {min(CONNECT_TIMEOUT_CAP, limit):g} seconds."
        ) from None
    except httpx.TimeoutException:
        raise FetchTimeout(
            f"{where} did not answer within the {limit:g}-second limit.", parameters=("timeout",)
        ) from None
    except httpx.ConnectError as exc:
        raise HTTPStatusError(f"could not connect to {where}: {_reason(exc)}.") from None
    except httpx.RemoteProtocolError as exc:
        if _HEADER_OVERFLOW in str(exc):
            raise HTTPStatusError(
                f"{where} sent more than {MAX_HEADER_BYTES // 1024} KB of response headers, "
                "far more than any real site needs, so the response was refused."
            ) from None
        raise HTTPStatusError(
            f"{where} sent a response that is not valid HTTP ({_complaint(exc)})."
        ) from None
    except httpx.LocalProtocolError as exc:
        raise InvalidArgument(f"the request could not be sent as given ({exc}).") from None
    except httpx.TransportError as exc:
        raise HTTPStatusError(f"the connection to {where} failed: {_reason(exc)}.") from None


def _complaint(exc: BaseException) -> str:
    """h11's complaint about a response without the bytes it quotes.

    h11 writes the offending line after a colon ("illegal status line: bytearray(b'...')"), and
    those bytes are the server's: text of its choosing in our error message, outside any fence.
    """
    complaint = str(exc).split(":", 1)[0].strip()
    return complaint[:_COMPLAINT_LIMIT] or "malformed response"


def _content_length(headers: httpx.Headers) -> int | None:
    raw = headers.get("content-length")
    if raw is None:
        return None
    try:
        # Repeated identical values ("100, 100") are allowed by RFC 9110 section 8.6.
        values = {int(part) for part in raw.split(",")}
    except ValueError:
        return None
    return values.pop() if len(values) == 1 else None


async def _read_body(
    response: httpx.Response,
    url: httpx.URL,
    method: str,
    cap: int,
    truncate: bool,
    on_progress: DownloadProgress | None,
) -> bytes:
    """Stream the raw body through the decoder, never holding more than the cap (plus a step)."""
    total = _content_length(response.headers)
    if method == "HEAD" or response.status_code in (204, 304):
        total = None  # Content-Length describes a body that is not sent
    elif total is not None and total > cap and not truncate:
        raise too_large(cap)
    decoder = BodyDecoder(response.headers.get("content-encoding"), cap, truncate=truncate)
    body = bytearray()
    received = reported = 0
    # aiter_raw: bytes as they arrived; httpx's own decoders would inflate without a bound.
    async for chunk in response.aiter_raw():
        received += len(chunk)
        body += decoder.feed(chunk)
        if decoder.truncated:
            break
        if received > cap:  # compressed bodies: the raw size is capped too
            if truncate:
                break
            raise too_large(cap)
        if on_progress is not None and received - reported >= PROGRESS_STEP:
            reported = received
            await on_progress(received, total)
    else:
        body += decoder.flush()
    if on_progress is not None and received != reported:
        await on_progress(received, total)
    if decoder.truncated or received > cap:
        logger.debug("body of %s cut at %d bytes", url, cap)
    return bytes(body)


def _parse_content_type(value: str | None) -> tuple[str, str | None]:
    """(media type, charset); a media type that is not a valid type/subtype is "" (no label)."""
    if not value:
        return "", None
    media_type, *params = value.split(";")
    charset = None
    for param in params:
        name, _, raw = param.partition("=")
        if name.strip().lower() == "charset":
            charset = raw.strip().strip('"').strip("'") or None
    return valid_media_type(media_type) or "", charset


def _fetch_response(
    start: httpx.URL, final: httpx.URL, response: httpx.Response, body: bytes, redirects: list[str]
) -> FetchResponse:
    headers: dict[str, str] = {}
    for name, value in response.headers.multi_items():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    media_type, charset = _parse_content_type(response.headers.get("content-type"))
    return FetchResponse(
        url=str(start),
        final_url=str(final),
        status=response.status_code,
        headers=headers,
        media_type=media_type,
        charset=charset,
        body=body,
        redirects=tuple(redirects),
    )
