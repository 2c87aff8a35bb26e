"""A FetchResponse as the network half hands it to conversion, built from a body."""

from __future__ import annotations

from mcp_server_web.fetch.types import FetchResponse


def response(
    body: bytes | str,
    media_type: str = "text/html",
    charset: str | None = None,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
    url: str = "https://example.com/docs/page",
) -> FetchResponse:
    """A 200 response for ``body`` (str is UTF-8), labelled ``media_type`` and ``charset``."""
    data = body.encode() if isinstance(body, str) else body
    content_type = media_type + (f"; charset={charset}" if charset else "")
    all_headers = {"content-type": content_type} if media_type else {}
    all_headers.update(headers or {})
    return FetchResponse(
        url=url,
        final_url=url,
        status=status,
        headers=all_headers,
        media_type=media_type,
        charset=charset,
        body=data,
    )
