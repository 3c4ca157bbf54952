"""The browser wallet page: pay an on-chain entry with a wallet extension (issue 29).

``GET /play/tournaments/{id}/wallet`` serves a page whose script (``static/wallet.js``) does
everything in the browser, as a client of the public JSON API with the session cookie:

1. "Connect wallet": EIP-1193 ``eth_requestAccounts`` and ``eth_chainId``; a wallet on
   another chain than ``GET /chain/permit-info``'s is refused with a sentence.
2. "Bind this wallet" when ``GET /me/wallets`` does not list it: ``POST /me/wallets/challenge``,
   the wallet's ``personal_sign`` over the challenge, ``POST /me/wallets``.
3. "Pay entry": the ERC-2612 permit built as EIP-712 typed data in the page (the token's
   domain, spender = the vault, value = the entry fee, the owner's ``nonces`` read through the
   wallet's ``eth_call``, a deadline an hour away), signed with ``eth_signTypedData_v4``, split
   into v, r, s and sent with ``POST /tournaments/{id}/pay``. "Leave" refunds a paid entry to
   the wallet that paid it (``POST /tournaments/{id}/leave``).

The page holds no rule: the API relays a permit only for a wallet bound to the caller, and the
worker and the vault check its signature. Nothing is sent to the API when the person declines
in the wallet (EIP-1193 error 4001). The page never reaches the node itself: the Content-
Security-Policy allows this origin only, and the wallet makes its own node calls.
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from api.deps import ID_PATTERN
from api.play.pages import render, see_other, signed_in

router = APIRouter(prefix="/play", tags=["players' pages"], include_in_schema=False)

TOURNAMENT_ID = re.compile(ID_PATTERN)


@router.get("/tournaments/{tournament_id}/wallet", response_class=HTMLResponse)
async def wallet_page(request: Request, tournament_id: str) -> Response:
    caller = await signed_in(request)
    if caller is None:
        return see_other("/play/signin")
    if not TOURNAMENT_ID.fullmatch(tournament_id):
        return render(
            request, "wallet.html", {"tournament_id": None}, caller=caller, status_code=404
        )
    return render(request, "wallet.html", {"tournament_id": tournament_id}, caller=caller)
