"""Read-through: Tavily's extract and Exa's contents asked for one page's text, for web_fetch.

This fills the fetch library's ``ReadThrough`` port. The providers are asked in the operator's
order, and each one is held to its plan and its failures exactly as in a search: a read takes a
turn of the provider's pace and one of the day's calls (``pacing.Limits``), and a failure counts
under the same cooldown policy (``chain.Cooldowns``), all on the same records in the state port.
So a burst of reads waits its turns instead of drawing 429s, reads and searches spend one daily
budget, and a 429 on extract benches that provider for web_search too, and the other way round.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Protocol, cast

import anyio

from mcp_server_web.fetch import ExtractedText, ReadThroughFailed, Via
from mcp_server_web.providers.base import COOLDOWN_KINDS, ProviderError, ReadPage
from mcp_server_web.providers.chain import REASON_LIMIT, Cooldowns
from mcp_server_web.providers.pacing import Limits
from mcp_server_web.providers.redact import Redactor
from mcp_server_web.providers.registry import (
    READERS,
    adapter_class,
    configured_secrets,
    provider_config,
    spec_named,
)

if TYPE_CHECKING:
    import httpx

    from mcp_server_web.providers.config import ProvidersConfig
    from mcp_server_web.state import StateBackend

logger = logging.getLogger(__name__)

_VIA: dict[str, Via] = {"tavily": "tavily", "exa": "exa"}
"""Each of READERS as fetch's Via names it (a provider that reads needs its own value there)."""


class _Reader(Protocol):
    name: str
    title: str

    async def read(self, url: str, *, markdown: bool, timeout: float) -> ReadPage: ...  # noqa: ASYNC109

    async def aclose(self) -> None: ...


class ProviderReadThrough:
    """Asks each reader in turn, skipping those cooling down, out of turn or out of budget, until
    one has the page's text."""

    def __init__(
        self,
        readers: list[_Reader],
        state: StateBackend,
        *,
        timeout: float,
        redactor: Redactor,
        limits: Limits,
    ) -> None:
        """limits: each provider's pace and daily budget, on state (as the search chain's)."""
        self._readers = readers
        self._cooldowns = Cooldowns(state)
        self._limits = limits
        self._timeout = timeout
        self._redactor = redactor

    async def read(self, url: str, *, markdown: bool) -> ExtractedText:
        reasons: list[str] = []
        for reader in self._readers:
            name = reader.name
            cooling = await self._cooldowns.remaining(name)
            if cooling > 0:
                why = await self._cooldowns.reason(name)
                reasons.append(f"{name}: cooling down for {math.ceil(cooling)} s after {why}")
                continue
            # A turn is waited for within this provider's time, leaving it at least a moment
            # for the call; the wait counts against that time, as a search's does.
            deadline = anyio.current_time() + self._timeout
            refused = await self._limits.admit(name, deadline, self._timeout)
            if refused is not None:
                logger.info("%s (read-through): skipped, %s", name, refused)
                reasons.append(f"{name}: {refused}")
                continue
            # In tenths: the providers are told this time, and admit() leaves at least a second.
            budget = max(0.1, round(deadline - anyio.current_time(), 1))
            mark = await self._cooldowns.mark()
            try:
                with anyio.fail_after(budget):
                    page = await reader.read(url, markdown=markdown, timeout=budget)
            except TimeoutError:
                error = ProviderError("timeout", f"no answer within {budget:g} s")
            except ProviderError as exc:
                error = exc
            except Exception:
                logger.exception("read-through provider %s crashed", name)
                error = ProviderError("bad_response", "the adapter failed unexpectedly (see the server log)")
            else:
                await self._cooldowns.reset(name, since=mark)
                content_type = "text/markdown" if markdown or name == "exa" else "text/plain"
                return ExtractedText(
                    url=page.url,
                    text=self._redactor.hide(page.text),
                    title=self._redactor.hide(page.title) if page.title else None,
                    via=_VIA[name],
                    provider=reader.title,
                    content_type=content_type,
                    author=self._redactor.hide(page.author) if page.author else None,
                    published=page.published,
                )
            reason = self._redactor.quote(str(error), REASON_LIMIT)
            if error.kind in COOLDOWN_KINDS:
                length = await self._cooldowns.penalize(name, error, since=mark)
                logger.info("%s (read-through): %s; cooling down for %.0f s", name, reason, length)
            else:
                logger.info("%s (read-through): %s", name, reason)
            reasons.append(f"{name}: {reason}")
        raise ReadThroughFailed(tuple(reasons))

    async def aclose(self) -> None:
        for reader in self._readers:
            await reader.aclose()


class LazyReadThrough:
    """Builds the readers on the first read: their SDKs take most of a second to import, and most
    servers never meet a page they cannot read."""

    def __init__(
        self,
        config: ProvidersConfig,
        order: tuple[str, ...],
        http: httpx.AsyncClient,
        state: StateBackend,
        *,
        timeout: float,
    ) -> None:
        unknown = [name for name in order if name not in READERS]
        if unknown:
            raise ValueError(f"these providers cannot read pages: {', '.join(unknown)}")
        self._config = config
        self._order = order
        self._http = http
        self._state = state
        self._timeout = timeout
        self._built: ProviderReadThrough | None = None
        self._lock = anyio.Lock()

    @property
    def order(self) -> tuple[str, ...]:
        return self._order

    async def read(self, url: str, *, markdown: bool) -> ExtractedText:
        return await (await self._get()).read(url, markdown=markdown)

    async def _get(self) -> ProviderReadThrough:
        async with self._lock:
            if self._built is None:
                classes = await anyio.to_thread.run_sync(
                    lambda: [adapter_class(spec_named(name)) for name in self._order]
                )
                readers: list[_Reader] = []
                for cls in classes:
                    # READERS are the adapters with a read method (TavilyProvider, ExaProvider).
                    readers.append(cast("_Reader", cls(provider_config(cls, self._config), self._http)))
                self._built = ProviderReadThrough(
                    readers,
                    self._state,
                    timeout=self._timeout,
                    redactor=Redactor(configured_secrets(self._config)),
                    # The same plans as the search chain's, kept on the same records.
                    limits=Limits(self._state, rps=self._config.rps, daily_limits=self._config.daily_limits),
                )
            return self._built

    async def aclose(self) -> None:
        if self._built is not None:
            await self._built.aclose()
