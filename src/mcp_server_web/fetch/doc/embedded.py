"""Pages that are empty shells rendered by JavaScript, and the text they carry anyway.

The fetch library does not run JavaScript. Many such pages still ship their content inside the HTML as
data: JSON-LD (`articleBody`, `text`, `description`), Next.js `__NEXT_DATA__`, Nuxt `__NUXT_DATA__`,
and similar JSON blobs. This module recognises a shell (a mount point, a lot of script, little
visible text) and recovers the longest prose from that data, so the model gets the article
instead of "Loading...".
"""

from __future__ import annotations

import html as html_module
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import lxml.html
from lxml import etree

# Mount points of the common client-side frameworks.
_MOUNT_POINTS = ("root", "app", "__next", "__nuxt", "___gatsby", "svelte", "main-app", "application")
# id() looks ids up in the table libxml2 keeps, rather than comparing every element's id; the
# framework roots sit at the top of the body, where they are looked for.
_MOUNT = etree.XPath(
    f"id('{' '.join(_MOUNT_POINTS)}')"
    " | /html/body/app-root | /html/body/*/app-root"
    " | /html/body/*[@data-reactroot] | /html/body/*/*[@data-reactroot]"
    " | /html/body/*/*/*[@data-reactroot]"
)
_STRING_LENGTH = etree.XPath("string-length(string(.))")
# Data blobs frameworks embed for hydration: script ids, and JSON script types.
_DATA_SCRIPT_IDS = (
    "__NEXT_DATA__",
    "__NUXT_DATA__",
    "__APOLLO_STATE__",
    "__INITIAL_STATE__",
    "__remixContext",
)
_PROSE_KEYS = ("articleBody", "body", "content", "text", "description", "html", "markdown", "excerpt")
_MIN_PROSE = 200
_MAX_PIECES = 40
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"[ \t\f\v]+")

SHELL_MAX_TEXT = 300
"""A page with less visible text than this (and the other signs) is treated as a shell."""


@dataclass(frozen=True, slots=True)
class Script:
    """A script that may carry the page's content as data (JSON-LD, a hydration blob)."""

    id: str
    type: str
    text: str


@dataclass(frozen=True, slots=True)
class PageScripts:
    """A page's scripts and mount points, which tell a JavaScript shell apart, and the data it may
    carry: read from the page as parsed, before its scripts are cleaned away, so that nothing
    has to parse the page again."""

    script_chars: int
    mount_point: bool
    data_scripts: tuple[Script, ...]
    scripts: int = 0
    """Script elements, inline or not (a page may be all ``<script src>``)."""


@dataclass(frozen=True, slots=True)
class ShellReport:
    is_shell: bool
    visible_chars: int
    script_chars: int
    mount_point: bool


def page_scripts(root: lxml.html.HtmlElement) -> PageScripts:
    """The page's scripts, mount points and data scripts (see PageScripts). Only the data
    scripts' text is copied out of the tree."""
    script_chars = scripts = 0
    data_scripts: list[Script] = []
    for script in root.iter("script"):
        scripts += 1
        script_chars += int(_STRING_LENGTH(script))
        script_id = script.get("id") or ""
        kind = (script.get("type") or "").strip().lower()
        if kind in ("application/ld+json", "application/json") or script_id in _DATA_SCRIPT_IDS:
            data_scripts.append(Script(script_id, kind, script.text or ""))
    return PageScripts(
        scripts=scripts,
        script_chars=script_chars,
        mount_point=bool(_MOUNT(root)),
        data_scripts=tuple(data_scripts),
    )


def inspect_shell(scripts: PageScripts, visible_chars: int) -> ShellReport:
    """Is this page a JavaScript shell? Little visible text, and a mount point or a lot of script."""
    heavy_scripts = scripts.script_chars > 20 * max(visible_chars, 1)
    return ShellReport(
        is_shell=visible_chars < SHELL_MAX_TEXT and (scripts.mount_point or heavy_scripts),
        visible_chars=visible_chars,
        script_chars=scripts.script_chars,
        mount_point=scripts.mount_point,
    )


@dataclass(frozen=True, slots=True)
class Recovered:
    title: str | None
    text: str
    source: str
    """Where it came from, for the warning (e.g. "JSON-LD articleBody", "__NEXT_DATA__")."""


def recover_embedded_text(scripts: PageScripts) -> Recovered | None:
    """The page's prose from its embedded data, or None when there is none worth returning."""
    for script in scripts.data_scripts:
        if script.type == "application/ld+json":
            recovered = _from_json_ld(script.text)
            if recovered is not None:
                return recovered
    for script in scripts.data_scripts:
        if script.id in _DATA_SCRIPT_IDS or (
            script.type == "application/json" and len(script.text) > _MIN_PROSE
        ):
            data = _loads(script.text)
            if data is None:
                continue
            pieces = _prose_pieces(data)
            if pieces:
                # A page chooses any other id: name only the well-known ones in our warning.
                source = script.id if script.id in _DATA_SCRIPT_IDS else "an application/json script"
                return Recovered(title=_first_title(data), text="\n\n".join(pieces), source=source)
    return None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _from_json_ld(text: str) -> Recovered | None:
    data = _loads(text)
    if data is None:
        return None
    for node in _walk_dicts(data):
        for key in ("articleBody", "text"):
            value = node.get(key)
            if isinstance(value, str) and len(value) >= _MIN_PROSE:
                headline = node.get("headline") or node.get("name")
                return Recovered(
                    title=headline if isinstance(headline, str) else None,
                    text=_as_prose(value),
                    source=f"JSON-LD {key}",
                )
    return None


def _walk_dicts(data: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    if depth > 40:
        return
    if isinstance(data, dict):
        yield data
        for value in data.values():
            yield from _walk_dicts(value, depth + 1)
    elif isinstance(data, list):
        for item in data:
            yield from _walk_dicts(item, depth + 1)


def _prose_pieces(data: Any) -> list[str]:
    """Long prose strings under prose-like keys, in document order, without repeats."""
    pieces: list[str] = []
    seen: set[str] = set()
    for node in _walk_dicts(data):
        for key in _PROSE_KEYS:
            value = node.get(key)
            if isinstance(value, str) and len(value) >= _MIN_PROSE and _looks_like_prose(value):
                prose = _as_prose(value)
                if prose not in seen:
                    seen.add(prose)
                    pieces.append(prose)
        if len(pieces) >= _MAX_PIECES:
            break
    return pieces


def _looks_like_prose(value: str) -> bool:
    """Words and sentences, not a URL, a hash, base64 or code."""
    text = _TAG.sub(" ", value)
    words = text.split()
    if len(words) < 20:
        return False
    long_tokens = sum(1 for word in words if len(word) > 40)
    return long_tokens / len(words) < 0.05


def _as_prose(value: str) -> str:
    """Embedded HTML turned into paragraphs of plain text; plain text kept as it is."""
    if "<" in value and ">" in value:
        value = re.sub(r"(?i)<\s*(br|/p|/div|/h[1-6]|/li)\s*/?>", "\n\n", value)
        value = _TAG.sub("", value)
    value = html_module.unescape(value)
    lines = [_SPACE.sub(" ", line).strip() for line in value.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _first_title(data: Any) -> str | None:
    for node in _walk_dicts(data):
        for key in ("title", "headline", "name"):
            value = node.get(key)
            if isinstance(value, str) and 3 <= len(value) <= 300:
                return value
    return None
