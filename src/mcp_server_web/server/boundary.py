"""Marking third-party text as data: the fence around what a page, provider or API sent.

Everything a tool returns that came from elsewhere (a page's text, search results, an API's
response) is written between an opening and a closing tag that carry a random id drawn for that
one call::

    <untrusted-content id="3f9c1a0b7d2e4c68" source="https://example.com/page">
    ...the text, exactly as it is...
    </untrusted-content id="3f9c1a0b7d2e4c68">

A page cannot forge the end of the fence: it would have to guess 64 random bits it has never
seen, and a closing tag with any other id is just more text inside. The text itself is left
untouched (no escaping), so pagination offsets stay offsets into the document.

Our own notes (warnings, continuation lines, status lines) stay outside the fence. Text of
remote origin that has to sit outside it (a quoted robots.txt rule in an error, a page's title
or a response header in structured content) goes through ``one_line`` instead, so that it
cannot pose as lines or fence tags of its own.
"""

from __future__ import annotations

import re
import secrets

TAG = "untrusted-content"
ID_HEX_CHARS = 16
_MAX_DRAWS = 8
"""Draws of an id before giving up. One draw is found in a 100,000-character text with odds of
about one in 10^14; eight in a row would mean the random source is broken."""

_OPENING = re.compile(rf'<{TAG} id="(?P<id>[0-9a-f]{{{ID_HEX_CHARS}}})" source="[^"<>\n]*">\n')


def fence(text: str, *, source: str) -> str:
    """``text`` between an opening and a closing tag carrying an id drawn for this call only.

    ``source`` says where the text came from (a URL or a provider name); any character that
    could end the attribute or the tag, or start a new line, is percent-escaped.
    """
    marker = fresh_id(text)
    return f'<{TAG} id="{marker}" source="{attribute_value(source)}">\n{text}\n</{TAG} id="{marker}">'


def fresh_id(text: str) -> str:
    """A random id that does not occur anywhere in ``text``.

    Unpredictability is what makes the fence hold; the check only rules out the accidental
    collision, so a page that happens to contain the id still cannot close the fence.
    """
    for _ in range(_MAX_DRAWS):
        marker = secrets.token_hex(ID_HEX_CHARS // 2)
        if marker not in text:
            return marker
    raise RuntimeError("could not draw a fence id absent from the text")


def attribute_value(value: str) -> str:
    """``value`` safe inside a double-quoted attribute on one line.

    Only what could end the attribute or the tag, or the line, is escaped, as percent-escapes: a
    URL then still reads as (and means) the same URL, since %22 and %3C are what a browser sends
    for those characters anyway. "%" and "&" are left alone, so the escapes a URL already has
    are not doubled and its query keeps its meaning.
    """
    return "".join(_escaped(char) if _unsafe(char) else char for char in value)


def _unsafe(char: str) -> bool:
    # isprintable() is False for controls, line and paragraph separators, bidi overrides and
    # every other invisible or layout character.
    return char in '"<>' or not char.isprintable()


def _escaped(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


def split_fence(text: str) -> tuple[str, str, str] | None:
    """(before, inside, after) for the first fence in a tool's text, or None when it has none.

    ``inside`` is exactly the text that was fenced; the newlines the tags stand on belong to
    neither side.
    """
    opening = _OPENING.search(text)
    if opening is None:
        return None
    closing = f'\n</{TAG} id="{opening["id"]}">'
    # fence() writes the closing tag on a line of its own right after the text, so it is the
    # first one with this id after the opening (the id occurs nowhere in the text).
    end = text.find(closing, opening.end())
    if end == -1:
        return None
    return text[: opening.start()], text[opening.end() : end], text[end + len(closing) :]


def unfenced(text: str) -> str:
    """``text`` with its fence tags taken out and everything else kept, for a human reader."""
    parts = split_fence(text)
    if parts is None:
        return text
    before, inside, after = parts
    return before + inside + after


_SPACES = re.compile(r" {2,}")
# Any spelling a model could read as a fence tag: either case, spaces around the slash, the words
# joined by a hyphen, an underscore or spaces (invisible characters have become spaces by then).
_TAG_WORDS = TAG.replace("-", r"[\s_-]*")
_TAG_LOOKALIKE = re.compile(rf"<(\s*/?\s*{_TAG_WORDS})", re.IGNORECASE)


def one_line(text: str, limit: int) -> str:
    """``text`` as a single line of at most ``limit`` characters, with no fence tag in it.

    The one treatment for every remote string that leaves the fence: quoted in our messages
    (errors, conversion notes) or handed over as a structured field (a page title, response
    header values). Such a string cannot then carry line breaks that would make it look like a
    line, a heading or a tag of its own, nor control characters, nor hide text behind bidi
    overrides, nor run on for pages; and anything that looks like a fence tag is defaced (its
    "<" becomes "‹"), so the only fence tags a model sees outside a fence are our own.
    """
    flat = "".join(char if char.isprintable() else " " for char in text)
    flat = _TAG_LOOKALIKE.sub(r"‹\1", _SPACES.sub(" ", flat).strip())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
