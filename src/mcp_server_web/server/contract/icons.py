"""The server's and the tools' icons: small SVGs as data: URIs.

No external URL: the project has no home to serve them from, and a client fetching an icon from
somewhere would tell that somewhere who uses the server. One line drawing each, in a colour
that reads on a light or a dark list.
"""

from __future__ import annotations

from urllib.parse import quote

from mcp_types import Icon

_FRAME = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#3b82f6" '
    'stroke-width="2" stroke-linecap="round" stroke-linejoin="round">{}</svg>'
)
_GLOBE = '<circle cx="12" cy="12" r="9"/><path d="M3 12h18M12 3c3 3.5 3 14.5 0 18M12 3c-3 3.5-3 14.5 0 18"/>'
_LENS = '<circle cx="10.5" cy="10.5" r="6.5"/><path d="M15.5 15.5 21 21"/>'
_PAGE = '<path d="M6 3h8l4 4v14H6z"/><path d="M14 3v4h4M9 12h6M9 16h6"/>'
_ARROWS = '<path d="M4 8h14l-3-3M20 16H6l3 3"/>'


def _icon(drawing: str) -> Icon:
    return Icon(
        src="data:image/svg+xml," + quote(_FRAME.format(drawing), safe=""),
        mime_type="image/svg+xml",
        sizes=["any"],
    )


SERVER_ICON = _icon(_GLOBE)
SEARCH_ICON = _icon(_LENS)
FETCH_ICON = _icon(_PAGE)
HTTP_REQUEST_ICON = _icon(_ARROWS)
