"""S9 (security review 3): a payout's refusal text was public.

``GET /tournaments/{id}`` and the results page showed each refused payout's reason, which can
name the winner's wallet and a node's error text (``intent … was executed as N to 0x…``).
Now the public record carries a code (``payout_wallet_unknown`` or ``payout_refused``) and the
reason stays with operators (the workflow's view, ``GET /admin/tournaments/{id}``).
"""

from __future__ import annotations

from api.services.tournaments import TournamentDetail
from wire.messages import PayoutStatus, PayoutView, TournamentView

WALLET = "0x" + "ab" * 20


def _public(reason: str, rake: str | None = None) -> dict[str, object]:
    view = TournamentView(
        tournament_id="t",
        name="t",
        state="settling",
        kind="open",
        seats=2,
        entry_fee=100,
        starting_stack=1000,
        registered_count=2,
        version=1,
        rake_failure=rake,
        entrants=[],
        payouts=[
            PayoutView(
                intent_id="t:payout:1",
                position=1,
                player_id="alice",
                amount=200,
                destination=WALLET,
                status=PayoutStatus.FAILED,
                failure_reason=reason,
            )
        ],
    )
    detail = TournamentDetail(
        **view.model_dump(),
        tournament_schedule={
            "levels": [],
            "continues": True,
            "total_levels": None,
            "prize_structure": [],
        },
    )
    return detail.model_dump(by_alias=True, mode="json")


def test_a_refusal_is_public_as_a_code_only() -> None:
    public = _public(f"payout refused: intent t:payout:1 was executed as 200 to {WALLET}")
    payout = public["payouts"][0]  # type: ignore[index]
    assert payout["failureCode"] == "payout_refused"
    assert "failureReason" not in payout and "destination" not in payout
    assert WALLET.lower()[2:] not in str(public).lower()


def test_an_unknown_wallet_has_its_own_code() -> None:
    payout = _public("payout_wallet_unknown: the wallet that bob's entry ...")["payouts"][0]  # type: ignore[index]
    assert payout["failureCode"] == "payout_wallet_unknown"


def test_a_refused_rake_is_public_as_a_code_only() -> None:
    public = _public("x", rake="collect rake: escrow:t holds 3, not 10 (ledger node 10.0.0.5)")
    assert public["rakeFailure"] == "rake_refused"
    assert "10.0.0.5" not in str(public)
