"""An HTML fragment -> Markdown, plain text or the cleaned HTML itself.

markdownify with our house style (ATX headings, fenced code with languages), a plain-text
variant of it, and a final whitespace tidy.
"""

from __future__ import annotations

import re
from typing import Any

from markdownify import ATX, MarkdownConverter

from mcp_server_web.fetch.html_tree import collapse
from mcp_server_web.fetch.types import OutputFormat

_BLANK_LINES = re.compile(r"\n{3,}")
_BACKTICKS = re.compile(r"`+")
_LANGUAGE_CLASS = re.compile(r"^(?:language-|lang-|highlight-source-|highlight-)([A-Za-z0-9_+#.-]{1,30})$")
_LANGUAGE_NAME = re.compile(r"^[A-Za-z0-9_+#.-]{1,30}$")
# Class names that mark a code block, next to which another class names the language
# (highlight.js "hljs python", pandoc "sourceCode python").
_CODE_MARKER_CLASSES = frozenset({"hljs", "sourceCode", "highlight", "prettyprint", "code"})


def render(fragment_html: str, output_format: OutputFormat) -> str:
    """An HTML fragment in ``output_format``.

    html is the fragment itself, stripped; text and markdown are converted, then tidied.
    """
    if output_format == "html":
        return fragment_html.strip()
    if output_format == "text":
        return _tidy(_TextConverter().convert(fragment_html))
    return _tidy(_MarkdownConverter().convert(fragment_html))


def code_language(pre: Any) -> str | None:
    """The language of a <pre> code block, from the classes or data-lang of it, its <code> or its parent."""
    for element in (pre, pre.find("code"), pre.parent):
        if element is None or not hasattr(element, "get"):
            continue
        for attribute in ("data-lang", "data-language"):
            value = (element.get(attribute) or "").strip()
            if _LANGUAGE_NAME.match(value):
                return value.lower()
        classes = element.get("class") or []
        if isinstance(classes, str):
            classes = classes.split()
        for name in classes:
            match = _LANGUAGE_CLASS.match(name)
            if match and match.group(1).lower() not in ("source", "text", "plain", "none"):
                return match.group(1).lower()
        if any(name in _CODE_MARKER_CLASSES for name in classes):
            others = [name for name in classes if name not in _CODE_MARKER_CLASSES]
            if len(others) == 1 and _LANGUAGE_NAME.match(others[0]):
                return others[0].lower()
    return None


class _MarkdownConverter(MarkdownConverter):
    """markdownify with our house style: ATX headings, '-' bullets, fenced code with languages."""

    def __init__(self, **options: Any) -> None:
        defaults: dict[str, Any] = {
            "heading_style": ATX,
            "bullets": "-",
            "code_language_callback": code_language,
            "escape_underscores": False,  # snake_case is common and never emphasis mid-word
            "table_infer_header": True,
            "strip_document": "strip",
        }
        defaults.update(options)
        super().__init__(**defaults)

    def convert_pre(self, el: Any, text: str, parent_tags: set[str]) -> str:
        text = text.strip("\n")
        if not text.strip():
            return ""
        language = code_language(el) or ""
        longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
        fence = "`" * max(3, longest + 1)  # a fence must be longer than any backtick run inside
        return f"\n\n{fence}{language}\n{text}\n{fence}\n\n"


class _TextConverter(_MarkdownConverter):
    """Plain text: paragraphs, line breaks and list items, but no Markdown syntax."""

    def __init__(self) -> None:
        super().__init__(escape_asterisks=False, escape_underscores=False, escape_misc=False)

    def convert_a(self, el: Any, text: str, parent_tags: set[str]) -> str:
        return text

    def convert_img(self, el: Any, text: str, parent_tags: set[str]) -> str:
        return ""

    def convert_hN(self, n: int, el: Any, text: str, parent_tags: set[str]) -> str:
        if "_inline" in parent_tags:
            return text
        text = collapse(text)
        return f"\n\n{text}\n\n" if text else ""

    def convert_pre(self, el: Any, text: str, parent_tags: set[str]) -> str:
        text = text.strip("\n")
        return f"\n\n{text}\n\n" if text.strip() else ""

    def convert_blockquote(self, el: Any, text: str, parent_tags: set[str]) -> str:
        text = text.strip("\n")
        return f"\n\n{text}\n\n" if text else ""

    def convert_hr(self, el: Any, text: str, parent_tags: set[str]) -> str:
        return "\n\n"

    def convert_td(self, el: Any, text: str, parent_tags: set[str]) -> str:
        return collapse(text) + "\t"

    convert_th = convert_td

    def convert_tr(self, el: Any, text: str, parent_tags: set[str]) -> str:
        return text.rstrip("\t").replace("\t", " | ") + "\n"

    def _plain(self, el: Any, text: str, parent_tags: set[str]) -> str:
        return text

    convert_b = convert_strong = convert_em = convert_i = convert_code = convert_kbd = _plain
    convert_samp = convert_del = convert_s = convert_sub = convert_sup = _plain


def _tidy(text: str) -> str:
    """Uniform whitespace: no trailing spaces, at most one blank line in a row."""
    text = text.replace("\u00a0", " ").replace("\u200b", "")
    # Line by line: a "[ \t]+$" regex would be quadratic on a long run of spaces.
    text = "\n".join(line.rstrip(" \t") for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", text).strip()
