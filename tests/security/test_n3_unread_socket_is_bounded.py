"""N3 (second security review): what a WebSocket nobody reads may hold.

A player's socket queued up to 256 messages, full game states included, for a client that
reads nothing: the replica's stream total was also a memory total of 256 game states per
socket. Now a socket's outbox (api/streams.py ``Outbox``, what ``/…/me/ws`` sends from) holds
a few messages and the newest game state (an unsent one is replaced by a newer one), and a
socket that stays at that bound is closed (``Stalled``; the route closes it with 1008 and
frees its slot).
"""

from __future__ import annotations

import asyncio

import pytest

from api.streams import OTHERS, Outbox, Stalled


def state(version: int) -> dict[str, object]:
    return {"id": f"1-{version}", "event": "game_state", "data": {"version": version}}


def event(n: int) -> dict[str, object]:
    return {"id": f"{n}-0", "event": "hand_result", "data": {"handNumber": n}}


async def test_game_states_nobody_reads_are_one_game_state() -> None:
    outbox = Outbox()
    for version in range(1, 1001):
        await asyncio.wait_for(outbox.put(state(version)), 5)  # never waits for the reader
    assert len(outbox) == 1
    assert await outbox.get() == state(1000)


async def test_a_state_is_skipped_only_when_a_newer_one_comes_right_after_it() -> None:
    outbox = Outbox()
    for message in (state(1), state(2), event(1), state(3), state(4), event(2), state(5)):
        await outbox.put(message)
    got = [await outbox.get() for _ in range(len(outbox))]
    # Every event, in order, each after the newest state before it (a hand's result comes
    # right after its state, docs/events.md), and the newest state last.
    assert got == [state(2), event(1), state(4), event(2), state(5)]


async def test_other_messages_are_bounded_and_a_stalled_reader_is_given_up() -> None:
    outbox = Outbox(stall_seconds=0.5)
    for n in range(OTHERS):
        await outbox.put(event(n))
    for version in range(7, 100):  # the newest state still fits, one of them
        await asyncio.wait_for(outbox.put(state(version)), 5)
    assert len(outbox) == OTHERS + 1
    # One more waits for the reader (the state it would follow would count too); a reader
    # that takes two makes room.
    more = asyncio.create_task(outbox.put(event(OTHERS)))
    await asyncio.sleep(0)
    assert await outbox.get() == event(0)
    await asyncio.sleep(0)
    assert not more.done()
    assert await outbox.get() == event(1)
    await asyncio.wait_for(more, 5)
    assert len(outbox) == OTHERS  # the 30 events left, the state, the new event
    # A reader that takes nothing: the writer gives up (the socket is closed), memory stays put.
    with pytest.raises(Stalled):
        await outbox.put(event(OTHERS + 1))
    assert len(outbox) == OTHERS


def test_an_ipv6_host_counts_as_its_slash_64() -> None:
    """Independent review of N3: one IPv6 host usually holds a whole /64, so counting single
    IPv6 addresses gave it as many anonymous stream slots as it liked."""
    from starlette.requests import HTTPConnection

    from api.errors import ApiError
    from api.streams import StreamSlots

    def anonymous(host: str) -> HTTPConnection:
        return HTTPConnection({"type": "http", "client": (host, 1), "headers": []})

    slots = StreamSlots(total=1_000, per_client=4, per_address=100)
    for n in range(4):
        slots.acquire(anonymous(f"2001:db8:1:2::{n + 1:x}"))
    try:
        slots.acquire(anonymous("2001:db8:1:2:ffff::1"))
        raise AssertionError("a fifth anonymous stream from the same /64 was taken")
    except ApiError as err:
        assert err.code.value == "too_many_streams"
    slots.acquire(anonymous("2001:db8:1:3::1"))  # another /64 is another client
