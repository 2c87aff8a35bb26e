"""The Redis backend against a real redis-server on 127.0.0.1: what replicas share (two backends
over one Redis stand for two replicas), and what happens when Redis is in trouble.

The port's contract itself is checked for Redis by tests/state/test_port.py, like memory's.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
import pytest

from mcp_server_web.fetch.types import Document, FetchResponse, PageMetadata
from mcp_server_web.server.shared_types import shared_types
from mcp_server_web.state import Codec, CooldownRecord, StateBackend, redis_state
from tests.support.redis_server import RedisServer, restartable_port, running_redis
from tests.support.responses import response
from tests.support.services import service_or_skip
from tests.support.timing import PATIENCE, allowance, slowest, timed
from tests.support.tls import Certificates, make_certificates


@asynccontextmanager
async def replicas(
    url: str, count: int = 2, *, prefix: str | None = None
) -> AsyncIterator[list[StateBackend]]:
    """count backends over one Redis and one prefix: what count replicas of a service share."""
    prefix = prefix or f"test-{uuid.uuid4().hex[:8]}:"
    made = [redis_state(url, prefix=prefix, codec=Codec(shared_types())) for _ in range(count)]
    try:
        yield made
    finally:
        for state in made:
            await state.aclose()


# What replicas share ---------------------------------------------------------------------------


async def test_an_entry_put_by_one_replica_is_read_by_another(redis_server: RedisServer) -> None:
    async with replicas(redis_server.url) as (a, b):
        store_a = a.store("fetch", ttl=60, max_bytes=1_000_000)
        store_b = b.store("fetch", ttl=60, max_bytes=1_000_000)
        page = response(bytes(range(256)) * 100, url="http://127.0.0.1/article")
        assert await store_a.put(("response", page.url), page)
        assert await store_b.get(("response", page.url)) == page
        assert (await store_b.usage()).entries == 1


async def test_the_byte_budget_holds_across_replicas(redis_server: RedisServer) -> None:
    async with replicas(redis_server.url) as (a, b):
        budget = 100_000
        stores = [a.store("fetch", ttl=60, max_bytes=budget), b.store("fetch", ttl=60, max_bytes=budget)]
        for n in range(20):
            assert await stores[n % 2].put(
                ("response", n), response(b"x" * 15_000, url=f"http://127.0.0.1/{n}")
            )
        usage = await stores[0].usage()
        assert usage.bytes is not None and usage.bytes <= budget
        kept = [n for n in range(20) if await stores[1].get(("response", n)) is not None]
        assert kept == list(range(20 - len(kept), 20)) and 4 <= len(kept) < 20  # the newest, from both


async def test_one_piece_of_work_for_callers_on_every_replica(redis_server: RedisServer) -> None:
    async with replicas(redis_server.url, 3) as states:
        flights = [state.flight("fetch.downloads") for state in states]
        runs = 0

        async def download() -> FetchResponse:
            nonlocal runs
            runs += 1
            await anyio.sleep(0.3)
            return response("<p>hello</p>", url="http://127.0.0.1/same")

        outcomes: list[tuple[FetchResponse, bool]] = []

        async def call(n: int) -> None:
            outcomes.append(await flights[n % 3].run(("download", "http://127.0.0.1/same"), download))

        async with anyio.create_task_group() as tg:
            for n in range(20):
                tg.start_soon(call, n)
        assert runs == 1
        assert all(result == response("<p>hello</p>", url="http://127.0.0.1/same") for result, _ in outcomes)
        assert sorted(joined for _, joined in outcomes) == [False] + [True] * 19


async def test_a_failed_piece_of_work_is_done_again_by_the_other_replica(redis_server: RedisServer) -> None:
    async with replicas(redis_server.url) as (a, b):
        started = anyio.Event()

        async def fails() -> str:
            started.set()
            await anyio.sleep(0.2)
            raise RuntimeError("origin answered 503")

        async def works() -> str:
            return "second try"

        failure: list[BaseException] = []

        async def on_a() -> None:
            try:
                await a.flight("f").run("k", fails)
            except RuntimeError as exc:
                failure.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(on_a)
            await started.wait()
            # B waits on A's lock, is told A failed (an exception cannot cross replicas), and works.
            assert await b.flight("f").run("k", works) == ("second try", False)
        assert len(failure) == 1


async def test_a_penalty_seen_by_one_replica_cools_the_provider_for_another(
    redis_server: RedisServer,
) -> None:
    async with replicas(redis_server.url) as (a, b):
        now = a.now()
        record = await a.cooldowns("search.cooldowns").penalize(
            "brave",
            lambda current, n: CooldownRecord(until=now + 60, strikes=1, reason="rate_limit", penalty=n),
        )
        seen = await b.cooldowns("search.cooldowns").get("brave")
        assert seen == record and seen.until - b.now() > 55
        assert await b.cooldowns("search.cooldowns").mark() == record.penalty
        await b.cooldowns("search.cooldowns").clear("brave", unless_penalized_after=record.penalty - 1)
        assert await a.cooldowns("search.cooldowns").get("brave") == record  # penalized after the mark
        await b.cooldowns("search.cooldowns").clear("brave", unless_penalized_after=record.penalty)
        assert await a.cooldowns("search.cooldowns").get("brave") is None


async def test_pacing_turns_and_daily_counts_are_one_for_all_replicas(redis_server: RedisServer) -> None:
    async with replicas(redis_server.url, 3) as states:
        now = states[0].now()
        slots = [
            await states[n % 3].pacer("search.pacing").claim("brave", 1.0, latest=now + 100) for n in range(6)
        ]
        assert all(slot is not None for slot in slots)
        gaps = [later - earlier for earlier, later in itertools.pairwise(slots)]  # type: ignore[operator]
        assert all(abs(gap - 1.0) < 1e-3 for gap in gaps), gaps
        counts = [
            await states[n % 3].counters("search.calls").take("brave", "2026-11-24", 4) for n in range(6)
        ]
        assert counts == [1, 2, 3, 4, None, None]
        assert await states[2].counters("search.calls").count("brave", "2026-11-24") == 4


# Safe by default ----------------------------------------------------------------------------------


async def test_keys_are_prefixed_and_hold_no_url_and_no_secret(redis_server: RedisServer) -> None:
    secret_url = "http://127.0.0.1/private-path?token=SECRET-TOKEN"
    async with replicas(redis_server.url, 1, prefix="team-a:") as (state,):
        await state.store("fetch", ttl=60, max_bytes=1_000_000).put(
            ("response", secret_url), response("<p>hello</p>", url=secret_url)
        )
        await state.flight("fetch.downloads").run(("download", secret_url), lambda: _value("done"))
        await state.counters("search.calls").take("brave", "2026-11-24", None)
    keys = redis_server.keys()
    assert keys and all(key.startswith(b"team-a:") for key in keys), keys
    assert not any(b"private-path" in key or b"SECRET" in key or b"127.0.0.1" in key for key in keys), keys


async def _value(value: str) -> str:
    return value


async def test_a_poisoned_or_oversized_entry_reads_as_a_miss(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async with replicas(redis_server.url, 1, prefix="p:") as (state,):
        store = state.store("fetch", ttl=60, max_bytes=50_000)
        assert await store.put("page", "a snapshot id")
        (entry,) = [key for key in redis_server.keys("p:fetch:*:e:*")]
        redis_server.command("SET", entry, b"\x00not what we wrote" * 10)
        with caplog.at_level(logging.WARNING):
            assert await store.get("page") is None
        assert "does not decode" in caplog.text
        assert redis_server.keys("p:fetch:*:e:*") == []  # dropped, not read again

        assert await store.put("page", "a snapshot id")
        (entry,) = [key for key in redis_server.keys("p:fetch:*:e:*")]
        redis_server.command("SET", entry, b"x" * 60_000)  # larger than this store keeps
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            assert await store.get("page") is None
        assert "over the 50000 allowed" in caplog.text
        # Not a Redis outage: the replica says degraded (a value it could not trust), and goes on
        # sharing through Redis.
        assert state.shared_status == "degraded"
        assert await store.put("page", "shared still") and redis_server.keys("p:fetch:*:e:*")


# Trouble never fails a call ---------------------------------------------------------------------


async def test_redis_stopped_and_started_again_every_call_succeeds(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async with replicas(redis_server.url) as (a, b):
        store_a, store_b = (s.store("fetch", ttl=60, max_bytes=1_000_000) for s in (a, b))
        assert await store_a.put("before", "shared")

        async def three_operations(n: object) -> None:
            assert await store_a.put(("during", n), f"local {n}")
            assert (
                await store_a.get(("during", n)) == f"local {n}"
            )  # this replica's memory once Redis is gone
            assert await a.counters("search.calls").take("brave", "2026-11-24", None) is not None

        # The same operations with Redis up, on this machine now: the bound grows with them.
        control = await slowest(lambda: three_operations("control"))
        redis_server.stop()
        with caplog.at_level(logging.WARNING):
            for n in range(50):
                _, took = await timed(lambda n=n: three_operations(n))
                assert took < allowance(1.0, control, 10), f"{took:.2f} s, with Redis up {control:.3f} s"
        assert a.shared_status == "degraded"
        warnings = [r for r in caplog.records if "Redis failed" in r.getMessage()]
        assert len(warnings) == 1, [r.getMessage() for r in caplog.records]

        redis_server.start()  # empty: a restart without persistence
        with anyio.fail_after(PATIENCE):
            while a.shared_status != "ok":  # noqa: ASYNC110 - found again in the background, no call made
                await anyio.sleep(0.1)
        assert "Redis answers again" in caplog.text
        assert await store_a.put("after", "shared again")
        assert await store_b.get("after") == "shared again"


async def test_a_redis_that_never_answers_costs_each_call_one_short_deadline(
    redis_server: RedisServer,
) -> None:
    async with replicas(redis_server.url, 1) as (state,):
        store = state.store("fetch", ttl=60, max_bytes=1_000_000)
        assert await store.put("k", "v")

        async def twenty_puts() -> None:
            for n in range(20):
                assert await store.put(("k", n), "v")

        # With Redis answering, on this machine now: one read, and twenty writes.
        one = await slowest(lambda: store.get("k"))
        twenty = await slowest(twenty_puts)
        redis_server.pause()  # accepts connections, answers nothing
        try:
            # Not in this replica's memory: a miss, not a failure.
            missed, first = await timed(lambda: store.get("k"))
            assert missed is None
            _, rest = await timed(twenty_puts)
        finally:
            redis_server.resume()
        # The per-operation deadline (0.5 s), once; then straight to memory while degraded.
        assert 0.4 < first < 0.5 + allowance(1.0, one, 10), f"{first:.2f} s, answered {one:.3f} s"
        assert rest < allowance(0.5, twenty, 2), f"{rest:.2f} s, answered {twenty:.3f} s"
        assert state.shared_status == "degraded"


async def test_a_redis_out_of_memory_refuses_writes_and_calls_go_on() -> None:
    with running_redis(maxmemory="2mb") as small:
        async with replicas(small.url, 1) as (state,):
            store = state.store("fetch", ttl=60, max_bytes=64 * 1024 * 1024)
            for n in range(40):
                assert await store.put(("big", n), response(b"x" * 200_000, url=f"http://127.0.0.1/{n}"))
                assert await store.get(("big", n)) is not None  # from Redis, or from memory once refused
            assert state.shared_status == "degraded"  # writes refused: the probe's write fails too


class TLSRedis(RedisServer):
    """redis-server answering TLS on a second port (readiness is still asked on the plain one)."""

    def __init__(self, binary: str, directory: Path, certificates: Certificates) -> None:
        super().__init__(binary, directory)
        self.certificates = certificates
        self.tls_port = restartable_port()

    def _config(self) -> str:
        return super()._config() + "\n".join(
            [
                f"tls-port {self.tls_port}",
                f"tls-cert-file {self.certificates.cert_file}",
                f"tls-key-file {self.certificates.key_file}",
                f"tls-ca-cert-file {self.certificates.ca_file}",
                "tls-auth-clients no",
                "",
            ]
        )


async def test_rediss_with_the_servers_ca_shares_state_and_an_unknown_ca_degrades(tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path, "localhost")
    server = TLSRedis(service_or_skip("redis-server"), tmp_path, certificates)
    server.start()
    try:
        trusted = f"rediss://localhost:{server.tls_port}/0?ssl_ca_certs={certificates.ca_file}"
        async with replicas(trusted) as (a, b):
            assert await a.store("fetch", ttl=60, max_bytes=100_000).put("k", "over TLS")
            assert await b.store("fetch", ttl=60, max_bytes=100_000).get("k") == "over TLS"
            assert a.shared_status == "ok"
        # Without our CA the certificate is not trusted: nothing is sent, calls go on in memory.
        async with replicas(f"rediss://localhost:{server.tls_port}/0", 1) as (state,):
            assert await state.store("fetch", ttl=60, max_bytes=100_000).put("k", "kept locally")
            assert state.shared_status == "degraded"
    finally:
        server.stop()


@dataclass(frozen=True)
class NotRegistered:
    text: str


async def test_a_type_the_registry_lacks_is_not_kept_and_fails_no_call(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async with replicas(redis_server.url) as (a, b):
        with caplog.at_level(logging.ERROR):
            assert not await a.store("fetch", ttl=60, max_bytes=100_000).put("k", NotRegistered("x"))
            # The work's result still reaches its caller; only other replicas cannot be handed it.
            assert await a.flight("f").run("k", lambda: _value_of(NotRegistered("y"))) == (
                NotRegistered("y"),
                False,
            )
        assert "cannot store a NotRegistered" in caplog.text
        assert a.shared_status == "ok" and await b.store("fetch", ttl=60, max_bytes=100_000).get("k") is None


async def _value_of(value: NotRegistered) -> NotRegistered:
    return value


# A document's metadata between replicas ----------------------------------------------------------


def _document_with_metadata() -> Document:
    return Document(
        url="http://127.0.0.1/news/valleys",
        final_url="http://127.0.0.1/news/valleys",
        status=200,
        content_type="text/html",
        title="Valleys",
        format="markdown",
        main_content=True,
        text="# Valleys\n\nRivers carry sediment downstream.",
        snapshot="0123456789ab",
        fetched_at="2025-01-02T03:04:05Z",
        metadata=PageMetadata(
            author="Jane Doe, John Roe",
            published="2024-03-01T09:30:00+01:00",
            modified="2024-03-05T18:00:00+00:00",
            site_name="The Valley Times",
            language="en-GB",
            description="How rivers cut valleys. " * 20,
            canonical_url="http://127.0.0.1/2024/03/valleys",
        ),
    )


@dataclass(frozen=True, slots=True)
class _DocumentBefore:
    """fetch.types.Document as it was before it carried metadata: what a replica not yet upgraded
    registers under the same tag."""

    url: str
    final_url: str
    status: int
    content_type: str
    title: str | None
    format: Literal["markdown", "text", "html"]
    main_content: bool
    text: str
    used_fallback: bool = False
    warnings: tuple[str, ...] = ()
    snapshot: str = ""
    fetched_at: str = ""
    via: Literal["direct", "browser", "tavily", "exa"] = "direct"


async def test_a_documents_metadata_crosses_redis_and_an_older_replica_never_misreads_it(
    redis_server: RedisServer,
) -> None:
    async with replicas(redis_server.url) as (a, b):
        document = _document_with_metadata()
        store_a = a.store("fetch", ttl=60, max_bytes=1_000_000)
        assert await store_a.put(("snapshot", document.snapshot), document)
        back = await b.store("fetch", ttl=60, max_bytes=1_000_000).get(("snapshot", document.snapshot))
        assert back == document and back.metadata == document.metadata

    # A replica whose Document has no metadata (the release before) keeps its entries under
    # another fingerprint: neither reads the other's as its own.
    older_types = {**shared_types(), "fetch.document": _DocumentBefore}
    older_codec = Codec(older_types)
    assert older_codec.fingerprint != Codec(shared_types()).fingerprint
    prefix = f"test-{uuid.uuid4().hex[:8]}:"
    older = redis_state(redis_server.url, prefix=prefix, codec=older_codec)
    newer = redis_state(redis_server.url, prefix=prefix, codec=Codec(shared_types()))
    try:
        old_document = _DocumentBefore(**{
            name: getattr(document, name) for name in _DocumentBefore.__dataclass_fields__
        })  # fmt: skip
        assert await older.store("fetch", ttl=60, max_bytes=1_000_000).put("page", old_document)
        assert await newer.store("fetch", ttl=60, max_bytes=1_000_000).get("page") is None
        assert await newer.store("fetch", ttl=60, max_bytes=1_000_000).put("page", document)
        assert await older.store("fetch", ttl=60, max_bytes=1_000_000).get("page") == old_document
        assert await newer.store("fetch", ttl=60, max_bytes=1_000_000).get("page") == document
    finally:
        await older.aclose()
        await newer.aclose()


async def test_forged_metadata_in_redis_reads_as_a_miss(redis_server: RedisServer) -> None:
    # Whoever can write to Redis writes a document whose author is not a string: decoding checks
    # every field of the metadata against its declared type, and the entry is a miss.
    async with replicas(redis_server.url, 1, prefix="m:") as (state,):
        store = state.store("fetch", ttl=60, max_bytes=1_000_000)
        document = _document_with_metadata()
        assert await store.put("page", document)
        (entry,) = redis_server.keys("m:fetch:*:e:*")
        stored = redis_server.command("GET", entry)
        assert isinstance(stored, bytes) and b'"Jane Doe, John Roe"' in stored
        redis_server.command("SET", entry, stored.replace(b'"Jane Doe, John Roe"', b'["Jane","Doe","John"]'))
        assert await store.get("page") is None
