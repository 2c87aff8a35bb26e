"""Typed failures of the web tools.

Every failure a tool can report is one of these. Each class carries the stable code from the
public contract (DESIGN.md); the server layer turns any of them into an MCP tool error whose
text starts with that code, followed by the message: one plain sentence for a person.

The message speaks of the library's own parameters only. When a different value of one of them
would have avoided the failure (a longer ``timeout``, ``allow_private``), the error names it in
``parameters``: a caller words its own advice from that (the server names its flags and
environment variables), and a library caller who passed ``timeout=`` is not told to set one.
"""

from __future__ import annotations


class WebToolError(Exception):
    """Base of every failure a tool reports to its caller."""

    code: str = "error"

    def __init__(self, message: str, *, parameters: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.parameters = parameters
        """The parameters (FetchConfig fields, ConversionPool's ``memory_limit``) whose values
        this failure met, in the order a caller's advice should name them; empty when no setting
        would have helped."""

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class InvalidArgument(WebToolError):
    """An argument other than the URL has a value the tool cannot use."""

    code = "invalid_argument"


class InvalidURL(WebToolError):
    """The URL is not an http(s) URL the tool can fetch."""

    code = "invalid_url"


class BlockedAddress(WebToolError):
    """The destination is a non-public address and the address policy refuses it."""

    code = "blocked_address"


class RobotsDisallowed(WebToolError):
    """The site's robots.txt does not allow our user agent to fetch this URL."""

    code = "robots_disallowed"


class HTTPStatusError(WebToolError):
    """The origin answered with an error status (4xx/5xx) or an unusable redirect."""

    code = "http_error"

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class BotProtected(HTTPStatusError):
    """The origin's bot protection (Cloudflare, Akamai, DataDome...) refused the request with an
    error status: the page exists, but not for us."""

    def __init__(self, message: str, status: int | None = None, *, vendor: str = "") -> None:
        super().__init__(message, status)
        self.vendor = vendor


class FetchTimeout(WebToolError):
    """Connecting, reading or the whole request took longer than the configured limit."""

    code = "timeout"


class TooLarge(WebToolError):
    """The response body (after decompression) is larger than the configured cap."""

    code = "too_large"


class UnsupportedContentType(WebToolError):
    """The response is a kind of content the tool does not turn into text (images, archives...)."""

    code = "unsupported_content_type"


class ChallengePage(WebToolError):
    """The origin answered with a bot-detection or CAPTCHA page instead of the content."""

    code = "challenge_page"


class ExtractionFailed(WebToolError):
    """The content was downloaded but could not be turned into text."""

    code = "extraction_failed"


class ScriptBuiltPage(ExtractionFailed):
    """An HTML page with no readable text unless its scripts run: a browser may still read it."""


class RenderUnavailable(WebToolError):
    """Rendering in a browser was asked for, and this server has no browser to render with."""

    code = "render_unavailable"


class SnapshotExpired(WebToolError):
    """The snapshot a caller is paging through is no longer cached; it must start again."""

    code = "snapshot_expired"


class RateLimited(WebToolError):
    """The server is at its limit of concurrent work; try again shortly."""

    code = "rate_limited"


class NoProvider(WebToolError):
    """No search provider is configured or available."""

    code = "no_provider"


class AllProvidersFailed(WebToolError):
    """Every search provider in the chain failed."""

    code = "all_providers_failed"


class ConfigError(ValueError):
    """A setting (or a library's configuration value) has a value that cannot be run with."""
