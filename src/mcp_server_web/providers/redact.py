"""Secrets out of provider text: what a provider says is quoted only through a ``Redactor``.

Providers (and proxies in front of them) echo what they were sent: a key in an error code, a
request header in an SDK's message, SEARXNG_URL's password in an engine's failure. Every
configured secret is replaced before the text is cut to length, so a secret straddling the cut
cannot survive as a prefix; then the text is made one line without control characters and
bounded.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus, unquote, urlsplit

from mcp_server_web.fetch import without_controls

MARK = "[redacted]"
QUOTE_LIMIT = 200
"""Characters of provider text one message quotes at most."""
MIN_SECRET = 6
"""Shorter values are not replaced: redacting "ab" everywhere would garble every message, and a
secret that short protects nothing anyway."""
_TOKEN_SEGMENT = re.compile(r"(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9._~-]{16,}")
"""A URL path segment that looks generated (long, letters and digits), as token-in-path set-ups use."""


def url_secrets(url: str | None) -> list[str]:
    """The parts of an endpoint URL that may be credentials: the user and password (and the
    Basic authorization they are sent as), query values, the fragment and path segments that
    look like tokens."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
    except ValueError:
        return []
    found = [user, password]
    if user or password:
        found.append(base64.b64encode(f"{user}:{password}".encode()).decode("ascii"))
    found += [unquote(pair.partition("=")[2]) for pair in parts.query.split("&")]
    found.append(unquote(parts.fragment))
    found += [unquote(segment) for segment in parts.path.split("/") if _TOKEN_SEGMENT.fullmatch(segment)]
    return [value for value in found if value]


class Redactor:
    """Replaces a set of secrets, in the forms they travel in (as is and URL-encoded)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret and len(secret) >= MIN_SECRET:
                forms.update((secret, quote(secret, safe=""), quote_plus(secret)))
        # Longest first, so a secret containing another is replaced whole.
        self.forms = tuple(sorted(forms, key=len, reverse=True))

    @classmethod
    def union(cls, redactors: Iterable[Redactor]) -> Redactor:
        merged = cls()
        merged.forms = tuple(sorted({form for r in redactors for form in r.forms}, key=len, reverse=True))
        return merged

    def hide(self, text: str) -> str:
        """``text`` with every secret replaced by ``MARK``, nothing else changed."""
        for form in self.forms:
            if form in text:
                text = text.replace(form, MARK)
        return text

    def quote(self, text: str, limit: int = QUOTE_LIMIT) -> str:
        """Provider text for a message of ours: secrets replaced, one line, no control characters,
        at most ``limit`` characters, no trailing period (the message adds its own)."""
        flat = " ".join(without_controls(self.hide(text)).split())
        if len(flat) > limit:
            flat = flat[: limit - 1] + "…"
        return flat.rstrip(" .")
