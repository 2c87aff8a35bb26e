"""What the providers and their chain run with: the search library's own config object.

The server builds one from its settings (server/compose.py); a library caller builds one by hand.
Messages that tell someone how to switch a provider on name the value to set; ``names`` says
what the caller calls each one (the server: its environment variables), and a value with no
name there is called by its field here, e.g. ``keys["brave"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from mcp_server_web.identity import DEFAULT_USER_AGENT


def key_parameter(provider: str) -> str:
    return f'keys["{provider}"]'


def url_parameter(provider: str) -> str:
    return f'urls["{provider}"]'


ORDER_PARAMETER = "order"


@dataclass(frozen=True, slots=True)
class ProvidersConfig:
    keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    """API keys by provider name; a provider that needs a key is switched on by having one."""
    urls: Mapping[str, str] = field(default_factory=dict)
    """Endpoints by provider name: a self-hosted provider's instance (which switches it on), or
    an override of a hosted provider's own endpoint."""
    order: tuple[str, ...] = ()
    """The providers to try, in order; empty: every configured provider in the default order."""
    user_agent: str = DEFAULT_USER_AGENT
    provider_timeout: float = 10.0
    """Seconds one provider may take."""
    deadline: float = 25.0
    """Seconds one search may take, failovers included."""
    cache_ttl: float = 600.0
    """Seconds an answer is reused for the same query."""
    mode: Literal["fallback", "fanout"] = "fallback"
    """fallback: the first provider with results answers; fanout: the first ``fanout`` available
    providers are asked at once and their lists fused (providers/fanout.py)."""
    fanout: int = 2
    rps: Mapping[str, float] = field(default_factory=dict)
    """Requests per second by provider: a call waits for its turn (within the deadline); a
    provider not listed is not paced."""
    daily_limits: Mapping[str, int] = field(default_factory=dict)
    """Calls per UTC day by provider; past it the provider is skipped until the next day."""
    auth_cooldown: float = 3600.0
    """Seconds a provider whose key was rejected (401/403) is left out."""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Other values no answer may quote (a proxy URL with credentials, a bearer token); the keys
    and the credentials in ``urls`` are never quoted in any case."""
    names: Mapping[str, str] = field(default_factory=dict)
    """What the caller calls a parameter (``keys["brave"]``, ``urls["searxng"]``, ``order``), for
    messages; e.g. the server maps ``keys["brave"]`` to BRAVE_API_KEY."""

    def name_of(self, parameter: str) -> str:
        return self.names.get(parameter, parameter)
