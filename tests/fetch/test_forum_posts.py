"""Forum threads keep who wrote each post and when, and lose their counters (issue 25).

Discourse's and phpBB's markup for a thread, served from 127.0.0.1, fetched by the real Fetcher
and converted by the real conversion path.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from mcp_server_web.fetch.net.client import Fetcher
from tests.fetch.test_page_structure import fetcher, origin, read
from tests.support.origin import Origin

__all__ = ["fetcher", "origin"]  # the fixtures


# --- who wrote each post, and when ---------------------------------------------------------------

POSTS = (
    ("amondale", "Amondale", "2024-11-08T19:33:39Z", "November 8, 2024, 7:33pm", 3),
    ("rimelek", "Ákos Takács", "2024-11-08T20:42:10Z", "November 8, 2024, 8:42pm", 5),
    ("meyay", "Metin Y.", "2024-11-09T08:02:55Z", "November 9, 2024, 8:02am", 0),
)
BODIES = (
    "Two of my containers point at the same resolver, yet the first cannot resolve the second's "
    "hostname, although it can ping its address, so the database connection fails. Why would the "
    "embedded DNS server answer one name and not the other, and what does the hosts file change?",
    "It depends on the kind of network you use. On the default bridge network there is no name "
    "resolution between containers at all; on a user-defined network the embedded DNS server at "
    "127.0.0.11 answers for every container attached to it, under its name and its aliases.",
    "Create a network with docker network create, attach both containers to it, and use the "
    "container names as hostnames. The hosts file plays no part in this, and the -h option only "
    "sets the hostname the container sees for itself, which nobody else can resolve.",
)


def discourse_page() -> str:
    """Discourse's crawler view (what a client without JavaScript gets): schema.org
    DiscussionForumPosting and Comment items, the post text marked itemprop="text"."""
    posts = []
    for i, ((user, name, stamp, shown, likes), body) in enumerate(zip(POSTS, BODIES, strict=True), start=1):
        scope = (
            'itemscope itemtype="http://schema.org/DiscussionForumPosting"'
            if i == 1
            else 'itemprop="comment" itemscope itemtype="http://schema.org/Comment"'
        )
        liked = (
            f'<div itemprop="interactionStatistic" itemscope itemtype="http://schema.org/InteractionCounter">'
            f'<meta itemprop="userInteractionCount" content="{likes}">'
            f'<span class="post-likes">{likes} Likes</span></div>'
            if likes
            else ""
        )
        posts.append(
            f"""<div id="post_{i}" {scope} class="topic-body crawler-post">
<div class="crawler-post-meta">
<span class="creator" itemprop="author" itemscope itemtype="http://schema.org/Person">
<a itemprop="url" href="/u/{user}"><span itemprop="name">{user}</span></a> ({name})</span>
<span class="crawler-post-infos"><time itemprop="datePublished" datetime="{stamp}"
class="post-time">{shown}</time>
<span itemprop="position">{i}</span></span></div>
<div class="post" itemprop="text"><p>{body}</p></div>{liked}</div>"""
        )
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Confusing resolver structure - General - Docker Community Forums</title></head>
<body><header class="d-header"><a href="/">Docker Community Forums</a></header>
<div id="main-outlet" class="wrap" role="main">
<div id="topic-title"><h1>
<a href="/t/confusing-resolver-structure/144854">Confusing resolver structure</a></h1></div>
{"".join(posts)}
</div><footer class="noscript-footer-nav"><a href="/about">About</a> Powered by Discourse</footer>
</body></html>"""


def phpbb_page() -> str:
    """phpBB 3.3 (prosilver): the profile column beside each post, "by <author> » <time>" above it."""
    posts = []
    for i, ((user, _name, stamp, _shown, _likes), body) in enumerate(
        zip(POSTS, BODIES, strict=True), start=1
    ):
        number = 550440 + i
        profile = f"./memberlist.php?mode=viewprofile&amp;u={i}"
        posts.append(
            f"""<div id="p{number}" class="post has-profile bg{i % 2 + 1}"><div class="inner">
<dl class="postprofile" id="profile{number}"><dt class="has-profile-rank no-avatar">
<a href="{profile}" class="username">{user}</a></dt><dd class="profile-rank">Member</dd>
<dd class="profile-posts"><strong>Posts:</strong> <a href="./search.php?author_id={i}">{100 + i}</a></dd></dl>
<div class="postbody"><div id="post_content{number}">
<h3 class="first"><a href="./viewtopic.php?p={number}#p{number}">Re: Confusing resolver structure</a></h3>
<p class="author"><a class="unread" href="./viewtopic.php?p={number}#p{number}" title="Post">
<i class="icon fa-file fa-fw"></i><span class="sr-only">Post</span></a>
<span class="responsive-hide">by <strong><a href="{profile}" class="username">{user}</a>
</strong> » </span><time datetime="{stamp[:-1]}+00:00">{stamp[8:10]}. Nov 2024, {stamp[11:16]}</time>
</p>
<div class="content">{body}</div></div></div>
<div class="back2top"><a href="#top" class="top" title="Top">Top</a></div></div></div>
<hr class="divider">"""
        )
    return f"""<!DOCTYPE html><html dir="ltr" lang="en-gb"><head><meta charset="utf-8">
<title>Confusing resolver structure - Community</title></head>
<body id="phpbb" class="section-viewtopic"><div id="wrap" class="wrap">
<div id="page-header"><div class="headerbar" role="banner"><a href="./index.php">Board index</a></div></div>
<div id="page-body" class="page-body" role="main">
<h2 class="topic-title"><a href="./viewtopic.php?t=112320">Confusing resolver structure</a></h2>
{"".join(posts)}
</div><div id="page-footer" class="page-footer" role="contentinfo">Powered by phpBB</div></div></body>
</html>"""


BYLINE = re.compile(r"^\*\*(?P<author>[^*\n]+)\*\* · (?P<date>[^\n]+)$", re.MULTILINE)


@pytest.mark.parametrize("page", [discourse_page, phpbb_page], ids=["discourse", "phpbb"])
async def test_each_post_keeps_its_author_and_date(
    fetcher: Fetcher, origin: Origin, page: Callable[[], str]
) -> None:
    text = await read(fetcher, origin, page())
    bylines = list(BYLINE.finditer(text))
    assert [match["author"].split(" (")[0] for match in bylines] == [user for user, *_ in POSTS], text
    for match, (_user, _name, stamp, _shown, _likes), body in zip(bylines, POSTS, BODIES, strict=True):
        day = int(stamp[8:10])
        assert re.search(rf"\b0?{day}\b", match["date"]) and "2024" in match["date"], match[0]
        # Each byline stands right before its post's text.
        following = text[match.end() :].lstrip("\n")
        assert following.startswith(body[:40]), following[:200]
    assert not re.search(r"\d+ likes?\b", text, flags=re.IGNORECASE), text
