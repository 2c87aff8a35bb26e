"""Hostile answers for any fake provider (``FakeProvider.misbehave``): what a compromised,
misconfigured or malicious endpoint can send in place of the provider's wire format.

Big bodies are generated while they are sent, never built in memory first: the tests measure
the memory of their own process, which also runs the fakes.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable

from tests.support.origin import Handler, Reply, RequestContext

_PIECE = 64 * 1024


def redirect_to(base: str, status: int = 302) -> Handler:
    """Redirect every request to the same path and query on another origin (``base``)."""

    def handler(ctx: RequestContext) -> None:
        ctx.send(Reply(status, b"", headers={"Location": base + ctx.path}, content_type=None))

    return handler


def json_answer(status: int, body: object, headers: dict[str, str] | None = None) -> Handler:
    """The same JSON answer to every request."""
    text = json.dumps(body)
    return lambda ctx: ctx.send(Reply(status, text, headers=headers or {}, content_type="application/json"))


def echoing(status: int, shape: Callable[[str], object]) -> Handler:
    """A JSON answer that quotes the request's headers (the key among them) where ``shape``
    puts the text: what a debugging proxy or a careless error handler sends back."""

    def handler(ctx: RequestContext) -> None:
        seen = "; ".join(f"{name}: {value}" for name, value in ctx.headers.items())
        ctx.send(Reply(status, json.dumps(shape(seen)), content_type="application/json"))

    return handler


def text_answer(status: int, body: str, content_type: str = "text/plain; charset=utf-8") -> Handler:
    return lambda ctx: ctx.send(Reply(status, body, content_type=content_type))


def gzip_bomb(decoded_bytes: int, status: int = 200) -> Handler:
    """A 200 whose gzip body is about a thousandth of ``decoded_bytes`` (spaces: valid JSON
    whitespace, so nothing but its size is wrong with it)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    spaces = b" " * _PIECE
    parts = [compressor.compress(spaces) for _ in range(decoded_bytes // _PIECE)]
    body = b"".join(parts) + compressor.flush()

    def handler(ctx: RequestContext) -> None:
        headers = {"Content-Encoding": "gzip", "Content-Length": str(len(body))}
        ctx.send_head(status, {"Content-Type": "application/json", **headers})
        ctx.write(body)

    return handler


def endless_body(total_bytes: int, *, chunked: bool, content_type: str = "application/json") -> Handler:
    """A 200 of ``total_bytes`` plain bytes (an opening JSON array, then spaces), sent chunked or
    with a Content-Length saying how big it is; it stops as soon as the client hangs up."""

    def handler(ctx: RequestContext) -> None:
        framing = {"Transfer-Encoding": "chunked"} if chunked else {"Content-Length": str(total_bytes)}
        ctx.send_head(200, {"Content-Type": content_type, **framing})
        sent = 0
        while sent < total_bytes:
            size = min(_PIECE, total_bytes - sent)
            piece = b"[" + b" " * (size - 1) if sent == 0 else b" " * size
            data = b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
            if not ctx.write(data):
                return
            sent += len(piece)
        if chunked:
            ctx.write(b"0\r\n\r\n")

    return handler
