"""Recognise bot walls: a CAPTCHA or "checking your browser" page served instead of the content.

Such a page must not be converted and cached as if it were the document. Detection is cheap: a
few headers and at most the first 64 KiB of the body, matched against markers of the common
services (Cloudflare, AWS WAF, Vercel, DDoS-Guard, Sucuri, Imperva/Incapsula, Akamai,
PerimeterX/HUMAN, DataDome) and, for a generic CAPTCHA page, a widget with little else around it.

Markers are split in two. Strong ones appear only on challenge pages and decide alone. Weak
ones (a reCAPTCHA widget, Cloudflare's challenge-platform script, "verify you are human") also
appear on ordinary pages - a comment form with a reCAPTCHA, a site behind Cloudflare - and
count only on a small page with little visible text and no fields for a person to fill in.
"""

from __future__ import annotations

import re

from mcp_server_web.fetch.types import FetchResponse

SCAN_BYTES = 64 * 1024
LITTLE_TEXT_CHARS = 1000
"""A page with less visible text than this can be a challenge page around a weak marker."""

_HTML_TYPES = frozenset({"", "text/html", "application/xhtml+xml"})

# No run in these patterns can cross a "<" ([^<>], [^<]): an attempt starts at a tag and ends by
# the next one, so a 64 KiB window costs one pass. A [^>] run after "<iframe" rescanned the rest
# of the window from every "<iframe" when no ">" came (quadratic: 160 ms per 64 KiB).
_STRONG_MARKERS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), reason)
    for pattern, reason in (
        (r"<title>\s*just a moment\.\.\.\s*</title>", "Cloudflare challenge"),
        (r"window\._cf_chl_opt|cf-browser-verification|cf-challenge-running", "Cloudflare challenge"),
        (r"<title>\s*attention required! \| cloudflare\s*</title>", "Cloudflare block page"),
        (r"<title>[^<]*ddos-guard", "DDoS-Guard browser check"),
        (r"sucuri website firewall - access denied|sucuri_cloudproxy_js", "Sucuri firewall"),
        (r"incapsula incident id|<iframe\b[^<>]+_incapsula_resource", "Imperva/Incapsula block"),
        (r"errors\.edgesuite\.net", "Akamai block page"),
        (r"id=[\"']px-captcha[\"']|access to this page has been denied", "PerimeterX/HUMAN challenge"),
        (r"captcha-delivery\.com", "DataDome challenge"),
        (r"gokuprops|awswafintegration\.checkforceRefresh", "AWS WAF challenge"),
        (r"systems have detected unusual traffic from your computer network", "Google CAPTCHA"),
    )
)  # fmt: skip
_WEAK_MARKERS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), reason)
    for pattern, reason in (
        (r"class=[\"'][^\"']*\b(?:g-recaptcha|h-captcha|cf-turnstile)\b", "CAPTCHA page"),
        (r"recaptcha/api\.js|hcaptcha\.com/1/api\.js|challenges\.cloudflare\.com/turnstile", "CAPTCHA page"),
        (r"/cdn-cgi/challenge-platform/", "Cloudflare challenge"),
        (r"checking (?:your browser|if the site connection is secure)", "browser check"),
        (r"verify(?:ing)? (?:that )?you are (?:a )?human|are you a robot|press (?:&amp;|&) hold",
         "human-verification page"),
        (r"enable javascript and cookies to continue", "browser check"),
        (r"_incapsula_resource", "Imperva/Incapsula block"),
    )
)  # fmt: skip
# Fields a person types into: their presence means a real form (contact, comment), not a wall.
_ENTRY_FIELD = re.compile(
    r"<textarea\b|<input\b(?![^<>]*\btype\s*=\s*[\"']?(?:hidden|submit|button|checkbox|radio|image|reset)\b)",
    re.I,
)
# An unclosed element or comment runs to the end ("|$"), so no match is tried more than once.
_INVISIBLE = re.compile(
    r"<(script|style|noscript|template|svg)\b.*?(?:</\1\s*>|$)|<!--.*?(?:-->|$)", re.I | re.S
)
_TAG = re.compile(r"<[^<>]*>")
_WHITESPACE = re.compile(r"\s+")


def detect_challenge(response: FetchResponse) -> str | None:
    """A short reason if the response is a bot-detection or CAPTCHA page, else None."""
    reason = _header_reason(response)
    if reason is not None:
        return reason
    if response.media_type not in _HTML_TYPES or not response.body:
        return None
    head = response.body[:SCAN_BYTES].decode("utf-8", errors="replace")
    for pattern, reason in _STRONG_MARKERS:
        if pattern.search(head):
            return reason
    # Weak markers need the whole page in view, to be sure how little text it really has.
    if len(response.body) > SCAN_BYTES or _ENTRY_FIELD.search(head):
        return None
    weak = next((reason for pattern, reason in _WEAK_MARKERS if pattern.search(head)), None)
    if weak is not None and _visible_chars(head) < LITTLE_TEXT_CHARS:
        return weak
    return None


def _header_reason(response: FetchResponse) -> str | None:
    headers = response.headers
    if "challenge" in headers.get("cf-mitigated", "").lower():
        return "Cloudflare challenge"
    if headers.get("x-amzn-waf-action", "").lower() in ("challenge", "captcha"):
        return "AWS WAF challenge"
    if headers.get("x-vercel-mitigated", "").lower() in ("challenge", "deny"):
        return "Vercel challenge"
    if "x-sucuri-block" in headers:
        return "Sucuri firewall"
    if response.status in (403, 429, 503):
        server = headers.get("server", "").lower()
        if "ddos-guard" in server:
            return "DDoS-Guard browser check"
        if "x-datadome" in headers or "x-dd-b" in headers:
            return "DataDome challenge"
    return None


def _visible_chars(html: str) -> int:
    text = _TAG.sub(" ", _INVISIBLE.sub(" ", html))
    return len(_WHITESPACE.sub(" ", text).strip())


REFUSAL_STATUSES = frozenset({401, 403, 429})
"""The statuses bot protection refuses a client with (besides serving a challenge page)."""
# A Cloudflare-fronted application's own 403 carries cf-ray too: only Cloudflare's error page
# (or its cf-mitigated header, read above) says Cloudflare itself refused.
_CLOUDFLARE_PAGE = re.compile(r"cf-error-details|cdn-cgi/styles/cf\.errors\.css|cloudflare ray id", re.I)
_AKAMAI_PAGE = re.compile(r"access denied|reference\s*#\s*\d", re.I)
_PERIMETERX_COOKIE = re.compile(r"(?:^|[,;]\s*)_px(?:3|hd|vid)?=", re.I)
_IMPERVA_COOKIE = re.compile(r"(?:^|[,;]\s*)(?:incap_ses_|visid_incap_)", re.I)


def bot_protection(response: FetchResponse) -> str | None:
    """The bot-protection service that refused the request (a 401, 403 or 429 carrying its marks),
    else None: an ordinary error status, or an application's own refusal, is not one."""
    if response.status not in REFUSAL_STATUSES:
        return None
    headers = response.headers
    server = headers.get("server", "").lower()
    head = response.body[:SCAN_BYTES].decode("utf-8", errors="replace")
    cookies = headers.get("set-cookie", "")
    if "cf-mitigated" in headers or ("cf-ray" in headers and _CLOUDFLARE_PAGE.search(head)):
        return "Cloudflare"
    if "akamaighost" in server or ("akamai" in server and _AKAMAI_PAGE.search(head)):
        return "Akamai"
    if any(name.startswith("x-px") for name in headers) or _PERIMETERX_COOKIE.search(cookies):
        return "PerimeterX/HUMAN"
    if "x-datadome" in headers or "x-dd-b" in headers or "datadome" in server:
        return "DataDome"
    incapsula = "incapsula" in headers.get("x-cdn", "").lower()
    if "x-iinfo" in headers or incapsula or _IMPERVA_COOKIE.search(cookies):
        return "Imperva/Incapsula"
    if "x-amzn-waf-action" in headers:
        return "AWS WAF"
    if "x-vercel-mitigated" in headers:
        return "Vercel"
    if "x-sucuri-id" in headers or "x-sucuri-block" in headers:
        return "Sucuri"
    if "ddos-guard" in server:
        return "DDoS-Guard"
    return None
