"""The operator's way out of a failure, in the product's words.

A library error says what happened in terms of the library's own parameters and names those
parameters (``WebToolError.parameters``); which setting feeds each parameter is the server's
knowledge, so the sentence that names an environment variable is added here, where a failure
becomes a tool's answer. The variable names come from the settings table (config.OPTIONS), so
they cannot drift from what the server actually reads.
"""

from __future__ import annotations

from mcp_server_web.config import OPTIONS_BY_ATTR
from mcp_server_web.errors import WebToolError

# The setting that feeds each library parameter (see server/compose.py and app.conversion_pool).
_SETTING_OF = {
    "timeout": "timeout",
    "max_response_bytes": "max_response_mb",
    "allow_private": "allow_private",
    "allow_cidrs": "allow_cidrs",
    "respect_robots": "respect_robots",
    "memory_limit": "conversion_max_mb",
    "render_timeout": "render_timeout",
    "render_concurrency": "render_concurrency",
    "render_memory": "render_max_mb",
}


def _env(parameter: str) -> str:
    return OPTIONS_BY_ATTR[_SETTING_OF[parameter]].env


_ADVICE: dict[tuple[str, tuple[str, ...]], str] = {
    ("timeout", ("timeout",)): f"Raise {_env('timeout')} to allow slower sites.",
    ("timeout", ("timeout", "respect_robots")): (
        f"Raise {_env('timeout')} to allow slower sites. "
        f"Set {_env('respect_robots')}=false to ignore robots.txt."
    ),
    ("timeout", ("render_timeout",)): f"Raise {_env('render_timeout')} to give pages longer to render.",
    ("timeout", ("render_timeout", "render_concurrency")): (
        f"Raise {_env('render_concurrency')} to render more pages at once, or {_env('render_timeout')} "
        "to let a render wait longer for its turn."
    ),
    ("extraction_failed", ("timeout",)): f"Raise {_env('timeout')} to allow slower conversions.",
    ("robots_disallowed", ("respect_robots",)): f"Set {_env('respect_robots')}=false to ignore robots.txt.",
    ("blocked_address", ("allow_cidrs",)): (
        f"Only an entry of {_env('allow_cidrs')} that holds the metadata service's address allows it "
        f"({_env('allow_private')} does not)."
    ),
    ("blocked_address", ("allow_cidrs", "allow_private")): (
        f"Add the range to {_env('allow_cidrs')} to allow it (or set {_env('allow_private')}=true to "
        "allow every private, loopback and link-local address)."
    ),
    ("too_large", ("max_response_bytes",)): f"Raise {_env('max_response_bytes')} to allow larger responses.",
    ("too_large", ("render_memory",)): f"{_env('render_memory')} sets that allowance.",
    ("too_large", ("memory_limit",)): (
        f"{_env('memory_limit')} sets that limit; main_content=false or format=text may need less."
    ),
}
"""(error code, parameters the error names) -> the sentence a tool's answer adds."""


def advised(error: WebToolError) -> str:
    """The error's text (code and message), followed by what the operator can change, if anything."""
    advice = _ADVICE.get((error.code, error.parameters))
    return f"{error} {advice}" if advice else str(error)
