"""Shared fixtures and helpers for the provider tests: each adapter over real HTTP against its
fake on loopback, and chains built from real adapters pointed at local fake providers."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Protocol, TypeVar

import httpx
import pytest

from mcp_server_web.config import Settings
from mcp_server_web.providers.base import ProviderError, SearchProvider, SearchQuery
from mcp_server_web.providers.chain import SearchChain
from mcp_server_web.providers.registry import provider_classes, provider_config, spec_for
from mcp_server_web.server.compose import providers_config
from mcp_server_web.state import MemoryState
from tests.support.fakes.base import Failure, FakeProvider, JsonFakeProvider, sample_results, settings_for
from tests.support.timing import allowance, slowest

USER_AGENT = "mcp-server-web-tests/1.0"

F = TypeVar("F", bound=FakeProvider)
P = TypeVar("P", bound=SearchProvider)


class Clock:
    """A clock the test moves by hand, for cooldowns and cache expiry."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def fake_fixture(fake_class: Callable[[], F]) -> Any:
    """A test module's ``fake`` fixture: a running ``fake_class`` for each test.

    Use as ``fake = fake_fixture(FakeBrave)``; the conftest's ``provider`` fixture builds the
    adapter for whichever fake the module serves.
    """

    @pytest.fixture
    def fake() -> Iterator[F]:
        with fake_class() as server:
            yield server  # type: ignore[misc]

    return fake


class ProviderFactory(Protocol):
    def __call__(self, cls: type[P], base_url: str, key: str | None = None) -> P: ...


@pytest.fixture
async def make_provider(http: httpx.AsyncClient) -> AsyncIterator[ProviderFactory]:
    """Builds adapters with the tests' User-Agent over the shared client; closes them after the
    test (closing twice is harmless, so a test may close one itself)."""
    made: list[SearchProvider] = []

    def make(cls: type[P], base_url: str, key: str | None = None) -> P:
        # Configured as the server configures it, so messages name the server's settings.
        name = spec_for(cls).name
        values = {"user_agent": USER_AGENT, f"{name}_url": base_url}
        if key is not None:
            values[f"{name}_api_key"] = key
        adapter = cls(provider_config(cls, providers_config(Settings.from_values(values))), http)
        made.append(adapter)
        return adapter

    yield make
    for adapter in made:
        await adapter.aclose()


@pytest.fixture
def provider(fake: FakeProvider, make_provider: ProviderFactory) -> SearchProvider:
    """The module's adapter, configured from its fake's settings the way the server does it."""
    cls = provider_classes()[fake.name]
    settings = Settings.from_values({"user_agent": USER_AGENT, **fake.settings()})
    config = provider_config(cls, providers_config(settings))
    return make_provider(cls, config.base_url, config.api_key)


async def failure(
    provider: SearchProvider,
    query: SearchQuery | None = None,
    budget: float = 5.0,
    *,
    within: float | None = None,
) -> ProviderError:
    """The ProviderError a search raises (within ``within`` seconds, when given). Whatever
    failed, it must not show the provider's key."""
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        await provider.search(query or SearchQuery("python"), timeout=budget)
    if within is not None:
        assert time.monotonic() - started < within
    error = caught.value
    assert_never_shows(error, provider.config.api_key)
    return error


def assert_never_shows(error: ProviderError, *secrets: str | None) -> None:
    """None of ``secrets`` appears in the error, however it is printed."""
    for secret in filter(None, secrets):
        for text in (str(error), error.message, repr(error)):
            assert secret not in text


@pytest.fixture
def unused_url() -> str:
    """An http URL on a loopback port nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class Provoke(Protocol):
    def __call__(
        self, situation: str, *, status: int | None = None, retry_after: int | None = None
    ) -> Awaitable[ProviderError]: ...


@pytest.fixture(
    params=[
        pytest.param(("hang", "timeout"), id="hanging-service-times-out-within-budget"),
        pytest.param(("malformed", "bad_response"), id="malformed-body-is-bad-response"),
        pytest.param(("truncated", "bad_response"), id="truncated-body-is-bad-response"),
        pytest.param(("refused", "upstream"), id="connection-refused-is-upstream"),
        pytest.param(("endpoint ftp://127.0.0.1:9", "config"), id="ftp-endpoint-is-config"),
        pytest.param(("endpoint 127.0.0.1:9", "config"), id="endpoint-without-scheme-is-config"),
    ]
)
def common_failure(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Each failure every adapter must map the same way, as (situation for ``provoke``, error
    kind); a test that takes this fixture runs once for each."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=["auth", "blocked", "quota", "rate_limit", "server", "malformed", "truncated"])
def fake_failure(request: pytest.FixtureRequest) -> Failure:
    """Each failure a fake acts out by answering (all but "timeout"); a test that takes this
    fixture runs once for each."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def provoke(
    fake: FakeProvider, provider: SearchProvider, make_provider: ProviderFactory, unused_url: str
) -> Provoke:
    """Makes the module's adapter fail in a named way and returns its error.

    "hang": the fake holds the request (5 s), and a 0.5 s budget must end the search within 1.5 s,
    or within 0.5 s and ten ordinary searches' time on a machine too busy for that.
    "refused": nothing listens at the endpoint. "endpoint <url>": the adapter is set up with
    that endpoint. "wrong key": with a key the fake does not take. Anything else is a failure
    the fake acts out ("malformed", "server", ...), with ``retry_after`` and, for a JSON fake,
    another ``status`` than the usual one.
    """

    async def provoke(
        situation: str, *, status: int | None = None, retry_after: int | None = None
    ) -> ProviderError:
        if situation == "hang":
            fake.answer(sample_results(2))
            control = await slowest(lambda: provider.search(SearchQuery("python"), timeout=5.0))
            fake.fail("timeout")
            return await failure(provider, budget=0.5, within=0.5 + allowance(1.0, control, 10))
        if situation == "wrong key":
            return await failure(make_provider(type(provider), provider.config.base_url, "not-the-right-key"))
        if situation == "refused" or situation.startswith("endpoint "):
            url = unused_url if situation == "refused" else situation.removeprefix("endpoint ")
            return await failure(make_provider(type(provider), url, provider.config.api_key))
        if status is not None:
            assert isinstance(fake, JsonFakeProvider), "only JSON fakes take another status"
            fake.statuses[situation] = status  # type: ignore[index]
        fake.fail(situation, retry_after)  # type: ignore[arg-type]
        return await failure(provider)

    return provoke


ChainFactory = Callable[..., SearchChain]


@pytest.fixture
def make_chain(fakes: dict[str, FakeProvider], http: httpx.AsyncClient) -> ChainFactory:
    def make(order: tuple[str, ...], *, clock: Clock | None = None, **chain_options: Any) -> SearchChain:
        config = providers_config(settings_for(fakes))
        classes = provider_classes()
        providers = [classes[name](provider_config(classes[name], config), http) for name in order]
        if clock is not None:
            chain_options["state"] = MemoryState(clock=clock)
        return SearchChain(providers, **chain_options)

    return make
