"""What an API's response is, as the model gets it: its body parsed or decoded within limits,
the key headers, and the text written around it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from http import HTTPStatus
from typing import Any

from mcp_server_web.fetch import (
    ContentKind,
    FetchResponse,
    classify,
    decode_text,
    describe_size,
)
from mcp_server_web.server.boundary import fence, one_line
from mcp_server_web.server.contract import TEXT_LIMIT, HttpRequestOutput

HEADER_VALUE_LIMIT = 8192
"""Most characters of one response header value kept (the whole header block is at most 100 KB)."""
# Response headers worth a line in the text: what an API client usually needs to act on
# (pagination, rate limits, auth challenges, redirects). All headers are in structured content.
_KEY_HEADERS = (
    "content-type",
    "content-length",
    "location",
    "link",
    "retry-after",
    "www-authenticate",
    "etag",
    "last-modified",
)
_RATE_LIMIT_HEADER = re.compile(r"^(x-)?ratelimit-", re.I)
_BACKTICKS = re.compile(r"`{3,}")


@dataclass(frozen=True)
class Interpreted:
    """What the response body is, as the model gets it."""

    output: HttpRequestOutput
    shown: str
    """The body as text for the model: pretty JSON, decoded text, or a one-line description."""
    is_json: bool
    notes: tuple[str, ...] = ()
    shows_body: bool = False
    """True when ``shown`` is the body itself (the server's words), False when it is our
    description of a body that is not shown (HEAD, empty, binary)."""


def interpret_response(response: FetchResponse, method: str, cap: int) -> Interpreted:
    """Parse, decode or describe the body of ``response`` (fetched with a cap of ``cap`` + 1)."""
    raw = response.body
    truncated = len(raw) > cap or _shorter_than_announced(response, method)
    raw = raw[:cap]
    notes: list[str] = []
    if truncated:
        notes.append(f"The body was cut at the {describe_size(cap)} limit; what follows is its start.")
    sniffed = classify(replace(response, body=raw))
    content_type = response.media_type or (sniffed.media_type if raw else "")
    body: Any = None
    is_json = False
    shows_body = False
    if method == "HEAD":
        shown = "(HEAD request: no body.)"
    elif not raw:
        shown = "(empty body)"
    elif sniffed.kind in (ContentKind.BINARY, ContentKind.PDF):
        shown = f"(binary body, {len(raw)} bytes, {sniffed.media_type}, not shown)"
    else:
        text = decode_text(raw, declared=response.charset, html=sniffed.kind is ContentKind.HTML)
        body, shown, shows_body = text, text, True
        if sniffed.kind is ContentKind.JSON:
            parsed = _parse_json(text)
            if parsed is not _NOT_JSON:
                body, is_json = parsed, True
                shown = json.dumps(parsed, indent=2, ensure_ascii=False)
            else:
                notes.append(
                    "The body is labelled JSON but does not parse"
                    + (" (it was cut at the size limit)." if truncated else "; shown as text.")
                )
    output = HttpRequestOutput(
        status=response.status,
        # Header values are the server's words outside any fence in structured content: one
        # bounded line each, like every remote string there (names are HTTP tokens already).
        headers={name: one_line(value, HEADER_VALUE_LIMIT) for name, value in response.headers.items()},
        body=body,
        final_url=response.final_url,
        content_type=content_type,
        truncated=truncated,
    )
    return Interpreted(output=output, shown=shown, is_json=is_json, notes=tuple(notes), shows_body=shows_body)


def _shorter_than_announced(response: FetchResponse, method: str) -> bool:
    """A plain (not content-encoded) body shorter than its Content-Length was cut short.

    Covers the one case the cap + 1 check cannot see: the raw-size check in the fetcher stopping
    before the decoded body passed the cap."""
    if method == "HEAD" or response.status in (204, 304) or response.headers.get("content-encoding"):
        return False
    try:
        announced = int(response.headers.get("content-length", ""))
    except ValueError:
        return False
    return announced > len(response.body)


_NOT_JSON = object()


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; a body with them is shown as text rather than as a value
    # that cannot be written back out as valid JSON in structured content.
    raise ValueError(f"{name} is not valid JSON")


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return _NOT_JSON


def render_response(answer: Interpreted, response: FetchResponse, notes: list[str]) -> str:
    """The text the model reads: status line and notes (ours), then, fenced as untrusted, what
    the server sent: its key headers and the body.

    Header values are fenced with the body because the server chooses them as freely (a
    WWW-Authenticate realm, a Link title). The reason phrase is ours, from the status code, never
    the one the server sent. A body that is not shown gets our description after the fence.
    """
    output = answer.output
    try:
        reason = HTTPStatus(output.status).phrase
    except ValueError:
        reason = ""
    lines = [f"HTTP {output.status} {reason}".rstrip()]
    if response.redirects:
        lines.append(f"Final URL: {output.final_url} (after {len(response.redirects)} redirect(s))")
    shown = answer.shown
    if len(shown) > TEXT_LIMIT:
        notes = [*notes, f"Showing the first {TEXT_LIMIT:,} of {len(shown):,} characters of the body."]
        shown = shown[:TEXT_LIMIT]
    lines.extend(f"[{note}]" for note in notes)
    remote = [f"{name}: {value}" for name, value in _key_headers(output.headers).items()]
    if answer.shows_body:
        if remote:
            remote.append("")
        if answer.is_json:
            # A code fence longer than any run of backticks inside, so the body cannot close it
            # early and turn the rest of its text into Markdown of its own.
            longest = max((len(run) for run in _BACKTICKS.findall(shown)), default=2)
            ticks = "`" * max(3, longest + 1)
            remote.extend([f"{ticks}json", shown, ticks])
        else:
            remote.append(shown)
    if remote:
        lines.extend(["", fence("\n".join(remote), source=output.final_url)])
    if not answer.shows_body:
        lines.extend(["", shown])
    return "\n".join(lines)


def _key_headers(headers: Mapping[str, str]) -> dict[str, str]:
    picked = {name: headers[name] for name in _KEY_HEADERS if name in headers}
    picked.update({name: value for name, value in headers.items() if _RATE_LIMIT_HEADER.match(name)})
    return picked
