"""S3 (security review 3): one unpaid re-entry stopped every on-chain payout of an MTT.

A re-entry's reserve replaces the player's record (``wallet=None``), and settlement read each
prize's wallet from the player's *latest* record behind an ``assert``: when the tournament
ended with late registration still open, place 2 (a held bust whose player had registered
again and not paid) failed the assertion, no payout intent was made and the pool stayed in the
vault (in production: a workflow task failing on every retry). The reviewer's harness, as a
regression test: six entrants on chain money, late registration open at the end, every bust
registering again unpaid but one, which re-enters paid from a second wallet. Now each paid
entry keeps its wallet, each prize goes to the wallet of the entry that finished, and a prize
whose wallet is unknown is refused visibly (``payout_wallet_unknown``) until an operator names
it; never an ``assert``.

Money moves on anvil with the real vault and token: each entry pays by a permit from a wallet
of its own, and the test reads each prize in the winning entry's wallet.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from core.settings import Settings
from db.engine import Database
from devtools.chain import ChainInfo
from tests.chain.conftest import Chips, chain, chain_activities, chips, dev_chain, w3  # noqa: F401
from tests.integration.helpers import admin, create, eventually
from tests.integration.test_mtt import Bots, mtt_settings
from tests.integration.test_mtt_late import books
from tests.replay import histories_from, replay_histories
from tests.test_golden_histories import patch_markers
from wire.messages import (
    CreateTournamentInput,
    PayEntryInput,
    Permit,
    RegisterInput,
    RetryPayoutsInput,
    TournamentPhase,
    TournamentView,
)
from worker import build_worker
from workflows.tournament import TournamentWorkflow
from workflows.tournament.books import Books
from workflows.tournament.settlement import Settlement

FEE = 100
Handle = WorkflowHandle[TournamentWorkflow, TournamentView]


async def _pay(handle: Handle, chips: Chips, user: str) -> str:  # noqa: F811
    """``user``'s entry, paid by a permit from a new wallet of its own; that wallet."""
    wallet = chips.new_wallet(FEE)
    await handle.execute_update(
        TournamentWorkflow.pay_entry,
        PayEntryInput(
            player_id=user, amount=FEE, permit=Permit.model_validate(chips.permit(wallet, FEE))
        ),
    )
    return wallet.address


async def test_unpaid_re_entries_do_not_stop_the_payouts_and_each_prize_goes_to_its_entry(
    client: Client,
    db: Database,
    task_queue: str,
    chips: Chips,  # noqa: F811
    chain: ChainInfo,  # noqa: F811
) -> None:
    async with build_worker(client, db, task_queue, chain=chain_activities(chain)):
        await _play(client, task_queue, chips)


async def _play(client: Client, task_queue: str, chips: Chips) -> None:  # noqa: F811
    tid = f"s3-{uuid.uuid4().hex[:6]}"
    settings = {
        **mtt_settings(12, seats=3),
        "minEntrants": 6,
        "lateRegistrationSeconds": 300,  # open at the end
        "maxReEntries": 1,
        # Two paid places: place 2 is a held bust, whose player may have registered again.
        "prizeStructure": [{"position": 1, "percent": 65}, {"position": 2, "percent": 35}],
    }
    users = [f"{tid}-{i}" for i in range(6)]
    handle: Handle = await client.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tid,
            name=tid,
            settings={**settings, "scheduledStartAt": int(time.time() * 1000) + 5_000},
            hand_pause_ms=0,
            money_backend="chain",
        ),
        id=f"tournament-{tid}",
        task_queue=task_queue,
    )
    paid: dict[str, list[str]] = {}  # each player's wallets, in the order their entries paid
    for user in users:
        await handle.execute_update(
            TournamentWorkflow.register, RegisterInput(player_id=user, owner_user_id=user)
        )
        paid[user] = [await _pay(handle, chips, user)]

    async def playing() -> bool:
        return (await handle.query(TournamentWorkflow.state)).state is TournamentPhase.PLAYING

    await eventually(playing, limit=30)

    bots = Bots(client)
    answered: set[str] = set()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 120
    while (await handle.query(TournamentWorkflow.state)).state is TournamentPhase.PLAYING:
        assert loop.time() < deadline, "the MTT did not end in time"
        view = await books(handle)
        for out in [p for p, chips in view.stacks.items() if chips == 0 and p not in answered]:
            answered.add(out)
            try:
                await handle.execute_update(
                    TournamentWorkflow.register, RegisterInput(player_id=out, owner_user_id=out)
                )
            except WorkflowUpdateFailedError:
                continue  # late registration closed with the end meanwhile
            if len(answered) == 1:  # the first bust re-enters, paid from another wallet
                paid[out].append(await _pay(handle, chips, out))
            # every other bust holds an unpaid reserve: its record now has no wallet
        running = [t.workflow_id for t in view.books.tables.values() if not t.done]
        if not any(
            await asyncio.gather(
                *(bots.act_at(w, shove_hands=set(range(1, 5000))) for w in running)
            )
        ):
            await asyncio.sleep(0.05)

    async def settled() -> TournamentView | None:
        state = await handle.query(TournamentWorkflow.state)
        return state if state.state is TournamentPhase.CLOSED else None

    result = await eventually(settled, limit=60)
    assert len(answered) >= 2, "no bust registered again without paying"
    assert len(result.payouts) >= 2, "place 2 (a held bust) is paid"
    finishes: dict[str, list[int]] = {}
    for f in result.standings:
        finishes.setdefault(f.player_id, []).append(f.place)
    for payout in result.payouts:
        # The k-th largest place of a player is its k-th paid entry's finish.
        k = sorted(finishes[payout.player_id], reverse=True).index(payout.position)
        assert payout.destination == paid[payout.player_id][k], payout
        assert payout.tx_hash, payout
    won: dict[str, int] = {}
    for payout in result.payouts:
        won[payout.destination] = won.get(payout.destination, 0) + payout.amount
    for wallet, amount in won.items():
        assert chips.balance(wallet) == amount  # each entry's wallet paid its fee, won this
    assert sum(p.amount for p in result.payouts) == FEE * sum(len(w) for w in paid.values())
    history = await handle.fetch_history()
    assert not [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]
    assert "entry-wallets-v1" in patch_markers(history.to_json())
    final = await handle.query(TournamentWorkflow.tables)
    assert final is not None
    report = await replay_histories(
        client,
        await histories_from(
            client, [handle.id, *(t.workflow_id for t in final.books.tables.values())]
        ),
    )
    assert report.failures == [], report.failures


def _settlement(state: dict[str, object]) -> Settlement:
    inp = CreateTournamentInput(
        tournament_id="t", name="t", settings=mtt_settings(12, seats=3), money_backend="chain"
    )
    from domain.settings import validate_settings
    from wire.messages import TournamentState

    s = TournamentState.model_validate({"tournament_id": "t", "name": "t", **state})
    return Settlement(Books(inp, validate_settings(inp.settings), s))


def test_a_finish_whose_wallet_is_unknown_has_none_and_never_borrows_the_latest_record() -> None:
    """A state carried from before entries kept their wallets (a run wedged by S3): the one
    finish whose record lost its wallet has none (refused visibly), the others keep theirs."""
    wallet = "0x" + "ab" * 20
    settlement = _settlement(
        {
            "entrants": {
                "a": {
                    "player_id": "a",
                    "owner_user_id": "a",
                    "is_agent": False,
                    "status": "paid",
                    "wallet": wallet,
                },
                "b": {
                    "player_id": "b",
                    "owner_user_id": "b",
                    "is_agent": False,
                    "status": "reserved",
                    "entry_no": 2,
                },
            },
            "finishes": [
                {"player_id": "b", "place": 2, "rank": 2},
                {"player_id": "a", "place": 1, "rank": 1},
            ],
        }
    )
    assert settlement.destinations() == [None, wallet]


def _entrant(player: str, status: str, wallet: str | None, entry_no: int = 1) -> dict[str, object]:
    return {
        "player_id": player,
        "owner_user_id": player,
        "is_agent": False,
        "status": status,
        "wallet": wallet,
        "entry_no": entry_no,
    }


def test_each_finish_takes_its_entrys_wallet_only_when_every_entry_is_known() -> None:
    first, second = "0x" + "01" * 20, "0x" + "02" * 20
    finishes = [
        {"player_id": "b", "place": 3, "rank": 3},  # b's first entry
        {"player_id": "a", "place": 2, "rank": 2},
        {"player_id": "b", "place": 1, "rank": 1},  # b's re-entry
    ]
    entrants = {"a": _entrant("a", "paid", first), "b": _entrant("b", "paid", second, 2)}
    known = _settlement(
        {
            "entrants": entrants,
            "finishes": finishes,
            "entry_wallets": {"a:1": first, "b:1": "0x" + "0b" * 20, "b:2": second},
        }
    )
    assert known.destinations() == ["0x" + "0b" * 20, first, second]
    # One of b's entries paid before the wallets were kept (a carried state): b's record, as
    # before, for both of b's finishes, never a mapping that would shift them.
    partial = _settlement(
        {"entrants": entrants, "finishes": finishes, "entry_wallets": {"a:1": first, "b:2": second}}
    )
    assert partial.destinations() == [second, first, second]


async def test_an_operator_names_an_unknown_wallet_and_nothing_else() -> None:
    settlement = _settlement(
        {
            "phase": "settling",
            "payouts": [
                {
                    "intent_id": "t:payout:1",
                    "position": 1,
                    "player_id": "a",
                    "amount": 70,
                    "destination": "0x" + "ab" * 20,
                    "status": "confirmed",
                },
                {
                    "intent_id": "t:payout:2",
                    "position": 2,
                    "player_id": "b",
                    "amount": 30,
                    "destination": "",
                    "status": "failed",
                    "failure_reason": "payout_wallet_unknown: ...",
                },
            ],
        }
    )
    for destinations, why in (
        ({"t:payout:1": "0x" + "cd" * 20}, "a known destination is never changed"),
        ({"t:payout:2": "not-a-wallet"}, "not a wallet address"),
        ({"t:payout:2": "0x" + "0" * 40}, "not a wallet address"),
    ):
        with pytest.raises(ApplicationError) as info:
            settlement.validate_retry_payouts(RetryPayoutsInput(destinations=destinations))
        assert info.value.type == "validation_error" and why in str(info.value)
    settlement.validate_retry_payouts(
        RetryPayoutsInput(destinations={"t:payout:2": "0x" + "cd" * 20})
    )


async def test_the_admin_route_takes_only_wallet_addresses(
    api_url: str, settings: Settings, worker: object
) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        tid = await create(http, settings)
        url = f"/admin/tournaments/{tid}/payouts/retry"
        for typo in ("nope", "0x" + "0" * 40, "0x52908400098527886E0F7030069857D2E4169Ee7"):
            # not an address, the zero address, a checksum typo (the last letter's case)
            bad = await http.post(url, json={"destinations": {"x": typo}}, headers=admin(settings))
            assert bad.status_code == 422, (typo, bad.text)
        # A well-formed body on a tournament that is not settling: refused by the workflow.
        ok = {"destinations": {f"{tid}:payout:2": "0x" + "cd" * 20}}
        early = await http.post(url, json=ok, headers=admin(settings))
        assert early.status_code == 409 and early.json()["code"] == "invalid_state", early.text
        plain = await http.post(url, headers=admin(settings))  # no body, as before
        assert plain.status_code == 409, plain.text
