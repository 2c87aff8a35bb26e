"""A fake html.duckduckgo.com: ``POST /html/`` answered with DuckDuckGo's HTML-only results page.

The page follows the real markup: ``div.result.web-result`` blocks whose links go through the
``//duckduckgo.com/l/?uddg=<target>&rut=<token>`` redirect, an ad block first (``result--ad``,
linking to ``y.js``), the "No results." notice when nothing matched, and, when it suspects a
bot, HTTP 202 with the anomaly-modal challenge page instead of results.
"""

from __future__ import annotations

import hashlib
import html
import random
import re
from typing import Any
from urllib.parse import parse_qsl, quote

from tests.support.fakes.base import Failure, FakeProvider, Mode
from tests.support.origin import Reply, RequestContext


class FakeDuckDuckGo(FakeProvider):
    name = "duckduckgo"

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, str]] = []
        """The form fields of every POST this fake received, in order."""
        self.with_ad = True

    def paths(self) -> tuple[str, ...]:
        return ("/html/",)

    def settings(self) -> dict[str, Any]:
        return {"duckduckgo_url": self.origin.base}

    def received(self, body: bytes) -> None:
        with self._lock:
            self.forms.append(_form(body))

    def current_form(self) -> dict[str, str]:
        """The form fields of the request being answered."""
        return _form(self.current_body())

    def query_of(self, ctx: RequestContext, body: bytes) -> str:
        return _form(body).get("q", "")

    def chaos_modes(self) -> tuple[Mode, ...]:
        return (*super().chaos_modes(), "challenge")

    def challenge_status(self, draw: random.Random) -> int:
        # Mostly the 202 DuckDuckGo uses, sometimes the anomaly form as a plain 200 page.
        return draw.choice((202, 202, 200))

    def send_results(self, ctx: RequestContext, results: list[dict[str, Any]]) -> None:
        form = self.current_form()
        query = form.get("q", "")
        # kl: a region as DuckDuckGo lists them ("de-de", "uk-en", "wt-wt"); kp: 1, -1 or -2.
        # DuckDuckGo ignores values it does not know; the fake refuses them, so a test notices.
        if not re.fullmatch(r"[a-z]{2}-[a-z]{2}", form.get("kl", "wt-wt")) or form.get("kp", "-1") not in (
            "1",
            "-1",
            "-2",
        ):
            ctx.send(Reply(400, "<html><body>Bad request</body></html>"))
            return
        ctx.send(Reply(200, results_page(query, results, with_ad=self.with_ad)))

    def send_failure(self, ctx: RequestContext, failure: Failure) -> None:
        query = self.current_form().get("q", "")
        if failure in ("blocked", "quota"):
            # DuckDuckGo has no quota; what it does to a client it dislikes is the challenge
            # (usually as 202; a plan may make it a 200, which the parser must still catch).
            ctx.send(Reply(self.planned_status(202), challenge_page(query)))
        elif failure == "auth":
            ctx.send(Reply(403, "<html><body><h1>403 Forbidden</h1></body></html>"))
        elif failure == "rate_limit":
            page = "<html><body><h1>429 Too Many Requests</h1></body></html>"
            ctx.send(Reply(429, page, headers=self.retry_after_header()))
        elif failure == "server":
            status = self.planned_status(502)
            page = f"<html><head><title>{status} Bad Gateway</title></head><body></body></html>"
            ctx.send(Reply(status, page))
        elif failure == "malformed":
            ctx.send(Reply(200, _UNKNOWN_LAYOUT))
        elif failure == "truncated":
            body = results_page(query, _SOME).encode()
            ctx.send(Reply(200, body[: len(body) // 2], headers={"Content-Length": str(len(body))}))
            ctx.close_connection()


def _form(body: bytes) -> dict[str, str]:
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


_SOME = [{"title": "Cut off", "url": "https://cut.example.com/", "snippet": "x" * 400}]

_HEAD = """<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
  <meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1.0, maximum-scale=3.0, user-scalable=1" />
  <meta name="referrer" content="origin" />
  <meta name="HandheldFriendly" content="true" />
  <meta name="robots" content="noindex, nofollow" />
  <title>{title} at DuckDuckGo</title>
  <link title="DuckDuckGo (HTML)" type="application/opensearchdescription+xml" rel="search" href="//duckduckgo.com/opensearch_html_v2.xml" />
  <link href="//duckduckgo.com/favicon.ico" rel="shortcut icon" />
  <link rel="stylesheet" href="//duckduckgo.com/dist/h.b4a3a1b2c5e7a9e0c2a1.css" type="text/css"/>
</head>
<body class="body--html">
  <a name="top" id="top"></a>
  <form action="/html/" method="post">
    <input type="text" name="state_hidden" id="state_hidden" />
  </form>
  <div>
    <div class="site-wrapper-border"></div>
    <div id="header" class="header cw header--html">
      <a title="DuckDuckGo" href="/html/" class="header__logo-wrap"><span class="header__logo">DuckDuckGo</span></a>
      <form name="x" class="header__form" action="/html/" method="post">
        <div class="search search--header">
          <input name="q" autocomplete="off" class="search__input" id="search_form_input_homepage" type="text" value="{value}" />
          <input name="b" id="search_button_homepage" class="search__button search__button--html" value="" title="Search" alt="Search" type="submit" />
        </div>
        <div class="frm__select">
          <select name="kl">
            <option value="" >All Regions</option>
            <option value="wt-wt" selected>No region</option>
            <option value="us-en" >US (English)</option>
          </select>
        </div>
        <div class="frm__select frm__select--last">
          <select class="" name="df">
            <option value="" selected>Any Time</option>
            <option value="d" >Past Day</option>
            <option value="w" >Past Week</option>
            <option value="m" >Past Month</option>
            <option value="y" >Past Year</option>
          </select>
        </div>
      </form>
    </div>
"""  # noqa: E501 - markup as DuckDuckGo writes it

_AD = """
            <div class="result results_links results_links_deep result--ad  result--ad--small">
              <div class="links_main links_deep result__body">
                <h2 class="result__title">
                  <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example.net&amp;ad_provider=bingv7aa&amp;ad_type=txad&amp;eddgt=Zm9v&amp;rut=0c4f&amp;u3=https%3A%2F%2Fwww.bing.com%2Faclick%3Fld%3De8">Sponsored: Buy {title} Today</a>
                </h2>
                <div class="result__extras">
                  <div class="result__extras__url">
                    <a class="result__url" href="https://duckduckgo.com/y.js?ad_domain=ads.example.net&amp;ad_provider=bingv7aa">ads.example.net</a>
                    <button class="badge--ad">Ad</button>
                    <a class="badge--ad__tooltip-wrap" href="https://duckduckgo.com/duckduckgo-help-pages/company/ads-by-microsoft-on-duckduckgo-private-search">Learn more</a>
                  </div>
                </div>
                <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=ads.example.net">Great deals on {title}. Free shipping.</a>
                <div class="clear"></div>
              </div>
            </div>
"""  # noqa: E501

_RESULT = """
            <div class="result results_links results_links_deep web-result ">
              <div class="links_main links_deep result__body"> <!-- This is the visible part -->
                <h2 class="result__title">
                  <a rel="nofollow" class="result__a" href="{link}">{title}</a>
                </h2>
                <div class="result__extras">
                  <div class="result__extras__url">
                    <span class="result__icon">
                      <a rel="nofollow" href="{link}">
                        <img class="result__icon__img" width="16" height="16" alt="" src="//external-content.duckduckgo.com/ip3/{host}.ico" name="i15" />
                      </a>
                    </span>
                    <a class="result__url" href="{link}">{display}</a>{date}
                  </div>
                </div>
                <a class="result__snippet" href="{link}">{snippet}</a>
                <div class="clear"></div>
              </div>
            </div>
"""  # noqa: E501

_NO_RESULTS = """
            <div class="result results_links results_links_deep web-result result--no-result">
              <div class="no-results">No  results.</div>
            </div>
"""

_FOOT = """
            <div class="nav-link">
              <form action="/html/" method="post">
                <input type="submit" class='btn btn--alt' value="Next" />
                <input type="hidden" name="q" value="{value}" />
                <input type="hidden" name="s" value="10" />
                <input type="hidden" name="nextParams" value="" />
                <input type="hidden" name="v" value="l" />
                <input type="hidden" name="o" value="json" />
                <input type="hidden" name="dc" value="11" />
                <input type="hidden" name="api" value="d.js" />
                <input type="hidden" name="vqd" value="4-211829348128529683469104583746501623790" />
                <input name="kl" value="wt-wt" type="hidden" />
              </form>
            </div>
          <div class=" feedback-btn">
            <a rel="nofollow" href="//duckduckgo.com/feedback.html" target="_new">Feedback</a>
          </div>
          <div class="clear"></div>
        </div>
      </div> <!-- links wrapper //-->
    </div>
  </div>
  <div id="bottom_spacing2"></div>
  <img src="//duckduckgo.com/t/sl_h"/>
</body>
</html>
"""

_UNKNOWN_LAYOUT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>DuckDuckGo</title></head>
<body><div id="react-layout"><section data-testid="mainline"><ol class="react-results--main">
<li data-layout="organic"><article id="r1-0"><a href="https://example.com/">Example</a></article></li>
</ol></section></div></body></html>
"""


def results_page(query: str, results: list[dict[str, Any]], *, with_ad: bool = True) -> str:
    """DuckDuckGo's HTML results page for results (the "No results." page when there are none)."""
    value = html.escape(query, quote=True)
    page = [_HEAD.format(title=value, value=value), '    <div>\n    <div class="serp__results">\n']
    page.append('    <div id="links" class="results">\n')
    if not results:
        page.append(_NO_RESULTS)
    else:
        if with_ad:
            page.append(_AD.format(title=value))
        page.extend(_render(result) for result in results)
    page.append(_FOOT.format(value=value))
    return "".join(page)


def redirect_link(url: str) -> str:
    """A result link as DuckDuckGo writes it: its click redirect, target percent-encoded."""
    token = hashlib.sha256(url.encode()).hexdigest()
    return f"//duckduckgo.com/l/?uddg={quote(url, safe='')}&rut={token}"


def _render(result: dict[str, Any]) -> str:
    url = result["url"]
    display = url.split("://", 1)[-1].rstrip("/")
    published = result.get("published")
    date = (
        f"\n                    <span>&nbsp; &nbsp; {published.removesuffix('Z')}.0000000</span>"
        if published
        else ""
    )
    return _RESULT.format(
        link=html.escape(redirect_link(url), quote=True),
        title=html.escape(result["title"]),
        host=html.escape(display.split("/", 1)[0]),
        display=html.escape(display),
        date=date,
        snippet=result.get("snippet", ""),  # already HTML: DuckDuckGo bolds the matched words
    )


def challenge_page(query: str) -> str:
    """The page DuckDuckGo serves (with HTTP 202) to a client it takes for a bot."""
    q = quote(query, safe="")
    images = "".join(
        f'<div class="anomaly-modal__image"><img src="../assets/anomaly/images/challenge/{i:02d}.jpg" '
        f'alt="" /><input type="checkbox" name="image-check_{i:02d}" class="anomaly-modal__check" /></div>'
        for i in range(1, 10)
    )
    return f"""<!DOCTYPE html>
<html lang="en-US">
<head>
  <meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1.0, maximum-scale=1.0, user-scalable=0" />
  <meta name="robots" content="noindex, nofollow" />
  <title>DuckDuckGo</title>
  <link rel="stylesheet" href="//duckduckgo.com/dist/h.b4a3a1b2c5e7a9e0c2a1.css" type="text/css"/>
</head>
<body>
  <div class="anomaly-modal__mask">
    <div class="anomaly-modal__modal" data-testid="anomaly-modal">
      <div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
      <div class="anomaly-modal__description">Please complete the following challenge to confirm this search was made by a human.</div>
      <div class="anomaly-modal__instructions">Select all squares containing a duck:</div>
      <form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=sre&amp;ti=1731312000&amp;gk=d4cd0dabcf4caa22ad92fab40844c786&amp;p=a2f1c1e5&amp;q={q}&amp;o=x&amp;r=use" method="POST">
        <div class="anomaly-modal__images">{images}</div>
        <button type="submit" class="btn anomaly-modal__submit">Submit</button>
      </form>
      <div class="anomaly-modal__feedback">Images not loading? Please email us at error-lite@duckduckgo.com.</div>
    </div>
  </div>
</body>
</html>
"""  # noqa: E501
