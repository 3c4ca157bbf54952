"""Bots that play only through the HTTP client; `sng demo`'s flow; polling stays bounded."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from prometheus_client import REGISTRY

from core.settings import Settings
from sdk.client import SngClient, SngError
from sdk.demo import run_demo
from tests.conftest import serve_api
from tests.integration.helpers import player


async def test_demo_plays_to_closed_after_waiting_for_its_human_seat(
    api_url: str, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sng demo --humans 1`: the bots take all but one seat, the command says where to go,
    the tournament starts only once the person has registered and paid there, and it plays
    to closed with the payouts equal to the pool (the person here is played by a bot through
    the same HTTP client)."""
    from core.tokens import mint_player_token
    from sdk.bots import POLICIES, run_bot

    demo = asyncio.create_task(
        run_demo(api_url, settings, seats=3, humans=1, stack=300, level_seconds=30)
    )
    url = ""
    for _ in range(200):
        await asyncio.sleep(0.1)
        url = next((w for w in capsys.readouterr().err.split() if "/play/tournaments/" in w), url)
        if url:
            break
    assert url.startswith(f"{api_url}/play/tournaments/"), url
    tid = url.rsplit("/", 1)[1]
    async with SngClient(api_url) as anyone:
        view = await anyone.tournament(tid)
        assert view["state"] == "registering" and view["registeredCount"] == 2
        await asyncio.sleep(1.5)
        assert (await anyone.tournament(tid))["state"] == "registering"
        assert not demo.done()
    async with (
        SngClient(api_url, service_key=settings.key("admin")) as op,
        SngClient(api_url, token=mint_player_token(settings, "demo-person")) as person,
    ):
        await op.credit("demo-person", 100, "demo-person-entry")
        await person.register(tid)
        await person.pay(tid, 100)
        bot = asyncio.create_task(run_bot(person, tid, POLICIES["tag"], seed=7))
        result = await asyncio.wait_for(demo, 180)
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)
    assert result["state"] == "closed"
    assert "demo-person" in {s["player"] for s in result["standings"]}
    assert sorted(s["elimination_order"] for s in result["standings"]) == [1, 2, 3]
    assert (
        sum(p["amount"] for p in result["payouts"])
        == result["entry_fees_total"] - result["rake_total"]
    )


async def test_demo_plays_a_multi_table_tournament_with_late_entries_and_re_entries(
    api_url: str, settings: Settings
) -> None:
    """`sng demo --entrants 6 --seats 3 --late-seconds 10 --re-entries 1`: six bots on two
    tables, one of them entering after the start, busted bots entering again while late
    registration is open, to closed with every entry placed and the pool paid. (Eight bots on
    tables of four took 140 s in CI once busted bots really re-entered: six at 7.5 big blinds
    cover the same paths in less.)"""
    result = await asyncio.wait_for(
        run_demo(
            api_url,
            settings,
            seats=3,
            entrants=6,
            late_seconds=10,
            re_entries=1,
            stack=150,
            small_blind=10,
            level_seconds=30,
        ),
        240,
    )
    assert result["state"] == "closed"
    field = result["field_size"]
    players = [row["player"] for row in result["standings"]]
    # Every bot entered, the late ones included; each entry finished once.
    assert len(set(players)) == 6, players
    assert field == len(players) >= 6
    # A re-entry is one more entry of the same bot (a bust inside the 10 s window is likely at
    # 7.5 big blinds, not certain: the count is checked, not required to grow).
    assert field - 6 == sum(players.count(p) - 1 for p in set(players))
    assert sorted(row["elimination_order"] for row in result["standings"]) == list(
        range(1, field + 1)
    )
    assert (
        sum(p["amount"] for p in result["payouts"])
        == result["entry_fees_total"] - (result["rake_total"])
    )


async def test_game_state_and_actions_through_http(api_url: str, settings: Settings) -> None:
    async with SngClient(api_url, service_key=settings.key("admin")) as op:
        tid = await op.create_tournament(
            "play",
            {
                "seats": 2,
                "entryFee": 10,
                "startingStack": 1000,
                "actionTimeoutSeconds": 30,
                "blindStructure": {
                    "startingSmallBlind": 10,
                    "increaseFactor": 1.5,
                    "levelDurationSeconds": 600,
                },
            },
            hand_pause_ms=0,
        )
        for user in ("gs-a", "gs-b"):
            await op.credit(user, 10, f"gs-{user}")
    a = SngClient(api_url, token=player(settings, "gs-a")["Authorization"].split()[1])
    b = SngClient(api_url, token=player(settings, "gs-b")["Authorization"].split()[1])
    try:
        for c in (a, b):
            await c.register(tid)
            await c.pay(tid, 10)
        pre = await a.game_state(tid)
        assert pre["tournament"]["state"] in ("registering", "starting", "playing")
        state = await a.game_state(tid, wait_for_change=0, wait_seconds=10)
        for _ in range(50):
            if state.get("hand"):
                break
            state = await a.game_state(tid, wait_for_change=state["version"], wait_seconds=5)
        assert state["tournament"]["smallBlind"] == 10 and state["tournamentSchedule"]["continues"]
        assert "tournamentMyView" in state, state
        assert state["tournamentMyView"]["rank"] == 1
        assert "mtt" in state and state["mtt"] is None  # a Sit-and-Go has no MTT view
        mine = [p for p in state["hand"]["players"] if p["holeCards"]]
        assert len(mine) == 1  # only the caller's own cards
        actor, other = (a, b) if state["legalActions"] else (b, a)
        s = await actor.game_state(tid)
        with pytest.raises(SngError) as refused:
            await other.act(tid, hand_number=s["handNumber"], turn=s["turn"], action="call")
        assert (refused.value.status, refused.value.code) == (409, "not_your_turn")
        with pytest.raises(SngError) as stale:
            await actor.act(tid, hand_number=s["handNumber"], turn=s["turn"] + 5, action="call")
        assert stale.value.code == "stale_turn"
        done = await actor.act(tid, hand_number=s["handNumber"], turn=s["turn"], action="call")
        assert done["turn"] == s["turn"] + 1
        after = await other.game_state(tid, wait_for_change=s["version"], wait_seconds=5)
        assert after["version"] > s["version"] and after["legalActions"] is not None
    finally:
        await a.aclose()
        await b.aclose()
        async with httpx.AsyncClient(base_url=api_url) as http:
            await http.post(
                "/admin/force-end-tournament",
                json={"tableId": tid},
                headers={"X-Service-Key": settings.key("admin")},
            )


async def test_many_pollers_cost_the_workflow_no_query_at_all(
    api_url: str, settings: Settings
) -> None:
    async with SngClient(api_url, service_key=settings.key("admin")) as op:
        tid = await op.create_tournament(
            "poll",
            {
                "seats": 2,
                "entryFee": 10,
                "startingStack": 1000,
                "actionTimeoutSeconds": 300,
                "blindStructure": {
                    "startingSmallBlind": 10,
                    "increaseFactor": 1.5,
                    "levelDurationSeconds": 600,
                },
            },
            hand_pause_ms=0,
        )
        for user in ("pl-a", "pl-b"):
            await op.credit(user, 10, f"pl-{user}")
    clients = [
        SngClient(api_url, token=player(settings, u)["Authorization"].split()[1])
        for u in ("pl-a", "pl-b")
    ]
    try:
        for c in clients:
            await c.register(tid)
            await c.pay(tid, 10)
        state = await clients[0].game_state(tid)
        while not state.get("hand"):
            await asyncio.sleep(0.2)
            state = await clients[0].game_state(tid)

        async def poll(c: SngClient) -> None:
            for _ in range(8):
                await c.game_state(tid)

        # Reads are served from the pushed read model (docs/read-model.md): however many
        # requests, the table and the tournament are asked nothing.
        before = _queries()
        await asyncio.gather(*(poll(clients[i % 2]) for i in range(40)))
        assert _queries() - before == 0
    finally:
        for c in clients:
            await c.aclose()


def _queries() -> float:
    return sum(
        REGISTRY.get_sample_value("sng_api_workflow_queries_total", {"workflow": w}) or 0.0
        for w in ("table", "tournament")
    )


async def test_the_client_waits_out_a_rate_limit_instead_of_failing(settings: Settings) -> None:
    """Forty credits at once through one operator credential limited to 20 a second: the
    SDK's client sends a ``429 rate_limited`` call again after its ``Retry-After`` (the
    refusal changed nothing), so every credit lands, once (``sng demo`` credits a whole field
    this way; it failed on the first 429)."""
    limited = settings.model_copy(update={"rate_limit_credential": "20/second"})
    async with (
        serve_api(limited) as url,
        SngClient(url, service_key=settings.key("admin")) as op,
    ):
        balances = await asyncio.gather(
            *(op.credit(f"rate-limited-{i}", 1, f"rate-limited-{i}") for i in range(40))
        )
    assert balances == [1] * 40
