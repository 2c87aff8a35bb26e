"""The posts of a thread: who wrote each one and when, written with it, and not its counters.

Forum and Q&A engines (Discourse, phpBB, vBulletin, XenForo, Stack Exchange, GitHub issues,
comment sections) set each post's author and date in a header of links, icons and layout, which
the main content either drops (it is not prose) or keeps as it is ("amondale (Amondale)",
"November 8, 2024, 7:33pm", "1" on three lines; "Post by amondale » 08. Nov 2024"), with "3 Likes"
after the text. Here each post of a thread gets one line before its text instead,
``**author** · date``: the author as the page names them, the date as the page shows it when that
holds a year, else from its machine-readable form (``<time datetime>``), and the header they came
from goes when it held little else. Counters ("3 Likes", "12 replies") go.

A post is an element typed as one in schema.org microdata (DiscussionForumPosting, Comment,
Answer...) or named like one ("post", "message", "comment", "answer"...), that holds a date and,
near it, an author. A page is a thread when it has at least two such posts and does not say it is
an article (a blog post's byline is the page's, not a post's).

The posts are found before the main content is chosen (find_posts), without changing the tree, so
that the selection sees the page as it is; their lines are written into what it kept
(write_bylines), for each post of which anything is left.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

import lxml.html
from lxml import etree

from mcp_server_web.fetch.doc.html_tree import collapse

MIN_POSTS = 2
BUDGET = 100_000
"""Elements looked at in all, over all candidates: past it the page's remaining posts are left as
they are (a thread of 50 posts costs a few thousand elements; nested candidates cost more)."""
SCAN = 400
"""The elements of a post looked at for its author and date: they head the post (or close it,
on Stack Exchange), never thousands of elements into it."""
AUTHOR_LEVELS = 12
"""The author is looked for in at most this many elements around the date, widening."""
TEXT_NODES = 16
"""The elements read for a short text (an author's name, a date)."""
MAX_AUTHOR_CHARS = 80
MAX_DATE_CHARS = 60
MAX_HEADER_LEFT = 4
"""The header an author and date came from goes when it holds at most this many other words
("Post by", a post number); else only they go."""

_POST_TYPES = frozenset(
    {"DiscussionForumPosting", "Comment", "Answer", "Question", "SocialMediaPosting", "Message"}
)
_POST_WORDS = frozenset(
    {"post", "message", "comment", "answer", "question", "postbit", "postcontainer", "reply", "tweet"}
)
_NEVER_POSTS = frozenset({"html", "body", "main"})
"""Named like a post ("question-page"), but the page, whose thread is inside."""
_PART_WORDS = frozenset(
    {
        "signature", "meta", "header", "info", "infos", "details", "footer", "actions", "menu", "votes",
        "body", "layout", "cell",
    }
)  # fmt: skip
"""Named like a part of a post ("post-signature", "crawler-post-meta", "post-body",
"post-layout"), not a post."""
_EDITED = re.compile(r"^(?:last\s+)?(?:edited|updated|modified|active)\b", re.IGNORECASE)
"""A date for when the post was changed, not written (Stack Exchange shows the editor's first)."""
_AUTHOR_PROPS = frozenset({"author", "creator"})
_AUTHOR_WORDS = frozenset({"author", "username", "poster", "creator", "postauthor", "byline", "usr"})
_DATE_PROPS = frozenset({"datePublished", "dateCreated", "uploadDate"})
_DATE_TAGS = frozenset({"time", "relative-time", "local-time", "time-ago"})
_DATE_WORDS = frozenset(
    {"date", "time", "timestamp", "datetime", "relativetime", "published", "posted", "postdate", "dateline"}
)
_PROFILE_HREF = re.compile(
    r"(?:/u/|/users?/|/members?/|/profile/|/profiles/|memberlist\.php\?[^#]*viewprofile|member\.php\?)", re.I
)
_ACCOUNT_HREF = re.compile(r"log-?in|log-?out|sign-?in|sign-?up|register", re.IGNORECASE)
"""A link under /users/ to an account's pages ("/users/login"), not to a person."""
_NAME_SPLIT = re.compile(r"[-_\s:/.]+|(?<=[a-z])(?=[A-Z])")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b|'\d\d\b")
_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}))?")
_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"[^\W_]+")
_COUNTER = re.compile(
    r"^(?:[\d.,]+\s*[km]?\s*(?:likes?|replies|reply|views?|votes?|points?|reactions?|upvotes?|"
    r"downvotes?|thanks|loves?|hearts?|comments?)|(?:likes?|replies|views?|votes?|points?)\s*:?\s*[\d.,]+[km]?)$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Post:
    """A post of a thread, as found on the page before it was cut down."""

    element: lxml.html.HtmlElement
    author: lxml.html.HtmlElement
    date: lxml.html.HtmlElement
    header: lxml.html.HtmlElement | None
    """What held the author and date and little else, which goes with them."""
    name: str
    when: str


def find_posts(body: lxml.html.HtmlElement, kinds: frozenset[str]) -> list[Post]:
    """The posts of the thread in ``body``, in document order; none when it is not a thread."""
    if "article" in kinds:
        return []
    found: list[Post] = []
    search = _Search()
    # Innermost first (reverse document order), so that a post's search skips the posts in it.
    candidates = [element for element in body.iter(etree.Element) if _is_post(element)]
    for post in reversed(candidates):
        if search.left <= 0:
            break
        date = _first(post, search, _is_date)
        if date is None:
            continue
        author = _author_near(date, post, search)
        if author is None or not _holds_more(post, search, author, date):
            continue  # no author, or only a post's header ("post-meta"), not the post
        search.found.add(post)
        header = _header(post, author, date)
        found.append(Post(post, author, date, header, _author_text(author), _date_text(date)))
    return list(reversed(found)) if len(found) >= MIN_POSTS else []


def write_bylines(body: lxml.html.HtmlElement, posts: list[Post]) -> None:
    """Give each post still in ``body`` with text left its byline, where its author and date were
    (else first in it), and take out its author, date (or their header) and counters, in place."""
    elements = {post.element for post in posts}
    for post in posts:
        if not _inside(post.element, body) or not _has_text(post.element):
            continue
        search = _Search()
        search.found = elements - {post.element}
        counters = [element for element in _scan(post.element, search) if _is_counter(element)]
        byline = lxml.html.Element("p")
        strong = lxml.html.Element("strong")
        byline.append(strong)
        strong.text = post.name
        strong.tail = f" · {post.when}" if post.when else None
        if post.header is not None and _inside(post.header, post.element):
            post.header.addprevious(byline)
            post.header.drop_tree()
        else:
            for element in (post.author, post.date):
                if _inside(element, post.element):
                    element.drop_tree()
            post.element.insert(0, byline)
            byline.tail, post.element.text = post.element.text, None
        for counter in counters:
            if _inside(counter, post.element):
                counter.drop_tree()


def _inside(element: lxml.html.HtmlElement, scope: lxml.html.HtmlElement) -> bool:
    return any(ancestor is scope for ancestor in element.iterancestors())


def _has_text(element: lxml.html.HtmlElement) -> bool:
    return any(piece.strip() for piece in islice(element.itertext(), SCAN))


def _is_post(element: lxml.html.HtmlElement) -> bool:
    if element.tag in _NEVER_POSTS:
        return False
    itemtype = element.get("itemtype")
    if itemtype and itemtype.rstrip("/").rsplit("/", 1)[-1] in _POST_TYPES:
        return True
    return _named(element, _POST_WORDS) and not _named(element, _PART_WORDS)


def _named(element: lxml.html.HtmlElement, words: frozenset[str]) -> bool:
    names = element.get("class")
    if not names:
        return False
    # A page repeats a few hundred class attributes over thousands of elements: each ordinary one
    # is split once; a long one (which a page could make unique each time) is not kept.
    split = _class_words(names) if len(names) <= _CACHED_CLASS_LENGTH else _words_of(names)
    return not split.isdisjoint(words)


_CACHED_CLASS_LENGTH = 200


def _words_of(names: str) -> frozenset[str]:
    """The words of a class attribute, lower-cased."""
    return frozenset(word.lower() for word in _NAME_SPLIT.split(names) if word)


_class_words = lru_cache(maxsize=4096)(_words_of)


class _Search:
    """The posts found so far, and what is left of the BUDGET."""

    def __init__(self) -> None:
        self.found: set[lxml.html.HtmlElement] = set()
        self.left = BUDGET


def _scan(scope: lxml.html.HtmlElement, search: _Search) -> Iterator[lxml.html.HtmlElement]:
    """The first SCAN elements inside ``scope`` in document order, leaving out those in the posts
    found (other than ``scope`` itself), within what is left of the budget."""
    seen = 0
    stack = list(reversed(scope))
    while stack and seen < SCAN and search.left > 0:
        element = stack.pop()
        if not isinstance(element.tag, str) or element in search.found:
            continue
        seen += 1
        search.left -= 1
        yield element
        stack.extend(reversed(element))


def _text(element: lxml.html.HtmlElement, limit: int = MAX_AUTHOR_CHARS) -> str:
    """The element's text, whitespace collapsed, cut after about ``limit`` characters or TEXT_NODES
    elements: only ever compared with short bounds, it is never read whole (an element named
    "author" may hold the rest of the page, or a chain of empty elements two hundred deep)."""
    pieces: list[str] = []
    length = visits = 0
    stack: list[tuple[lxml.html.HtmlElement, bool]] = [(element, False)]
    while stack and visits < TEXT_NODES and length <= 2 * limit:
        node, closed = stack.pop()
        piece = (node.tail if node is not element else None) if closed else node.text
        if piece and (closed or isinstance(node.tag, str)):
            pieces.append(piece)
            length += len(piece)
        if not closed:
            visits += 1
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node))
    text = collapse("".join(pieces))
    if stack and visits >= TEXT_NODES:
        return text.ljust(limit + 1)  # cut short: longer than any bound it is held to
    return text[: limit + 1]


def _first(
    scope: lxml.html.HtmlElement, search: _Search, test: Callable[[lxml.html.HtmlElement], bool]
) -> lxml.html.HtmlElement | None:
    return next((element for element in _scan(scope, search) if test(element)), None)


def _holds_more(
    post: lxml.html.HtmlElement,
    search: _Search,
    author: lxml.html.HtmlElement,
    date: lxml.html.HtmlElement,
) -> bool:
    """Whether ``post`` holds more than MAX_HEADER_LEFT words besides its author and date."""
    wanted = MAX_HEADER_LEFT + _words(author) + _words(date)
    words = len(_WORD.findall(post.text or ""))
    for element in _scan(post, search):
        words += len(_WORD.findall(element.text or "")) + len(_WORD.findall(element.tail or ""))
        if words > wanted:
            return True
    return False


def _is_date(element: lxml.html.HtmlElement) -> bool:
    if element.tag in _DATE_TAGS:
        dated = bool(element.get("datetime") or _DIGIT.search(_text(element, MAX_DATE_CHARS)))
    elif element.get("itemprop") in _DATE_PROPS:
        dated = bool(_DIGIT.search(element.get("content") or _text(element, MAX_DATE_CHARS)))
    elif len(element) > 3 or any(len(child) for child in element) or not _named(element, _DATE_WORDS):
        return False  # a date is a line of text, maybe with an icon or a link, not a tree
    else:
        text = _text(element, MAX_DATE_CHARS)
        dated = bool(_DIGIT.search(text)) and len(text) <= MAX_DATE_CHARS
    if not dated:
        return False
    parent = element.getparent()
    return not (
        _EDITED.match(_text(element, MAX_DATE_CHARS))
        or (parent is not None and _EDITED.match(_text(parent, MAX_DATE_CHARS)))
    )


def _author_near(
    date: lxml.html.HtmlElement, post: lxml.html.HtmlElement, search: _Search
) -> lxml.html.HtmlElement | None:
    """The author named nearest the date: in the smallest element around the date that names one."""
    around = _ancestors(date, post)
    for scope in around[:AUTHOR_LEVELS]:
        author = next(
            (
                element
                for element in _scan(scope, search)
                if element is not date and element not in around and _is_author(element)
            ),
            None,
        )
        if author is not None or scope is post:
            return author
    return None


def _is_author(element: lxml.html.HtmlElement) -> bool:
    named = (
        element.get("itemprop") in _AUTHOR_PROPS
        or "author" in (element.get("rel") or "").split()
        or _named(element, _AUTHOR_WORDS)
        or (element.tag == "a" and _is_profile(element.get("href") or ""))
    )
    if not named:
        return False
    name = _author_text(element)
    return bool(name) and len(name) <= MAX_AUTHOR_CHARS and bool(_WORD.search(name))


def _is_profile(href: str) -> bool:
    return _PROFILE_HREF.search(href) is not None and _ACCOUNT_HREF.search(href) is None


def _author_text(element: lxml.html.HtmlElement) -> str:
    """The author as the page names them: the element's text; for an element only named like an
    author's, the text of the profile link in it when it has one."""
    if element.get("itemprop") in _AUTHOR_PROPS:
        # A schema.org Person holds more than the name (reputation, badges): its name if given.
        name = next((e for e in islice(element.iterdescendants(), SCAN) if e.get("itemprop") == "name"), None)
        if name is not None and _text(name):
            return _text(name)
    if element.tag != "a":
        link = next((a for a in islice(element.iter("a"), 5) if _text(a)), None)
        if link is not None:
            return _text(link)
    return _text(element)


def _date_text(date: lxml.html.HtmlElement) -> str:
    """The date as the page shows it when that holds a year ("November 8, 2024, 7:33pm"), else
    its machine-readable form ("2024-11-08 19:33"), else what the page shows ("3 days ago")."""
    shown = _text(date, MAX_DATE_CHARS)
    if shown and _YEAR.search(shown) and len(shown) <= MAX_DATE_CHARS and not _ISO.match(shown):
        return shown
    for value in (shown, date.get("datetime"), date.get("content"), date.get("title")):
        match = _ISO.match((value or "").strip())
        if match:
            return f"{match[1]} {match[2]}" if match[2] else match[1]
    return shown[:MAX_DATE_CHARS]


def _header(
    post: lxml.html.HtmlElement, author: lxml.html.HtmlElement, date: lxml.html.HtmlElement
) -> lxml.html.HtmlElement | None:
    """The element holding the author and the date, when it holds little else ("Post by", a
    post number) and so goes with them; None when it is the post or holds more."""
    around = set(_ancestors(date, post))
    header = next(a for a in author.iterancestors() if a is post or a in around)
    limit = 2 * MAX_AUTHOR_CHARS + MAX_DATE_CHARS
    text = _text(header, limit)  # longer: more than an author and a date, and it stays
    left = len(_WORD.findall(text)) - _words(author) - _words(date)
    return header if header is not post and len(text) <= limit and left <= MAX_HEADER_LEFT else None


def _ancestors(element: lxml.html.HtmlElement, post: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The elements around ``element``, innermost first, up to ``post``."""
    around = []
    for ancestor in element.iterancestors():
        around.append(ancestor)
        if ancestor is post:
            break
    return around


def _is_counter(element: lxml.html.HtmlElement) -> bool:
    if len(element) > 2 or any(len(child) for child in element):
        return False  # a counter is a word or two, maybe with an icon, not a tree
    text = _text(element, 30)
    return len(text) <= 30 and bool(_COUNTER.match(text))


def _words(element: lxml.html.HtmlElement, limit: int = MAX_AUTHOR_CHARS) -> int:
    return len(_WORD.findall(_text(element, limit)))
