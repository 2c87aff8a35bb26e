"""trafilatura 2.3.1's costliest steps redone with the same results.

trafilatura spends a good part of its time on two kinds of work:

* XPath expressions testing regular expressions on every element's class and id
  (``re:test``). libxml2 walks the tree in C, but calls back into Python for each ``re:test``,
  turning each attribute into a Python string that holds a reference to its element first: a few
  microseconds per element and test, on every element of the page, several times over.
* ``prune_unwanted_nodes``'s guard, which keeps only the outermost of the elements it would drop
  by walking all the ancestors of each of them: quadratic in the nesting.

It also copies the tree it is given twice before it reads it: once in bare_extraction (``main_text``
reads the tree it is handed over instead), and once more for its comparison with readability,
which runs readability on the page although the caller has just done so (``try_readability``
takes the caller's result where there is one, the one thing here that is not trafilatura's own
reading: readability-lxml's, where trafilatura runs the copy of readability-lxml it ships; the
tree is copied only where readability does run).

Each expression below is replaced by a callable that walks the same elements in Python, asks the
same questions of their attributes (each distinct value matched against a pattern once: class
names repeat through a page and a site) and returns the same elements in the same order; the guard
finds the outermost elements by marking ancestors, each once. Everything trafilatura decides is
left as it is (checked page by page against the unmodified release on the zyte and WCXB pages,
and in tests/fetch/test_trafilatura_fast.py).

The replacements are made for trafilatura 2.3.1 only (pinned in pyproject.toml): ``install``
leaves any other release alone, and replaces an expression only if its text is the one
transcribed here.
"""

from __future__ import annotations

import copy
import importlib
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import trafilatura
from lxml.etree import XPath, _Element
from lxml.html import HtmlElement

RELEASE = "2.3.1"
"""The trafilatura release these replacements are proven equal to."""

_htmlprocessing = importlib.import_module("trafilatura.htmlprocessing")
_xpaths = importlib.import_module("trafilatura.xpaths")
_settings = importlib.import_module("trafilatura.settings")
# (``trafilatura.baseline`` is the function of that name: the package re-exports it)
_baseline = importlib.import_module("trafilatura.baseline")
_core = importlib.import_module("trafilatura.core")
_external = importlib.import_module("trafilatura.external")
_delete_element: Callable[[_Element], None] = importlib.import_module("trafilatura.xml").delete_element

Select = Callable[[_Element], list[_Element]]


# --- what the XPath functions read -----------------------------------------------------------------


class _Verdicts(dict[str, bool]):
    """Whether a pattern matches each value, searched once per value: a class or id recurs on many
    elements of a page, and on many pages of a site. Forgotten whenever it holds VERDICTS_KEPT
    values, so that it stays small; a verdict depends on the value alone, so threads share it (at
    worst, two of them search the same value)."""

    __slots__ = ("_search", "pattern")

    def __init__(self, pattern: str, ignore_case: bool = False) -> None:
        super().__init__()
        # compiled as lxml compiles the pattern of EXSLT's re:test (re.IGNORECASE for 'i')
        self._search = re.compile(pattern, re.UNICODE | (re.IGNORECASE if ignore_case else 0)).search
        self.pattern = pattern

    def __missing__(self, value: str) -> bool:
        if len(self) >= VERDICTS_KEPT:
            self.clear()
        verdict = self[value] = self._search(value) is not None
        return verdict


VERDICTS_KEPT = 4096
"""Verdicts kept per pattern: a page has a few hundred distinct classes and ids."""


def _first(element: _Element, name: str, value: str | None, other: str, other_value: str | None) -> str:
    """The string value of ``@name|@other``, as ``re:test``, ``contains`` and ``starts-with`` read
    it: that of the first of the two attributes in the element's source order (a node-set is in
    document order, and libxml2 orders an element's attributes as written), '' without either.
    ``value`` and ``other_value`` are the two attributes' values (None where absent)."""
    if value is None:
        return other_value or ""
    if other_value is None:
        return value
    names = element.keys()
    return value if names.index(name) < names.index(other) else other_value


# A missing attribute is searched as '' below (``value or ""``), as lxml's re:test searches an
# empty node-set: the verdict on '' is the pattern's own, not assumed.


def _first_per_parent(found: Iterable[_Element]) -> list[_Element]:
    """``.//*[...][1]``: of the matching elements (in document order), those that are the first
    matching child of their parent (the position counts per step of ``//``, so per parent)."""
    parents: set[_Element | None] = set()
    first = []
    for element in found:
        parent = element.getparent()
        if parent not in parents:
            parents.add(parent)
            first.append(element)
    return first


# --- the expressions -------------------------------------------------------------------------------

_CONSENT = _Verdicts(_xpaths._alt(_xpaths._CONSENT_ID_CLASS_TOKENS))
_DISCARD_ID = _Verdicts(
    _xpaths._alt(_xpaths._OVERALL_DISCARD_BOTH_TOKENS + _xpaths._OVERALL_DISCARD_ID_TOKENS)
)
_DISCARD_CLASS = _Verdicts(
    _xpaths._alt(_xpaths._OVERALL_DISCARD_BOTH_TOKENS + _xpaths._OVERALL_DISCARD_CLASS_TOKENS)
)
_DISCARD_SECTIONS = f"""
    .//*[self::div or self::item or self::list or self::p or self::section or self::span][
    @data-lp-replacement-content or
    contains(translate(@role, 'N', 'n'), 'nav') or
    contains(@data-component, 'MostPopularStories') or
    re:test(@id|@class, '{_CONSENT.pattern}') or
    re:test(@id, '{_DISCARD_ID.pattern}') or
    re:test(@class, '{_DISCARD_CLASS.pattern}')]
"""
_SECTION_TAGS = ("div", "item", "list", "p", "section", "span")


def discard_sections(context: _Element) -> list[_Element]:
    """OVERALL_DISCARD_XPATH[0] (_DISCARD_SECTIONS): sections named or marked as page furniture."""
    consent, by_id, by_class = _CONSENT, _DISCARD_ID, _DISCARD_CLASS
    found = []
    for element in context.iterdescendants(*_SECTION_TAGS):
        get = element.get
        id_, class_ = get("id"), get("class")
        if (
            by_class[class_ or ""]
            or by_id[id_ or ""]
            or consent[_first(element, "id", id_, "class", class_)]
            or get("data-lp-replacement-content") is not None
            or "nav" in (get("role") or "").replace("N", "n")
            or "MostPopularStories" in (get("data-component") or "")
        ):
            found.append(element)
    return found


_HIDDEN = _Verdicts("hidden")
_REPLY_ID = _Verdicts("reader-comments|akismet")
_REPLY_CLASS = _Verdicts(
    "^hide-|comments-title|nocomments|-reply-|message|akismet|suggest-links|-hide-|hide-print| hidden| hide"
    "|noprint|notloaded"
)
_DISCARD_HIDDEN = f"""
    .//*[@class='comments-title' or
    starts-with(@id|@class, 'reply-') or
    re:test(@id|@style, '{_HIDDEN.pattern}') or
    contains(@style, 'display:none') or contains(@style, 'display: none') or
    re:test(@id, '{_REPLY_ID.pattern}') or
    re:test(@class, '{_REPLY_CLASS.pattern}') or @aria-hidden='true']
"""


def discard_hidden(context: _Element) -> list[_Element]:
    """OVERALL_DISCARD_XPATH[1] (_DISCARD_HIDDEN): hidden elements and comment-form parts."""
    hidden, by_id, by_class = _HIDDEN, _REPLY_ID, _REPLY_CLASS
    found = []
    for element in context.iterdescendants("*"):
        get = element.get
        id_, class_, style = get("id"), get("class"), get("style")
        if (
            by_class[class_ or ""]
            or by_id[id_ or ""]
            or hidden[_first(element, "id", id_, "style", style)]
            or _first(element, "id", id_, "class", class_).startswith("reply-")
            or (style is not None and ("display:none" in style or "display: none" in style))
            or class_ == "comments-title"
            or get("aria-hidden") == "true"
        ):
            found.append(element)
    return found


_COMMENTS_ID = _Verdicts(f"^(?:{_xpaths._COMMENTS_ID}|disqus_thread|dsq-comments)")
_COMMENTS_CLASS = _Verdicts(_xpaths._COMMENTS_CLASS)
_COMMENT_LIST_ID = _Verdicts(f"^(?:{_xpaths._COMMENTS_ID})")
_REMOVE_COMMENTS_AND_LISTS = f"""
    .//*[self::div or self::list or self::section or self::details or self::ol or self::ul][
    re:test(@id, '{_COMMENTS_ID.pattern}') or
    re:test(@class, '{_COMMENTS_CLASS.pattern}')][
    not(self::ol or self::ul) or re:test(@id, '{_COMMENT_LIST_ID.pattern}') or
    re:test(@class, '{_COMMENTS_CLASS.pattern}')]
"""


def remove_comments_and_lists(context: _Element) -> list[_Element]:
    """REMOVE_COMMENTS_AND_LISTS_XPATH[0] (_REMOVE_COMMENTS_AND_LISTS): comment sections, and
    lists named as comments."""
    by_id, by_class, list_by_id = (
        _COMMENTS_ID,
        _COMMENTS_CLASS,
        _COMMENT_LIST_ID,
    )
    found = []
    for element in context.iterdescendants("div", "list", "section", "details", "ol", "ul"):
        id_, class_ = element.get("id") or "", element.get("class") or ""
        if (by_id[id_] or by_class[class_]) and (
            element.tag not in ("ol", "ul") or list_by_id[id_] or by_class[class_]
        ):
            found.append(element)
    return found


_APPENDED = _Verdicts("mvp-post-add-(?:box|wrap)|infinite-?scroll")
_APPENDED_BOX = _Verdicts("mvp-post-add-(?:box|wrap)")
_RAW_TREE_PRUNE = f"""
    .//*[self::div or self::section or self::aside][
    re:test(@id, '{_APPENDED.pattern}') or
    re:test(@class, '{_APPENDED.pattern}')][
    not(.//h1) or re:test(@id, '{_APPENDED_BOX.pattern}') or re:test(@class, '{_APPENDED_BOX.pattern}')]
"""


def appended_articles(context: _Element) -> list[_Element]:
    """RAW_TREE_PRUNE_XPATH[0] (_RAW_TREE_PRUNE): infinite-scroll containers of follow-up
    articles."""
    appended, box = _APPENDED, _APPENDED_BOX
    found = []
    for element in context.iterdescendants("div", "section", "aside"):
        id_, class_ = element.get("id") or "", element.get("class") or ""
        if (appended[id_] or appended[class_]) and (
            next(element.iterdescendants("h1"), None) is None or box[id_] or box[class_]
        ):
            found.append(element)
    return found


_CONTENT_TAGS = ("article", "div", "main", "section")
_ARTICLE_ID = _Verdicts(_xpaths._alt(_xpaths._ARTICLE_CONTENT_ID_TOKENS))
_ARTICLE_CLASS = _Verdicts(_xpaths._alt(_xpaths._ARTICLE_CONTENT_CLASS_TOKENS))
_ARTICLE_BODY = f"""
    .//*[self::article or self::div or self::main or self::section][
    @class='post' or @class='entry' or
    @itemprop='articleBody' or @id='articleContent' or
    re:test(@id, '{_ARTICLE_ID.pattern}') or
    re:test(@class, '{_ARTICLE_CLASS.pattern}')
    ][1]
"""


def article_body(context: _Element) -> list[_Element]:
    """BODY_XPATH[0] (_ARTICLE_BODY): containers named as an article's body, the first of each
    parent's children that is one."""
    by_id, by_class = _ARTICLE_ID, _ARTICLE_CLASS

    def matching() -> Iterator[_Element]:
        for element in context.iterdescendants(*_CONTENT_TAGS):
            get = element.get
            id_, class_ = get("id"), get("class")
            if (
                class_ == "post"
                or class_ == "entry"
                or get("itemprop") == "articleBody"
                or id_ == "articleContent"
                or by_id[id_ or ""]
                or by_class[class_ or ""]
            ):
                yield element

    return _first_per_parent(matching())


_STORY_ID = _Verdicts(_xpaths._alt(_xpaths._STORY_ID_TOKENS))
_FULLTEXT = _Verdicts("fulltext", ignore_case=True)
_STORY_CLASS = _Verdicts(_xpaths._alt(_xpaths._STORY_CLASS_TOKENS))
_STORY = f"""
    (.//*[self::article or self::div or self::main or self::section][
    @role='article' or
    @id='article' or @id='story' or
    @class='postarea' or @class='art-postcontent' or @class='text' or @class='cell' or @class='story' or
    re:test(@id, '{_STORY_ID.pattern}') or
    re:test(@class, '{_FULLTEXT.pattern}', 'i') or
    re:test(@class, '{_STORY_CLASS.pattern}')
    ])[1]
"""
_STORY_CLASSES = frozenset({"postarea", "art-postcontent", "text", "cell", "story"})


def story(context: _Element) -> list[_Element]:
    """BODY_XPATH[2] (_STORY): the first container named as a story."""
    by_id, fulltext, by_class = _STORY_ID, _FULLTEXT, _STORY_CLASS
    for element in context.iterdescendants(*_CONTENT_TAGS):
        get = element.get
        id_, class_ = get("id"), get("class")
        if (
            get("role") == "article"
            or id_ == "article"
            or id_ == "story"
            or class_ in _STORY_CLASSES
            or by_id[id_ or ""]
            or fulltext[class_ or ""]
            or by_class[class_ or ""]
        ):
            return [element]
    return []


_MAIN_ID = _Verdicts(_xpaths._alt(_xpaths._MAIN_CONTENT_ID_TOKENS))
_MAIN_CLASS = _Verdicts(_xpaths._alt(_xpaths._MAIN_CONTENT_CLASS_TOKENS))
_MAIN_CONTENT = f"""
    (.//*[self::article or self::div or self::main or self::section][
    @id='content' or @class='content' or
    re:test(@id, '{_MAIN_ID.pattern}') or
    re:test(@class, '{_MAIN_CLASS.pattern}') or
    contains(translate(@id, 'CM','cm'), 'main-content') or
    contains(translate(@class, 'CM','cm'), 'main-content') or
    contains(translate(@class, 'CP','cp'), 'page-content')
    ])[1]
"""


def main_content(context: _Element) -> list[_Element]:
    """BODY_XPATH[3] (_MAIN_CONTENT): the first container named as the main content."""
    by_id, by_class = _MAIN_ID, _MAIN_CLASS
    for element in context.iterdescendants(*_CONTENT_TAGS):
        get = element.get
        id_, class_ = get("id") or "", get("class") or ""
        if (
            id_ == "content"
            or class_ == "content"
            or by_id[id_]
            or by_class[class_]
            or "main-content" in id_.replace("C", "c").replace("M", "m")
            or "main-content" in class_.replace("C", "c").replace("M", "m")
            or "page-content" in class_.replace("C", "c").replace("P", "p")
        ):
            return [element]
    return []


_COOKIE_BANNER = _Verdicts(_settings._COOKIE_CONSENT_RE, ignore_case=True)
_BASIC_CLEAN = (
    ".//aside|.//div[contains(@class|@id, 'footer')]|.//fencedframe|.//footer|"
    ".//script|.//style|.//svg|.//template|"
    f".//*[re:test(@class, '{_COOKIE_BANNER.pattern}', 'i') or "
    f"re:test(@id, '{_COOKIE_BANNER.pattern}', 'i')]"
)
_BASIC_CLEAN_TAGS = frozenset({"aside", "fencedframe", "footer", "script", "style", "svg", "template"})


def basic_clean(context: _Element) -> list[_Element]:
    """BASIC_CLEAN_XPATH (_BASIC_CLEAN): asides, footers, scripts, styles and cookie banners, in
    document order, each once (as a union of paths gives them)."""
    banner = _COOKIE_BANNER
    found = []
    for element in context.iterdescendants("*"):
        tag = element.tag
        get = element.get
        id_, class_ = get("id"), get("class")
        if (
            tag in _BASIC_CLEAN_TAGS
            or (tag == "div" and "footer" in _first(element, "class", class_, "id", id_))
            or banner[class_ or ""]
            or banner[id_ or ""]
        ):
            found.append(element)
    return found


class Expression:
    """Stands in for one of trafilatura's XPath expressions: called on an element, it returns the
    elements the XPath returns, in the same order; its string is the XPath's (trafilatura logs
    it)."""

    __slots__ = ("original", "path", "select")

    def __init__(self, original: XPath, path: str, select: Select) -> None:
        self.original = original
        self.path = path
        """The XPath's text as transcribed for ``select``: the replacement is made only where it is
        the text of ``original`` (whitespace aside)."""
        self.select = select

    def __call__(self, context: _Element) -> list[_Element]:
        return self.select(context)

    def __str__(self) -> str:
        return str(self.original)

    def transcribes(self) -> bool:
        """Whether ``path`` is the original's text, whitespace aside (every pattern is compared
        as written: none holds a run of whitespace)."""
        return " ".join(self.path.split()) == " ".join(self.original.path.split())


# --- prune_unwanted_nodes --------------------------------------------------------------------------


def outermost(matches: Iterable[_Element]) -> list[_Element]:
    """The matches none of whose ancestors is a match, in the order given.

    trafilatura walks all the ancestors of every match (its cost grows with the number of matches
    times the nesting); here each element's answer ("a match above it?") is kept, so that the walk
    from a match up stops at the first element already answered or matched: each element of the
    tree is visited once at most.
    """
    matched = matches if isinstance(matches, dict | set) else dict.fromkeys(matches)
    below_match: dict[_Element, bool] = {}
    outer = []
    for element in matched:
        path = []
        node = element.getparent()
        verdict = False
        while node is not None:
            if node in matched:
                verdict = True
                break
            known = below_match.get(node)
            if known is not None:
                verdict = known
                break
            path.append(node)
            node = node.getparent()
        for node in path:
            below_match[node] = verdict
        if not verdict:
            outer.append(element)
    return outer


def prune_unwanted_nodes(tree: Any, nodelist: list[Any], with_backup: bool = False) -> Any:
    """htmlprocessing.prune_unwanted_nodes, the outermost matches found by ``outermost``: the same
    elements deleted in the same order, under the same guard."""
    if not with_backup:
        for expression in nodelist:
            for subtree in expression(tree):
                _delete_element(subtree)  # the tail text is preserved
        return tree
    # guard: prune nothing if it would remove too much text, the tree keeps its elements
    matches = dict.fromkeys(elem for expression in nodelist for elem in expression(tree))
    outer: list[Any] = outermost(matches)
    old_len = len(tree.text_content())
    if old_len - sum(len(elem.text_content()) for elem in outer) > old_len / 7:
        for elem in outer:
            _delete_element(elem)
    return tree


# --- reading a tree handed over ---------------------------------------------------------------------

_given = threading.local()


def main_text(tree: HtmlElement, url: str | None, readability: HtmlElement | None = None) -> str:
    """The text of ``bare_extraction(tree, url=url, include_comments=False, include_tables=True,
    include_images=True)``, '' where it gives none; ``tree`` is handed over (the reading changes
    it) and ``readability`` is readability's main content of the same page, if the caller has it.

    bare_extraction copies a tree it is given before reading it, and _extract_and_compare copies
    it again for readability, which trafilatura then runs a second time: with the replacements
    installed, neither copy is made (the caller's tree is the first copy; readability gets one of
    its own only where it runs) and ``readability`` stands for trafilatura's own reading
    (try_readability). Without them, this is bare_extraction as released."""
    if not installed():
        return _bare_text(tree, url)
    _given.readability = readability
    try:
        options = _settings.Extractor(
            output_format="python", comments=False, images=True, tables=True, url=url or None
        )
        body, text, _, comments = _core.trafilatura_sequence(tree, options, options.url)
        if options.max_tree_size and len(body) > options.max_tree_size:
            _core.strip_tags(body, "hi")
            if len(body) > options.max_tree_size:
                return ""
        if len(text) < options.min_output_size and len(comments) < options.min_output_comm_size:
            return ""
        return str(_core.xmltotxt(body, options.formatting) or "")
    except (TypeError, ValueError):  # what bare_extraction turns into None
        return ""
    finally:
        _given.readability = None


def _bare_text(tree: HtmlElement, url: str | None) -> str:
    document = trafilatura.bare_extraction(
        tree, url=url or None, include_comments=False, include_tables=True, include_images=True
    )
    if document is None or isinstance(document, dict):  # (a dict only when as_dict=True is asked for)
        return ""
    return str(document.text or "")


_try_readability: Callable[[HtmlElement], HtmlElement] = _external.try_readability


def try_readability(htmlinput: HtmlElement) -> HtmlElement:
    """external.try_readability: a copy of the readability result main_text was given, or
    readability run on a copy of ``htmlinput`` (it changes the tree it reads, which
    trafilatura reads again later; extract_and_compare no longer copies it)."""
    summary: HtmlElement | None = getattr(_given, "readability", None)
    if summary is not None:
        return copy.deepcopy(summary)  # (trafilatura changes what it is handed)
    return _try_readability(copy.copy(htmlinput))


def extract_and_compare(
    cleaned_tree: HtmlElement, cleaned_tree_backup: HtmlElement, tree: HtmlElement, options: Any
) -> tuple[_Element, str]:
    """core._extract_and_compare, without its copy of the raw tree: compare_extraction changes it
    only to favour precision (a copy is made then), and hands it to try_readability, which makes
    its own copy where it reads it."""
    postbody, temp_text = _core.extract_content(cleaned_tree, options)
    if not options.fast:
        raw = copy.copy(tree) if options.focus == "precision" else tree
        postbody, temp_text = _core.compare_extraction(cleaned_tree_backup, raw, postbody, temp_text, options)
    return postbody, temp_text


# --- installing ------------------------------------------------------------------------------------


def _expressions() -> list[tuple[list[Any], int, Expression]]:
    """Each replaced XPath expression: the list trafilatura reads it from (every module that uses
    it reads the same list), its place there, and its replacement."""
    replacements = [
        (_xpaths.OVERALL_DISCARD_XPATH, 0, _DISCARD_SECTIONS, discard_sections),
        (_xpaths.OVERALL_DISCARD_XPATH, 1, _DISCARD_HIDDEN, discard_hidden),
        (_xpaths.REMOVE_COMMENTS_AND_LISTS_XPATH, 0, _REMOVE_COMMENTS_AND_LISTS, remove_comments_and_lists),
        (_xpaths.RAW_TREE_PRUNE_XPATH, 0, _RAW_TREE_PRUNE, appended_articles),
        (_xpaths.BODY_XPATH, 0, _ARTICLE_BODY, article_body),
        (_xpaths.BODY_XPATH, 2, _STORY, story),
        (_xpaths.BODY_XPATH, 3, _MAIN_CONTENT, main_content),
    ]
    expressions = []
    for where, index, path, select in replacements:
        original = where[index]
        original = original.original if isinstance(original, Expression) else original
        expressions.append((where, index, Expression(original, path, select)))
    return expressions


_BASIC_CLEAN_EXPRESSION = Expression(_settings.BASIC_CLEAN_XPATH, _BASIC_CLEAN, basic_clean)

_FUNCTIONS: dict[str, tuple[Any, Callable[..., Any]]] = {
    # name -> (the module that defines it, its replacement)
    "prune_unwanted_nodes": (_htmlprocessing, prune_unwanted_nodes),
    "try_readability": (_external, try_readability),
    "_extract_and_compare": (_core, extract_and_compare),
}

_undo: list[Callable[[], None]] = []


def installed() -> bool:
    """Whether the replacements are in place."""
    return bool(_undo)


def _callers(original: Callable[..., Any], name: str) -> list[Any]:
    """The trafilatura modules loaded that hold ``original`` under ``name`` (its own, and those that
    import it by name; one loaded later imports the replacement)."""
    return [
        module
        for module_name, module in list(sys.modules.items())
        if (module_name == "trafilatura" or module_name.startswith("trafilatura."))
        and getattr(module, name, None) is original
    ]


def install() -> None:
    """Put the replacements in place of trafilatura's own, in every module that calls them (once;
    nothing is replaced under any release but RELEASE, nor any expression whose text differs from
    the one transcribed)."""
    if _undo or trafilatura.__version__ != RELEASE:
        return
    for where, index, expression in _expressions():
        if expression.transcribes():
            _undo.append(partial(where.__setitem__, index, where[index]))
            where[index] = expression
    if _BASIC_CLEAN_EXPRESSION.transcribes():
        for module in _callers(_BASIC_CLEAN_EXPRESSION.original, "BASIC_CLEAN_XPATH"):
            _undo.append(partial(setattr, module, "BASIC_CLEAN_XPATH", _BASIC_CLEAN_EXPRESSION.original))
            module.BASIC_CLEAN_XPATH = _BASIC_CLEAN_EXPRESSION
    for name, (home, replacement) in _FUNCTIONS.items():
        original = getattr(home, name)
        for module in _callers(original, name):
            _undo.append(partial(setattr, module, name, original))
            setattr(module, name, replacement)


def uninstall() -> None:
    """Put trafilatura's own functions and expressions back."""
    while _undo:
        _undo.pop()()


@contextmanager
def originals() -> Iterator[None]:
    """trafilatura as released, for as long as the block runs (to compare the two)."""
    was_installed = installed()
    uninstall()
    try:
        yield
    finally:
        if was_installed:
            install()
