"""Plumbing shared by the adapters that speak HTTP: their own (Brave, SearXNG, DuckDuckGo) or an
SDK's (Tavily, Exa).

Every provider request, the SDKs' included, goes over one shared client through ``send_and_read``,
which holds the rules for what comes back: redirects followed within the endpoint's origin only,
bodies read under one size cap. One request function maps every transport failure to a
``ProviderError`` the same way, so the adapters only decide what a status code or a body means
for their provider. The SDK adapters share the response recorder that gives back what their
SDKs drop (status, Retry-After).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import anyio
import httpx

from mcp_server_web.errors import HTTPStatusError, TooLarge
from mcp_server_web.fetch import ACCEPT_ENCODING, BodyDecoder, describe_size, too_large, valid_media_type
from mcp_server_web.providers.base import (
    ProviderError,
    SearchProvider,
    SearchQuery,
    retry_after_seconds,
    status_error,
)
from mcp_server_web.providers.results import normalize_domain


class HttpSearchProvider(SearchProvider):
    """An adapter that sends its own requests over the shared client.

    Subclasses pick the path and fields of the request and read a 200 answer; ``_error`` says
    what any other status means, and by default gives it the usual meaning (``status_error``).
    """

    key_header: ClassVar[str | None] = None
    """The request header that carries the API key, for a provider that takes one."""
    request_headers: ClassVar[Mapping[str, str]] = {}
    """Headers every request carries besides the key and our User-Agent (Accept, mostly)."""

    async def _request(
        self,
        method: Literal["GET", "POST"],
        path: str,
        query: SearchQuery,
        fields: Mapping[str, str | int],
        *,
        timeout: float,  # noqa: ASYNC109 - passed on to fetch
    ) -> httpx.Response:
        """Ask the configured endpoint plus ``path`` as an HTML form would: the query text (its
        domain filters as ``site:`` operators) as ``q``, then ``fields``, in the URL for GET and
        as the body for POST; with the key header, ``request_headers`` and our User-Agent.

        Any answer but 200 raises ``self._error(response)``."""
        if not self.config.base_url or (self.key_header and not self.config.api_key):
            # Nowhere to send the search or nothing to send it with: nothing is sent.
            missing = self.config.key_name if self.config.base_url else self.config.url_name
            raise ProviderError(
                "config", self.config.setup_hint or f"{self.title} is not configured: set {missing}."
            )
        form = {"q": query_with_sites(query), **fields}
        key = {self.key_header: self.config.api_key} if self.key_header and self.config.api_key else {}
        response = await fetch(
            self.http,
            self.title,
            method,
            self.config.base_url + path,
            params=form if method == "GET" else None,
            data={name: str(value) for name, value in form.items()} if method == "POST" else None,
            headers={**key, **self.request_headers, "User-Agent": self.config.user_agent},
            timeout=timeout,
            url_name=self.config.url_name,
        )
        if response.is_redirect:
            raise self._redirected(response)
        if response.status_code != 200:
            raise self._error(response)
        return response

    def _error(self, response: httpx.Response) -> ProviderError:
        return status_error(self.title, response.status_code, retry_after=retry_after(response))

    def _redirected(self, response: httpx.Response) -> ProviderError:
        """A redirect to another origin, which ``send_and_read`` did not follow. Usually the URL
        setting is http:// where the endpoint redirects to https://, or lacks a path prefix."""
        location = self.redactor.quote(response.headers.get("location", ""))
        return ProviderError(
            "config",
            f"{self.title} redirected the request to another address, {location} (HTTP "
            f"{response.status_code}); it was not followed: set {self.config.url_name} to the final address.",
            status=response.status_code,
        )


MAX_ANSWER_BYTES = 2 * 1024 * 1024
"""The most a provider's answer may be, decoded (and as received). A page of results is tens of KB
(a DuckDuckGo page, 20 Brave results), a few hundred at most (100 Exa results with highlights); 2 MB
leaves room for the verbose while a search's text, its JSON or HTML tree and the results built from
it stay within tens of MB, however many searches run at once."""
MAX_REDIRECTS = 3
"""Redirects followed within the endpoint's own origin (a trailing slash, a path prefix)."""
_ENCODING_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


async def fetch(
    http: httpx.AsyncClient,
    provider: str,
    method: str,
    url: str,
    *,
    timeout: float,  # noqa: ASYNC109 - the budget also sets httpx's per-phase timeouts
    params: Mapping[str, str | int] | None = None,
    data: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    url_name: str = "its URL",
) -> httpx.Response:
    """Send one request and read the whole answer (see ``send_and_read``) within ``timeout`` seconds.

    httpx's timeouts are per phase, so a server trickling bytes could outlast them; the outer
    deadline bounds the attempt as a whole.

    Any status comes back as a response; only transport failures raise: ``timeout`` when the
    budget ran out, ``bad_response`` when the answer was cut off, undecodable or too large (the
    provider did answer, so it is up but its answer is unusable), ``upstream`` when it could not
    be reached at all. Messages name the exception type, never its text: httpx puts URLs (and
    with them a SearXNG instance's credentials) in some of its messages.
    """
    try:
        request = http.build_request(
            method, url, params=params, data=data, headers=headers, timeout=httpx.Timeout(timeout)
        )
        with anyio.fail_after(timeout):
            return await send_and_read(http, request, provider)
    except (TimeoutError, httpx.TimeoutException):
        raise ProviderError("timeout", f"{provider} did not answer within {timeout:g} s.") from None
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        raise transport_error(provider, exc, url_name) from None


async def send_and_read(http: httpx.AsyncClient, request: httpx.Request, provider: str) -> httpx.Response:
    """Send ``request`` over ``http`` and return the answer with its body read and decoded.

    A redirect is followed only within the request's own origin, with the same headers (the
    key included), at most ``MAX_REDIRECTS`` times; one to any other origin comes back as it
    is, unfollowed: a key is never handed to an address the operator did not configure, and
    only the operator can tell whether the new one is right. Bodies are read through the fetch
    library's ``BodyDecoder``: at most ``MAX_ANSWER_BYTES`` received and as many decoded, so a
    gzip bomb or an endless body costs no more memory than that.

    Sending failures raise httpx's exceptions; an answer that cannot be read raises
    ``ProviderError("bad_response")``.
    """
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING  # only what BodyDecoder can bound
    for _ in range(MAX_REDIRECTS + 1):
        response = await http.send(request, stream=True, follow_redirects=False)
        body = await _read_body(response, provider)
        following = response.next_request
        if following is None or _origin(following.url) != _origin(request.url):
            kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _ENCODING_HEADERS]
            return httpx.Response(
                response.status_code,
                headers=kept,
                content=body,
                request=request,
                extensions=response.extensions,
            )
        request = following
    raise ProviderError("bad_response", f"{provider} redirected the request more than {MAX_REDIRECTS} times.")


async def _read_body(response: httpx.Response, provider: str) -> bytes:
    cap = MAX_ANSWER_BYTES
    body = bytearray()
    received = 0
    try:
        decoder = BodyDecoder(response.headers.get("content-encoding"), cap)
        # aiter_raw: the bytes as they arrived; httpx's own decoders inflate without a bound.
        async for chunk in response.aiter_raw():
            received += len(chunk)
            if received > cap:
                raise too_large(cap)
            body += decoder.feed(chunk)
        body += decoder.flush()
    except TooLarge:
        raise ProviderError(
            "bad_response",
            f"{provider} sent an answer larger than the {describe_size(cap)} limit for a search answer.",
            status=response.status_code,
        ) from None
    except HTTPStatusError:  # the decoder's word for an encoding it cannot undo
        raise ProviderError(
            "bad_response",
            f"{provider} sent an answer whose encoding could not be decoded.",
            status=response.status_code,
        ) from None
    except httpx.TimeoutException:
        raise
    except httpx.TransportError as exc:
        raise ProviderError(
            "bad_response",
            f"{provider} sent an incomplete answer ({type(exc).__name__}).",
            status=response.status_code,
        ) from None
    finally:
        await response.aclose()
    return bytes(body)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


def transport_error(provider: str, exc: Exception, url_setting: str = "its URL") -> ProviderError:
    """A request that got no answer (timeouts aside): ``config`` when the endpoint is not an
    http(s) URL, which only the operator can fix in ``url_setting``; else ``upstream``, naming
    the exception by its type only (httpx messages hold URLs)."""
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return ProviderError(
            "config", f"{provider}'s endpoint is not a valid http(s) URL; check {url_setting}."
        )
    return ProviderError("upstream", f"Could not reach {provider} ({type(exc).__name__}).")


def retry_after(response: httpx.Response) -> float | None:
    """The answer's Retry-After in seconds, when it has a readable one."""
    return retry_after_seconds(response.headers.get("retry-after"))


def json_object(response: httpx.Response, provider: str) -> dict[str, Any]:
    """The body as a JSON object, or ProviderError("bad_response") saying what came instead."""
    try:
        data = json.loads(response.content)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError alike
        data = None
    if not isinstance(data, dict):
        label = response.headers.get("content-type")
        # Only a valid type/subtype is quoted: the header is the provider's (or its proxy's) words.
        media_type = "no content type"
        if label is not None:
            media_type = valid_media_type(label.split(";", 1)[0]) or "an invalid content type"
        raise ProviderError(
            "bad_response",
            f"{provider} answered HTTP {response.status_code} with {media_type} that is not a JSON object.",
            status=response.status_code,
        )
    return data


def url_and_title(item: Any) -> tuple[str, str] | None:
    """A JSON result's url and title, or None unless it is an object with a non-empty string
    url and a string title (a result without them is nothing to show)."""
    if not isinstance(item, dict):
        return None
    url, title = item.get("url"), item.get("title")
    if not isinstance(url, str) or not url or not isinstance(title, str):
        return None
    return url, title


def query_with_sites(query: SearchQuery) -> str:
    """The query text with the domain filters as ``site:`` operators, for providers without a
    domain parameter. Engines honour these unevenly; the chain filters the results anyway, so
    the operators only make it likelier that the page of results holds matching ones."""
    parts = [query.query.strip()]
    include = [d for d in map(normalize_domain, query.include_domains) if d]
    exclude = [d for d in map(normalize_domain, query.exclude_domains) if d]
    if len(include) == 1:
        parts.append(f"site:{include[0]}")
    elif include:
        parts.append("(" + " OR ".join(f"site:{domain}" for domain in include) + ")")
    parts.extend(f"-site:{domain}" for domain in exclude)
    return " ".join(parts)


@dataclass
class Exchange:
    """What the response hook saw of the current call's answer."""

    status: int | None = None
    retry_after: float | None = None


# Per task, so concurrent searches over one client never read each other's answer.
_current_exchange: ContextVar[Exchange | None] = ContextVar("provider_exchange", default=None)


async def _note_response(response: httpx.Response) -> None:
    exchange = _current_exchange.get()
    if exchange is not None:
        exchange.status = response.status_code
        exchange.retry_after = retry_after(response)


class SharedTransport(httpx.AsyncBaseTransport):
    """The transport of an SDK's client: it sends over the shared provider client, so an SDK's
    requests get the same proxy settings, redirect rule and answer cap (``send_and_read``) as those
    of the adapters that speak HTTP themselves."""

    def __init__(self, http: httpx.AsyncClient, provider: str) -> None:
        self._http = http
        self._provider = provider

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await send_and_read(self._http, request, self._provider)


def sdk_client(
    http: httpx.AsyncClient, provider: str, base_url: str, headers: Mapping[str, str], timeout: float
) -> httpx.AsyncClient:
    """An httpx client to hand a provider SDK. Its requests go over ``http`` (``SharedTransport``;
    closing it leaves ``http`` open), and its response hook notes each answer's status and
    Retry-After in the current ``recording()``, which the SDKs' errors do not keep."""
    return httpx.AsyncClient(
        base_url=base_url,
        headers=headers,
        timeout=timeout,
        transport=SharedTransport(http, provider),
        trust_env=False,  # the shared client applies the proxy settings
        event_hooks={"response": [_note_response]},
    )


@contextmanager
def recording() -> Iterator[Exchange]:
    """What a ``recording_client`` receives in this task while the block runs."""
    exchange = Exchange()
    token = _current_exchange.set(exchange)
    try:
        yield exchange
    finally:
        _current_exchange.reset(token)
