"""Which elements are a thread's posts (posts.find_posts): typed in microdata or named like one, in
any case."""

from __future__ import annotations

from mcp_server_web.fetch.doc.html_tree import body_of, parse_html
from mcp_server_web.fetch.doc.posts import find_posts

_TEXT = "the words of a post that say a good deal more than who wrote it and when"


def _post(opening: str, author: str, date: str) -> str:
    return (
        f'{opening}<div class="meta"><a href="/u/{author}">{author}</a>'
        f'<time datetime="2024-11-08T19:33:39Z">{date}</time></div><p>{_TEXT}</p></article>'
    )


def test_posts_typed_or_named_are_found_and_the_page_is_not_one() -> None:
    root = parse_html(
        '<html><body class="post"><main class="comment-list">'
        + _post('<article itemscope itemtype="https://schema.org/Comment">', "amondale", "Nov 8, 2024")
        + _post('<article class="">', "nobody", "Nov 8, 2024")
        + _post('<article class="Topic-POST">', "rimelek", "Nov 9, 2024")
        + "</main></body></html>"
    )
    assert root is not None
    posts = find_posts(body_of(root), frozenset())
    assert [(post.name, post.when) for post in posts] == [
        ("amondale", "Nov 8, 2024"),
        ("rimelek", "Nov 9, 2024"),
    ]
    assert [post.element.get("class") for post in posts] == [None, "Topic-POST"]
    assert find_posts(body_of(root), frozenset({"article"})) == []
