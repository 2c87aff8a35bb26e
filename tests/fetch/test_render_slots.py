"""The render slots' sharing rule (fetch/browser/slots.py): a client's share, who gets a freed slot,
and that a wait given up leaves no slot taken. The whole path, a real server and browser, is
tests/security/test_render_fairness.py."""

from __future__ import annotations

import anyio

from mcp_server_web.fetch import on_behalf_of
from mcp_server_web.fetch.browser.slots import FairSlots, current_client


async def _holders(slots: FairSlots, clients: list[str | None], order: list[str | None]) -> None:
    """Start a waiter for each client, one after the other, recording who is granted, in order."""

    async def take(client: str | None) -> None:
        await slots.acquire(client)
        order.append(client)

    async with anyio.create_task_group() as group:
        for client in clients:
            group.start_soon(take, client)
            await anyio.sleep(0.01)  # arrive in this order
        await anyio.sleep(0.05)
        group.cancel_scope.cancel()


async def test_a_named_client_holds_one_slot_fewer_than_there_are() -> None:
    slots = FairSlots(3)
    granted: list[str | None] = []
    await _holders(slots, ["flood"] * 5, granted)
    assert granted == ["flood", "flood"]
    assert slots.held("flood") == 2
    # The slot kept back goes to anyone else at once.
    with anyio.fail_after(1):
        await slots.acquire("other")


async def test_renders_on_behalf_of_nobody_may_take_every_slot() -> None:
    slots = FairSlots(2)
    granted: list[str | None] = []
    await _holders(slots, [None] * 3, granted)
    assert granted == [None, None]


async def test_a_freed_slot_goes_to_the_client_holding_fewest_then_the_longest_waiting() -> None:
    slots = FairSlots(3)
    for _ in range(2):
        await slots.acquire("a")
    await slots.acquire("b")
    granted: list[str | None] = []

    async def take(client: str) -> None:
        await slots.acquire(client)
        granted.append(client)

    async with anyio.create_task_group() as group:
        for client in ("a", "b", "c", "d"):  # a is at its share; b holds one; c and d none
            group.start_soon(take, client)
            await anyio.sleep(0.01)
        slots.release("a")
        await anyio.sleep(0.01)
        slots.release("b")
        await anyio.sleep(0.01)
        # c holds none; then b, which gave its slot back, holds none and waited longer than d.
        assert granted == ["c", "b"]
        group.cancel_scope.cancel()


async def test_a_wait_given_up_leaves_no_slot_taken() -> None:
    slots = FairSlots(2)
    await slots.acquire("a")
    await slots.acquire("b")
    for _ in range(3):
        with anyio.move_on_after(0.02):
            await slots.acquire("c")
    # Granted and cancelled in the same turn: either the wait returns (the caller then holds the
    # slot and gives it back, as Renderer.render does) or it raises and holds nothing.
    returned: list[bool] = []

    async def granted_as_cancelled() -> None:
        await slots.acquire("d")
        returned.append(True)
        slots.release("d")

    async with anyio.create_task_group() as group:
        group.start_soon(granted_as_cancelled)
        await anyio.sleep(0.01)
        slots.release("a")
        group.cancel_scope.cancel()
    slots.release("b")
    assert slots.held("c") == slots.held("d") == 0
    with anyio.fail_after(1):  # both slots are free again
        await slots.acquire("x")
        await slots.acquire("y")


async def test_the_client_is_named_for_the_block_only() -> None:
    assert current_client() is None
    with on_behalf_of("203.0.113.9"):
        assert current_client() == "203.0.113.9"
    assert current_client() is None
