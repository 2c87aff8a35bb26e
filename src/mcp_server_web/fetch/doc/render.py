"""An HTML tree -> Markdown, plain text or the cleaned HTML itself.

Markdown in our house style (ATX headings, '-' bullets, fenced code with languages, pipe tables
with a header row), written straight from the lxml tree, and a plain-text variant of it. The
conversion follows markdownify's rules (whitespace handling, list indentation, tables, links),
which this module used before; walking the lxml tree directly, instead of writing it out and
parsing it again with BeautifulSoup, makes it several times faster, which matters for whole-page
conversions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

import lxml.html

from mcp_server_web.fetch.doc.html_tree import (
    ROW_GROUPS,
    attribute_number,
    collapse,
    row_cells,
    serialise,
    table_rows,
)
from mcp_server_web.fetch.types import OutputFormat

_BLANK_LINES = re.compile(r"\n{3,}")
_BACKTICKS = re.compile(r"`+")
_LANGUAGE_CLASS = re.compile(r"^(?:language-|lang-|highlight-source-|highlight-)([A-Za-z0-9_+#.-]{1,30})$")
_LANGUAGE_NAME = re.compile(r"^[A-Za-z0-9_+#.-]{1,30}$")
# Class names that mark a code block, next to which another class names the language
# (highlight.js "hljs python", pandoc "sourceCode python").
_CODE_MARKER_CLASSES = frozenset({"hljs", "sourceCode", "highlight", "prettyprint", "code"})

_WHITESPACE = re.compile(r"[\t ]+")
_ALL_WHITESPACE = re.compile(r"[\t \r\n]+")
_NEWLINE_WHITESPACE = re.compile(r"[\t \r\n]*[\r\n][\t \r\n]*")
_LINE_WITH_CONTENT = re.compile(r"^(.*)", flags=re.MULTILINE)
_EDGE_NEWLINES = re.compile(r"^(\n*)((?:.*[^\n])?)(\n*)$", flags=re.DOTALL)
_PRE_LEADING = re.compile(r"^[ \n]*\n")
_PRE_TRAILING = re.compile(r"[ \n]*$")
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Whitespace just inside these elements, and just outside them (and <pre>), is not content.
_TRIM_INSIDE = _HEADINGS | {
    "p", "blockquote", "article", "div", "section", "ol", "ul", "li", "dl", "dt", "dd", "table",
    "thead", "tbody", "tfoot", "tr", "td", "th",
}  # fmt: skip
_TRIM_OUTSIDE = _TRIM_INSIDE | {"pre"}
_NO_FORMAT = frozenset({"pre", "code", "kbd", "samp"})
_INLINE_CONTEXT = _HEADINGS | {"td", "th"}
_LINE_PREFIXED = frozenset({"blockquote", "dd", "li"})
_SKIPPED = frozenset({"script", "style", "template", "head", "title", "meta", "link"})

# Each <blockquote>, <dd> and list item repeats its prefix ("> ", four spaces, the bullet's width)
# on every line inside it, so without a bound a page's output grows with depth x lines. Past this
# many characters of prefix a line gets no more: 10 levels of quotes or "- " bullets, 6 of "1. "
# items, 5 of definitions, deeper than real pages nest readable text (and than renderers follow:
# markdown-it's CommonMark preset stops nesting blocks at 20). Deeper blocks keep their bullet
# or ":" but are flattened into the last level that fits; a <pre> line costs at most this much
# more than its own text, where 200 levels of quotes made it 400 characters.
_MAX_LINE_PREFIX = 20
# HTML clamps colspan to 1000; nine digits number any real list (a bullet stays short). Longer
# numbers are capped before int(), which refuses strings of more than 4300 digits.
_MAX_COLSPAN = 1000
_MAX_LIST_START = 999_999_999


def render_element(element: lxml.html.HtmlElement, output_format: OutputFormat) -> str:
    """An element (and everything in it) in ``output_format``."""
    if output_format == "html":
        return serialise(element).strip()
    converter = _TextConverter() if output_format == "text" else _MarkdownConverter()
    return _tidy(converter.convert(element))


def code_language(pre: Any) -> str | None:
    """The language of a <pre> code block, from the classes or data-lang of it, its <code> or its parent."""
    code = pre.find(".//code") if hasattr(pre, "find") else None
    parent = pre.getparent() if hasattr(pre, "getparent") else None
    for element in (pre, code, parent):
        if element is None or not hasattr(element, "get"):
            continue
        for attribute in ("data-lang", "data-language"):
            value = (element.get(attribute) or "").strip()
            if _LANGUAGE_NAME.match(value):
                return value.lower()
        classes = (element.get("class") or "").split()
        for name in classes:
            match = _LANGUAGE_CLASS.match(name)
            if match and match.group(1).lower() not in ("source", "text", "plain", "none"):
                return match.group(1).lower()
        if any(name in _CODE_MARKER_CLASSES for name in classes):
            others = [name for name in classes if name not in _CODE_MARKER_CLASSES]
            if len(others) == 1 and _LANGUAGE_NAME.match(others[0]):
                return others[0].lower()
    return None


# --- the converter ---------------------------------------------------------------------------

_Converter = Callable[[Any, str, frozenset[str]], str]


def _chomp(text: str) -> tuple[str, str, str]:
    """Leading/trailing space moved outside inline markup: "<b> foo</b>" is " **foo**"."""
    prefix = " " if text and text[0] == " " else ""
    suffix = " " if text and text[-1] == " " else ""
    return prefix, suffix, text.strip()


class _MarkdownConverter:
    """Markdown in our house style: ATX headings, '-' bullets, fenced code with languages."""

    escape_asterisks = True

    # The characters each line inside one of these elements repeats (list items: their bullet's).
    line_prefixes: ClassVar[dict[str, int]] = {"blockquote": len("> "), "dd": len("    ")}

    def __init__(self) -> None:
        self._converters: dict[str, _Converter | None] = {}
        self._prefix = 0  # the characters of line prefix the elements being converted add up to
        self._flatten = False  # the element being converted adds no line prefix: too deep
        self._item_numbers: dict[Any, int] = {}
        self._cell_spans: dict[Any, int] = {}
        self._table_widths: dict[Any, int] = {}
        self._padding_left: dict[Any, int] = {}
        self._tag_sets: dict[tuple[frozenset[str], str], frozenset[str]] = {}

    def convert(self, element: Any) -> str:
        return self._element(element, frozenset()).strip("\n")

    # -- walking the tree

    def _element(self, element: Any, parent_tags: frozenset[str]) -> str:
        tag = element.tag
        if not isinstance(tag, str):
            return ""
        if tag in _SKIPPED:
            return ""
        trim_inside = tag in _TRIM_INSIDE
        inner_tags = self._tag_sets.get((parent_tags, tag)) or self._inner_tags(parent_tags, tag)
        outer_prefix = self._prefix
        prefix = self._line_prefix(element, parent_tags) if tag in _LINE_PREFIXED else 0
        self._prefix = outer_prefix + prefix

        strings: list[str] = []
        # The element's own text, then each child followed by its tail. A text is written once
        # the element after it is known (whitespace next to a block is not content): each
        # waits, with the tag of the element before it (None after a comment or at the start).
        waiting: list[tuple[str, str | None]] = []
        if element.text:
            waiting.append((element.text, None))
        for child in element:
            child_tag = child.tag
            if isinstance(child_tag, str):
                if waiting:
                    self._texts(strings, waiting, child_tag, trim_inside, inner_tags)
                converted = self._element(child, inner_tags)
                if converted:
                    strings.append(converted)
                previous: str | None = child_tag
            else:  # a comment or processing instruction: only its tail counts
                previous = None
            tail = child.tail
            if tail:
                waiting.append((tail, previous))
        if waiting:
            self._texts(strings, waiting, None, trim_inside, inner_tags)

        if len(strings) < 2:  # most elements: nothing meets
            joined = strings[0] if strings else ""
        elif tag == "pre" or "pre" in parent_tags:  # inside <pre> every newline counts
            joined = "".join(strings)
        else:  # elsewhere the newlines where blocks meet collapse
            joined = _join_blocks(strings)
        self._prefix = outer_prefix
        # once a block is flattened so are those in it: their prefixes would add to its sum
        self._flatten = outer_prefix + prefix > _MAX_LINE_PREFIX
        converter = self._converter(tag)
        return converter(element, joined, parent_tags) if converter is not None else joined

    def _inner_tags(self, parent_tags: frozenset[str], tag: str) -> frozenset[str]:
        """The tags (and "_inline", "_noformat") around the children of a ``tag`` in ``parent_tags``,
        kept in _tag_sets: made once per combination, as a page repeats the same few."""
        child_tags = set(parent_tags)
        child_tags.add(tag)
        if tag in _INLINE_CONTEXT:
            child_tags.add("_inline")
        if tag in _NO_FORMAT:
            child_tags.add("_noformat")
        inner = self._tag_sets[(parent_tags, tag)] = frozenset(child_tags)
        return inner

    def _texts(
        self,
        strings: list[str],
        waiting: list[tuple[str, str | None]],
        following: str | None,
        trim_inside: bool,
        parent_tags: frozenset[str],
    ) -> None:
        """The ``waiting`` texts as written, added to ``strings`` (and ``waiting`` emptied): each
        between the element tagged as it says and the one tagged ``following`` (None: a comment,
        or the start or end of their parent)."""
        before_block = following in _TRIM_OUTSIDE
        for text, previous in waiting:
            after_block = previous in _TRIM_OUTSIDE
            # whitespace between blocks, or just inside one, is not content
            if (
                (trim_inside and (previous is None or following is None)) or after_block or before_block
            ) and not text.strip():
                continue
            if "pre" not in parent_tags:
                # the substitutions change nothing without a line break, a tab or two spaces in a row
                if "\n" in text or "\r" in text:
                    text = _NEWLINE_WHITESPACE.sub("\n", text)
                if "\t" in text or "  " in text:
                    text = _WHITESPACE.sub(" ", text)
            if self.escape_asterisks and "_noformat" not in parent_tags:
                text = text.replace("*", r"\*")
            if after_block or (trim_inside and previous is None):
                text = text.lstrip(" \t\r\n")
            if before_block or (trim_inside and following is None):
                text = text.rstrip()
            if text:
                strings.append(text)
        waiting.clear()

    def _line_prefix(self, element: Any, parent_tags: frozenset[str]) -> int:
        """The characters ``element`` puts before every line inside it."""
        if element.tag == "li":
            return len(self._bullet(element))
        return 0 if "_inline" in parent_tags else self.line_prefixes.get(element.tag, 0)

    def _converter(self, tag: str) -> _Converter | None:
        if tag not in self._converters:
            name = "convert_" + re.sub(r"[\[\]:-]", "_", tag.lower())
            converter = getattr(self, name, None)
            if converter is None and tag in _HEADINGS:
                level = int(tag[1])

                def converter(el: Any, text: str, parent_tags: frozenset[str], level: int = level) -> str:
                    return self.convert_hN(level, el, text, parent_tags)

            self._converters[tag] = converter
        return self._converters[tag]

    # -- inline elements

    def _inline(self, markup: str, text: str, parent_tags: frozenset[str]) -> str:
        if "_noformat" in parent_tags:
            return text
        prefix, suffix, text = _chomp(text)
        if not text:
            return ""
        return f"{prefix}{markup}{text}{markup}{suffix}"

    def convert_b(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return self._inline("**", text, parent_tags)

    convert_strong = convert_b

    def convert_em(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return self._inline("*", text, parent_tags)

    convert_i = convert_em

    def convert_del(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return self._inline("~~", text, parent_tags)

    convert_s = convert_del

    def convert_sub(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return self._inline("", text, parent_tags)

    convert_sup = convert_sub

    def convert_code(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "_noformat" in parent_tags:
            return text
        prefix, suffix, text = _chomp(text)
        if not text:
            return ""
        longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
        delimiter = "`" * (longest + 1)
        if longest:
            text = f" {text} "
        return f"{prefix}{delimiter}{text}{delimiter}{suffix}"

    convert_kbd = convert_samp = convert_code

    def convert_q(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return f'"{text}"'

    def convert_a(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "_noformat" in parent_tags:
            return text
        prefix, suffix, text = _chomp(text)
        if not text:
            return ""
        href = el.get("href")
        title = el.get("title")
        if not href:
            return text
        if text.replace(r"\_", "_") == href and not title:
            return f"<{href}>"
        title_part = ' "{}"'.format(title.replace('"', r"\"")) if title else ""
        if "\n" in text:
            # A link around blocks (a card: picture, heading, teaser): Markdown links cannot
            # span blocks, so the link goes on the first line that has text.
            return prefix + _link_first_line(text, f"]({href}{title_part})") + suffix
        return f"{prefix}[{text}]({href}{title_part}){suffix}"

    def convert_img(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        alt = el.get("alt") or ""
        src = el.get("src") or ""
        title = el.get("title") or ""
        if "_inline" in parent_tags:
            return alt
        title_part = ' "{}"'.format(title.replace('"', r"\"")) if title else ""
        return f"![{alt}]({src}{title_part})"

    def convert_video(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "_inline" in parent_tags:
            return text
        src = el.get("src") or ""
        if not src:
            source = el.find(".//source[@src]")
            if source is not None:
                src = source.get("src") or ""
        poster = el.get("poster") or ""
        if src and poster:
            return f"[![{text}]({poster})]({src})"
        if src:
            return f"[{text}]({src})"
        if poster:
            return f"![{text}]({poster})"
        return text

    def convert_br(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "_inline" in parent_tags:
            return text + " " if text else " "
        return "  \n" + text

    # -- blocks

    def convert_p(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "_inline" in parent_tags:
            return " " + text.strip(" \t\r\n") + " "
        text = text.strip(" \t\r\n")
        return f"\n\n{text}\n\n" if text else ""

    def convert_div(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "_inline" in parent_tags:
            return " " + text.strip() + " "
        text = text.strip()
        return f"\n\n{text}\n\n" if text else ""

    convert_article = convert_section = convert_dl = convert_div

    def convert_hN(self, n: int, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "_inline" in parent_tags:
            return text
        text = _ALL_WHITESPACE.sub(" ", text.strip())
        return f"\n\n{'#' * max(1, min(6, n))} {text}\n\n"

    def convert_hr(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return "\n\n---\n\n"

    def convert_blockquote(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        text = (text or "").strip(" \t\r\n")
        if "_inline" in parent_tags:
            return " " + text + " "
        if not text:
            return "\n"
        if not self._flatten:
            text = _LINE_WITH_CONTENT.sub(lambda m: "> " + m.group(1) if m.group(1) else ">", text)
        return "\n" + text + "\n\n"

    def convert_pre(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "pre" in parent_tags:
            return text  # already in a code block, of which it is just more text
        text = text.strip("\n")
        if not text.strip():
            return ""
        language = code_language(el) or ""
        longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
        fence = "`" * max(3, longest + 1)  # a fence must be longer than any backtick run inside
        return f"\n\n{fence}{language}\n{text}\n{fence}\n\n"

    def convert_ul(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "li" in parent_tags:
            return "\n" + text.rstrip()  # a nested list: no trailing newline
        following = el.getnext()
        while following is not None and not isinstance(following.tag, str):
            following = following.getnext()
        before_paragraph = (following is not None and following.tag not in ("ul", "ol")) or bool(
            el.tail and el.tail.strip()
        )
        return "\n\n" + text + ("\n" if before_paragraph else "")

    convert_ol = convert_ul

    def convert_li(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        text = (text or "").strip()
        if not text:
            return "\n"
        bullet = self._bullet(el)
        if self._flatten:
            return bullet + text + "\n"
        indent = " " * len(bullet)
        text = _LINE_WITH_CONTENT.sub(lambda m: indent + m.group(1) if m.group(1) else "", text)
        return bullet + text[len(bullet) :] + "\n"

    def _bullet(self, el: Any) -> str:
        parent = el.getparent()
        if parent is None or parent.tag != "ol":
            return "- "
        if el not in self._item_numbers:
            # numbered for the whole list at once: counting each item's predecessors is quadratic
            start = attribute_number(parent.get("start"), 1, _MAX_LIST_START)
            for index, item in enumerate(parent.iterchildren("li")):
                self._item_numbers[item] = start + index
        return f"{self._item_numbers[el]}. "

    def convert_dt(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        text = _ALL_WHITESPACE.sub(" ", (text or "").strip())
        if "_inline" in parent_tags:
            return " " + text + " "
        return f"\n\n{text}\n" if text else "\n"

    def convert_dd(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        text = (text or "").strip()
        if "_inline" in parent_tags:
            return " " + text + " "
        if not text:
            return "\n"
        if self._flatten:
            return ":   " + text + "\n"  # the first line as it would be, the others not indented
        text = _LINE_WITH_CONTENT.sub(lambda m: "    " + m.group(1) if m.group(1) else "", text)
        return ":" + text[1:] + "\n"

    def convert_table(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return "\n\n" + text.strip() + "\n\n"

    def convert_caption(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return text.strip() + "\n\n"

    def convert_figcaption(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return "\n\n" + text.strip() + "\n\n"

    def convert_td(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return " " + text.strip().replace("\n", " ") + " |" * self._span(el)

    convert_th = convert_td

    def convert_tr(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        cells = [cell for cell in el if cell.tag in ("td", "th")]
        parent = el.getparent()
        parent_tag = parent.tag if parent is not None else ""
        first_row = _previous_element(el) is None
        head_row = all(cell.tag == "th" for cell in cells) or (
            parent_tag == "thead" and len(parent.findall("tr")) == 1
        )
        head_row_missing = first_row and (
            parent_tag != "tbody" or parent.getparent() is None or parent.getparent().find("thead") is None
        )
        width = sum(self._span(cell) for cell in cells)
        underline = ""
        if first_row and (head_row or head_row_missing):
            underline = "| " + " | ".join(["---"] * width) + " |\n"
        return "|" + text + "\n" + underline

    def _span(self, cell: Any) -> int:
        """The columns ``cell`` is written as: its colspan, as far as its table may be padded.

        A cell spanning n columns is written as n cells, the n - 1 empty ones there to line up the
        cells after it. That padding is bounded twice. A row is padded to at most the most cells
        a row of its table holds: padding only fills columns the table has, and <td colspan=100>
        (a "whole width" idiom) spans the table rather than 100 columns. And a table pads in all
        at most as many columns as it holds cells: each cell costs at least 4 bytes of input
        ("<td>"), a padded column at most 8 characters (" |" in its row, " --- |" in a delimiter
        row), so padding at most doubles the input (17 bytes of <th colspan=1000> were 8,000
        characters). Real tables span far fewer columns than they have cells; one that ran out
        would lose only the alignment of its last rows, never a cell.
        """
        if cell not in self._cell_spans:
            row = cell.getparent()
            if row is None or row.tag != "tr":  # a stray cell, with nothing to line up with
                self._cell_spans[cell] = 1
                return 1
            table = _table_of(row)
            if table not in self._table_widths:
                counts = [len(row_cells(each)) for each in table_rows(table)]
                self._table_widths[table] = max(counts, default=0)
                self._padding_left[table] = sum(counts)
            # Rows get here in document order, so a table short of padding lines up its first rows.
            cells = row_cells(row)
            padding = min(self._padding_left[table], max(0, self._table_widths[table] - len(cells)))
            for each in cells:  # and a row its spans from the left
                extra = min(padding, max(0, attribute_number(each.get("colspan"), 1, _MAX_COLSPAN) - 1))
                self._cell_spans[each] = 1 + extra
                padding -= extra
                self._padding_left[table] -= extra
        return self._cell_spans[cell]


_LINE_MARKER = re.compile(r"^((?:#{1,6} |[-*] |\d{1,9}\. |> )*)(.*)$")


_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")


def _link_first_line(text: str, target: str) -> str:
    """``text`` with the first line that has words (else the first with anything) made the link."""
    lines = text.split("\n")
    parts = [_LINE_MARKER.match(line).groups() for line in lines]  # type: ignore[union-attr]
    candidates = [i for i, (_, content) in enumerate(parts) if content.strip()]
    worded = [i for i in candidates if _IMAGE.sub("", parts[i][1]).strip()]
    chosen = worded[0] if worded else candidates[0] if candidates else None
    if chosen is not None:
        marker, content = parts[chosen]
        if not content.startswith("["):  # not a link already (links do not nest)
            lines[chosen] = f"{marker}[{content}{target}"
    return "\n".join(lines)


def _table_of(row: Any) -> Any:
    """The element whose rows ``row`` lines up with: its table (or whatever holds it)."""
    parent = row.getparent()
    if parent is None:
        return row
    if parent.tag in ROW_GROUPS and parent.getparent() is not None:
        return parent.getparent()
    return parent


def _previous_element(element: Any) -> Any:
    previous = element.getprevious()
    while previous is not None and not isinstance(previous.tag, str):
        previous = previous.getprevious()
    return previous


def _join_blocks(strings: list[str]) -> str:
    """Children's strings joined, with the newlines where two blocks meet collapsed (at most 2)."""
    parts: list[str] = []
    trailing = ""  # the newlines ending the string before, held until the next one's are known
    for string in strings:
        unled = string.lstrip("\n")
        content = unled.rstrip("\n")
        leading = len(string) - len(unled)
        if trailing and leading:
            parts.append("\n" * min(2, max(len(trailing), leading)))
        else:
            parts.append(trailing)
            if leading:
                parts.append(string[:leading])
        parts.append(content)
        # a string of newlines only leads with them all: none trails
        trailing = unled[len(content) :]
    parts.append(trailing)
    return "".join(parts)


class _TextConverter(_MarkdownConverter):
    """Plain text: paragraphs, line breaks and list items, but no Markdown syntax."""

    escape_asterisks = False
    line_prefixes: ClassVar[dict[str, int]] = {"dd": len("    ")}  # no quote markers

    def convert_a(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return text

    def convert_img(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return ""

    def convert_hN(self, n: int, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "_inline" in parent_tags:
            return text
        text = collapse(text)
        return f"\n\n{text}\n\n" if text else ""

    def convert_pre(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        if "pre" in parent_tags:
            return text
        text = text.strip("\n")
        return f"\n\n{text}\n\n" if text.strip() else ""

    def convert_blockquote(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        text = text.strip("\n")
        return f"\n\n{text}\n\n" if text else ""

    def convert_hr(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return "\n\n"

    def convert_td(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return collapse(text) + "\t"

    convert_th = convert_td

    def convert_tr(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return text.rstrip("\t").replace("\t", " | ") + "\n"

    def _plain(self, el: Any, text: str, parent_tags: frozenset[str]) -> str:
        return text

    convert_b = convert_strong = convert_em = convert_i = convert_code = convert_kbd = _plain
    convert_samp = convert_del = convert_s = convert_sub = convert_sup = _plain


def _tidy(text: str) -> str:
    """Uniform whitespace: no trailing spaces, at most one blank line in a row."""
    text = text.replace("\u00a0", " ").replace("\u200b", "")
    # Line by line: a "[ \t]+$" regex would be quadratic on a long run of spaces.
    text = "\n".join(line.rstrip(" \t") for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", text).strip()
