"""readability-lxml 0.9's ``Document``, its costliest steps redone to give exactly the same tree.

readability spends most of its time on Python work it repeats: it serialises every <div>'s children
to look for a block tag in the markup (quadratic in the nesting), measures the same elements' text
again and again (``text_content()`` and three regular expressions each time), and runs regular
expressions over every element's class and id. ``FastDocument`` overrides those methods with ones
that read each answer once, and is otherwise readability's: every override returns and mutates
exactly what the method it replaces does, element for element (checked page by page against the
unmodified methods on the zyte and WCXB pages, and in tests/fetch/test_readability_fast.py).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from lxml.etree import tostring, tounicode
from lxml.html import fragment_fromstring
from readability.debug import describe, text_content
from readability.readability import REGEXES, Document, is_video_url

log = logging.getLogger("readability.readability")
"""readability's own logger: its debug messages are written as readability writes them, but only
built when they are to be written (readability formats each one, element descriptions included,
whether or not it is)."""

_BLOCK_TAG = REGEXES["divToPElementsRe"]
_UNLIKELY = REGEXES["unlikelyCandidatesRe"]
_MAYBE_CANDIDATE = REGEXES["okMaybeItsACandidateRe"]
_POSITIVE = REGEXES["positiveRe"]
_NEGATIVE = REGEXES["negativeRe"]
_CALL_TO_ACTION = REGEXES["callToActionRe"]
# The same patterns without re.IGNORECASE, for ASCII text lowercased: their words are lowercase
# ASCII, which match an ASCII string in any case exactly where they match it lowercased (the
# case-insensitive patterns also match the Kelvin sign, a long s and the like: others go to them).
_UNLIKELY_LOWER = re.compile(_UNLIKELY.pattern)
_MAYBE_CANDIDATE_LOWER = re.compile(_MAYBE_CANDIDATE.pattern)
_POSITIVE_LOWER = re.compile(_POSITIVE.pattern)
_NEGATIVE_LOWER = re.compile(_NEGATIVE.pattern)

_INLINE_TAGS = frozenset(
    {"a", "b", "cite", "code", "em", "font", "i", "small", "span", "strong", "sub", "sup", "u"}
)
_PLAIN_TAG = re.compile(r"[A-Za-z0-9:_.-]+")
_LT_IN_TEXT = "descendant-or-self::text()[contains(., '<')] | descendant-or-self::*/@*[contains(., '<')]"

_LONG_SPACE = re.compile(r"\s{255,}")
_NEWLINE = re.compile(r"\s*\n\s*")
_BLANKS = re.compile(r"\t|[ \t]{2,}")


def clean_text(text: str) -> str:
    """readability's ``clean`` (the same three substitutions, then strip), skipping each one that
    cannot match: a run of 255 whitespace characters needs 255 characters, the second pattern a
    newline, the third a tab or two spaces. Most texts need none of them."""
    if len(text) >= 255:
        text = _LONG_SPACE.sub(" " * 255, text)
    if "\n" in text:
        text = _NEWLINE.sub("\n", text)
    if "\t" in text or "  " in text:
        text = _BLANKS.sub(" ", text)
    return text.strip()


def text_length(element: Any) -> int:
    """readability's ``text_length``: the length of the element's text, ``clean``-ed."""
    return len(clean_text(element.text_content() or ""))


class _TextLengths:
    """``text_length`` of elements, each measured once while its subtree stays as it was.

    An element's text is its subtree's (never its tail), so dropping or changing an element
    changes only its own and its ancestors' lengths: ``forget`` it before.
    """

    def __init__(self) -> None:
        self._known: dict[Any, int] = {}

    def __call__(self, element: Any) -> int:
        known = self._known.get(element)
        if known is None:
            known = self._known[element] = text_length(element)
        return known

    def forget(self, element: Any) -> None:
        self._known.pop(element, None)
        for ancestor in element.iterancestors():
            self._known.pop(ancestor, None)


def _mark_up(node: Any, marked: set[Any]) -> None:
    """Add ``node`` and its ancestors to ``marked``, up to the first already in it (whose ancestors
    are then in it too): marking the ancestors of every element this way is linear in the tree."""
    while node is not None and node not in marked:
        marked.add(node)
        node = node.getparent()


def _opens_block(tag: str) -> bool:
    """Whether a start tag ``<tag`` matches divToPElementsRe, written out as readability searches
    it (the ``str()`` of UTF-8 bytes: a prefix of the tag, ASCII letters only, in any case)."""
    return _BLOCK_TAG.search(str(("<" + tag).encode("utf-8"))) is not None


def _unlikely(feature: str, seen: dict[str, tuple[bool, bool]]) -> tuple[bool, bool]:
    """Whether a class or id matches unlikelyCandidatesRe, and whether okMaybeItsACandidateRe."""
    if feature.isascii():
        lower = feature.lower()
        verdict = (bool(_UNLIKELY_LOWER.search(lower)), bool(_MAYBE_CANDIDATE_LOWER.search(lower)))
    else:
        verdict = (bool(_UNLIKELY.search(feature)), bool(_MAYBE_CANDIDATE.search(feature)))
    seen[feature] = verdict
    return verdict


def _feature_weight(feature: str) -> int:
    """What a class or id adds to class_weight: -25 for negativeRe, +25 for positiveRe."""
    if feature.isascii():
        lower = feature.lower()
        return (-25 if _NEGATIVE_LOWER.search(lower) else 0) + (25 if _POSITIVE_LOWER.search(lower) else 0)
    return (-25 if _NEGATIVE.search(feature) else 0) + (25 if _POSITIVE.search(feature) else 0)


class FastDocument(Document):  # type: ignore[misc]  # readability-lxml ships no types
    """readability-lxml's ``Document``, with the same output in a fraction of the time."""

    _lengths: _TextLengths | None = None
    """Text lengths measured since the tree last changed, while a step that reads many of them
    runs (score_paragraphs and the candidate choices after it, sanitize); None otherwise."""

    _feature_weights: dict[str, int] | None = None
    """class_weight's share of each class or id seen on this page."""

    def _measure(self, element: Any) -> int:
        return self._lengths(element) if self._lengths is not None else text_length(element)

    def get_link_density(self, elem: Any) -> float:
        """readability's: the share of the element's text in links, each length measured once
        per step (nested candidates hold the same links)."""
        link_length = 0
        for link in elem.findall(".//a"):
            link_length += self._measure(link)
        total_length = self._measure(elem)
        return float(link_length) / max(total_length, 1)

    def class_weight(self, e: Any) -> int:
        """readability's, each distinct class or id matched against its patterns once."""
        if self.positive_keywords or self.negative_keywords:
            weight: int = super().class_weight(e)
            return weight
        if self._feature_weights is None:
            self._feature_weights = {}
        weights = self._feature_weights
        weight = 0
        for feature in (e.get("class", None), e.get("id", None)):
            if feature:
                known = weights.get(feature)
                if known is None:
                    known = weights[feature] = _feature_weight(feature)
                weight += known
        return weight

    def remove_unlikely_candidates(self) -> None:
        """readability's: drops the elements whose class and id look like page furniture.

        Only elements with a class or an id can match (readability skips the others, whose
        ``"class id"`` is one character). Neither pattern holds a space, so neither matches across
        the two: each distinct class and id is matched once, on its own.
        """
        self._lengths = None
        seen: dict[str, tuple[bool, bool]] = {"": (False, False)}
        for elem in self.html.xpath("descendant::*[@class or @id]"):
            class_, id_ = elem.get("class", ""), elem.get("id", "")
            if not class_ and not id_:
                continue
            unlikely_class, maybe_class = seen.get(class_) or _unlikely(class_, seen)
            unlikely_id, maybe_id = seen.get(id_) or _unlikely(id_, seen)
            if (
                (unlikely_class or unlikely_id)
                and not (maybe_class or maybe_id)
                and elem.tag not in ["html", "body"]
                and not elem.xpath("ancestor-or-self::pre | ancestor-or-self::code")
                and not elem.xpath(
                    "descendant-or-self::main | descendant-or-self::article | descendant-or-self::math"
                )
            ):
                if log.isEnabledFor(logging.DEBUG):
                    log.debug("Removing unlikely candidate - %s", describe(elem))
                elem.drop_tree()

    def transform_misused_divs_into_paragraphs(self) -> None:
        """readability's: <div>s without block elements become <p>s, and the inline runs and
        loose text of the others are wrapped in <p>s.

        readability decides both by serialising the markup below each <div> and searching it for
        divToPElementsRe, a cost that grows with the square of the nesting. The markup matches
        only where a start tag's name begins with one of its words (text and attribute values are
        escaped; end tags start ``</``), or where a comment or processing instruction, written
        out as it is, holds one. So each element is looked at once, and every element with such
        a tag or node below it is marked. Renaming a <div> to <p> changes no mark (both match),
        and the wrapping of one <div>'s children never changes what is below another's children,
        so the marks hold to the end. Where the HTML serialisation of an inline child could hold
        a ``<`` the marks do not account for (text or attribute values with one, which it may
        leave raw, comments, unusual tag names), that child is serialised and searched as
        readability does.
        """
        self._lengths = None
        root = self.html
        below: set[Any] = set()  # elements with a matching tag, comment or instruction below
        irregular: set[Any] = set()  # elements whose HTML serialisation is searched as it is
        tags: dict[str, bool] = {}
        for node in root.iterdescendants():
            tag = node.tag
            if isinstance(tag, str):
                opens = tags.get(tag)
                if opens is None:
                    if not _PLAIN_TAG.fullmatch(tag):  # a namespace, or a name libxml2 never makes
                        Document.transform_misused_divs_into_paragraphs(self)
                        return
                    opens = tags[tag] = _opens_block(tag)
                if opens:
                    _mark_up(node.getparent(), below)
            else:
                _mark_up(node, irregular)
                if _BLOCK_TAG.search(str(tostring(node, encoding="utf-8", with_tail=False))):
                    _mark_up(node.getparent(), below)
        for text in root.xpath(_LT_IN_TEXT):
            _mark_up(text.getparent(), irregular)

        for elem in root.findall(".//div"):
            if elem not in below:
                elem.tag = "p"

        for elem in root.findall(".//div"):
            children = list(elem)
            paragraph = None
            if elem.text and elem.text.strip():
                p = fragment_fromstring("<p/>")
                p.text = elem.text
                elem.text = None
                elem.insert(0, p)
                paragraph = p

            for child in children:
                if child.tag == "br":
                    paragraph = None
                    continue
                if child.tag not in _INLINE_TAGS or (
                    _BLOCK_TAG.search(tounicode(child, method="html"))
                    if child in irregular
                    else child in below or tags[child.tag]
                ):
                    paragraph = None
                    continue
                if paragraph is None:
                    paragraph = fragment_fromstring("<p/>")
                    child.addprevious(paragraph)
                paragraph.append(child)

            for pos, child in reversed(list(enumerate(elem))):
                if child.tail and child.tail.strip():
                    p = fragment_fromstring("<p/>")
                    p.text = child.tail
                    child.tail = None
                    elem.insert(pos + 1, p)
                if child.tag == "br":
                    child.drop_tree()

    def score_paragraphs(self) -> dict[Any, dict[str, Any]]:
        """readability's: scores the parents and grandparents of paragraphs by their text.

        A paragraph's commas are counted in its raw text (``clean`` only changes whitespace), and
        text lengths are kept from here until get_article changes the tree (link densities of
        nested candidates measure the same links).
        """
        self._lengths = _TextLengths()
        min_len = self.min_text_length
        candidates: dict[Any, dict[str, Any]] = {}
        ordered = []
        for elem in self.tags(self._html(), "p", "pre", "td", "blockquote"):
            parent_node = elem.getparent()
            if parent_node is None:
                continue
            grand_parent_node = parent_node.getparent()

            raw_text = elem.text_content() or ""
            inner_text_len = len(clean_text(raw_text))
            if inner_text_len < min_len:
                continue

            if parent_node not in candidates:
                candidates[parent_node] = self.score_node(parent_node)
                ordered.append(parent_node)

            if grand_parent_node is not None and grand_parent_node not in candidates:
                candidates[grand_parent_node] = self.score_node(grand_parent_node)
                ordered.append(grand_parent_node)

            content_score: float = 1
            content_score += raw_text.count(",") + 1
            content_score += min((inner_text_len / 100), 3)
            candidates[parent_node]["content_score"] += content_score
            if grand_parent_node is not None:
                candidates[grand_parent_node]["content_score"] += content_score / 2.0

        for elem in ordered:
            candidate = candidates[elem]
            ld = self.get_link_density(elem)
            score = candidate["content_score"]
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "Branch %6.3f %s link density %.3f -> %6.3f", score, describe(elem), ld, score * (1 - ld)
                )
            candidate["content_score"] *= 1 - ld

        return candidates

    def get_article(self, candidates: Any, best_candidate: Any, html_partial: bool = False) -> Any:
        """readability's; the text lengths measured so far go, as it moves elements around."""
        self._lengths = None
        return super().get_article(candidates, best_candidate, html_partial=html_partial)

    def sanitize(self, node: Any, candidates: Any, keep_all_images: bool = False) -> str:
        """readability's clean-up of the article, text lengths measured once for as long as the
        element's subtree stays the same (readability measures each container, its links and its
        siblings over and over), and no debug message built unless it is written."""
        lengths = self._lengths = _TextLengths()
        debug = log.isEnabledFor(logging.DEBUG)
        try:
            min_len = self.min_text_length
            for header in self.tags(node, "h1", "h2", "h3", "h4", "h5", "h6"):
                if self.class_weight(header) < 0 or self.get_link_density(header) > 0.33:
                    lengths.forget(header)
                    header.drop_tree()

            for elem in self.tags(node, "p"):
                if _CALL_TO_ACTION.search(elem.text_content()) and self.get_link_density(elem) > 0.2:
                    lengths.forget(elem)
                    elem.drop_tree()

            for elem in self.tags(node, "form", "textarea"):
                lengths.forget(elem)
                elem.drop_tree()

            for elem in self.tags(node, "iframe"):
                lengths.forget(elem)
                if "src" in elem.attrib and is_video_url(elem.attrib["src"]):
                    elem.attrib.pop("srcdoc", None)
                    elem.text = "VIDEO"
                else:
                    elem.drop_tree()

            allowed = self.get_preserved_elements(node)
            for el in self.reverse_tags(node, "table", "ul", "div", "aside", "header", "footer", "section"):
                if el in allowed:
                    continue
                weight = self.class_weight(el)
                content_score = candidates[el]["content_score"] if el in candidates else 0
                tag = el.tag

                if weight + content_score < 0:
                    if debug:
                        log.debug(
                            "Removed %s with score %6.3f and weight %-3s", describe(el), content_score, weight
                        )
                    lengths.forget(el)
                    el.drop_tree()
                elif el.text_content().count(",") < 10:
                    counts = {}
                    # (readability counts the <a>s too, and never reads the count)
                    for kind in ["p", "img", "li", "embed", "input"]:
                        counts[kind] = len(el.findall(f".//{kind}"))
                    counts["li"] -= 100
                    counts["input"] -= len(el.findall('.//input[@type="hidden"]'))

                    content_length = lengths(el)
                    link_density = self.get_link_density(el)
                    parent_node = el.getparent()
                    if parent_node is not None:
                        if parent_node in candidates:
                            content_score = candidates[parent_node]["content_score"]
                        else:
                            content_score = 0
                    to_remove = False
                    reason = ""

                    if keep_all_images and el.tag == "div" and counts["img"] >= 1:
                        continue
                    if counts["p"] and counts["img"] > 1 + counts["p"] * 1.3:
                        reason = f"too many images ({counts['img']})"
                        to_remove = True
                    elif counts["li"] > counts["p"] and tag not in ("ol", "ul"):
                        reason = "more <li>s than <p>s"
                        to_remove = True
                    elif counts["input"] > (counts["p"] / 3):
                        reason = "less than 3x <p>s than <input>s"
                        to_remove = True
                    elif content_length < min_len and counts["img"] == 0:
                        reason = f"too short content length {content_length} without a single image"
                        to_remove = True
                    elif content_length < min_len and counts["img"] > 2:
                        reason = f"too short content length {content_length} and too many images"
                        to_remove = True
                    elif (
                        weight < 25
                        and link_density
                        > (
                            0.25
                            if tag in ("ul", "section") and el.xpath("ancestor::main | ancestor::article")
                            else 0.2
                        )
                    ) or (weight >= 25 and link_density > 0.5):
                        reason = f"too many links {link_density:.3f} for its weight {weight}"
                        to_remove = True
                    elif (counts["embed"] == 1 and content_length < 75) or counts["embed"] > 1:
                        reason = "<embed>s with too short content length, or too many <embed>s"
                        to_remove = True
                    elif not content_length:
                        reason = "no content"
                        to_remove = True
                        # readability's search for the nearest sibling with text on either side
                        # (its counters are set to 1, never incremented: one each way at most)
                        i, j = 0, 0
                        x = 1
                        siblings = []
                        for sib in el.itersiblings():
                            sib_content_length = lengths(sib)
                            if sib_content_length:
                                i = +1
                                siblings.append(sib_content_length)
                                if i == x:
                                    break
                        for sib in el.itersiblings(preceding=True):
                            sib_content_length = lengths(sib)
                            if sib_content_length:
                                j = +1
                                siblings.append(sib_content_length)
                                if j == x:
                                    break
                        if siblings and sum(siblings) > 1000:
                            to_remove = False
                            if debug:
                                log.debug("Allowing %s", describe(el))
                            for desnode in self.tags(el, "table", "ul", "div", "section"):
                                allowed[desnode] = True

                    if to_remove:
                        if debug:
                            log.debug(
                                "Removed %6.3f %s with weight %s cause it has %s.",
                                content_score,
                                describe(el),
                                weight,
                                reason,
                            )
                        lengths.forget(el)
                        el.drop_tree()
                    elif debug:
                        log.debug(
                            "Not removing %s of length %s: %s", describe(el), content_length, text_content(el)
                        )
        finally:
            self._lengths = None

        self.html = node
        html: str = self.get_clean_html()
        return html
