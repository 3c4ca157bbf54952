"""A small typed client for the HTTP API: what an agent author's bot needs, nothing more.

>>> client = SngClient("http://127.0.0.1:8000", token="...")  # doctest: +SKIP
>>> state = await client.game_state(tid, wait_for_change=state["version"])  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
from types import TracebackType
from typing import Any

import httpx
from nacl.public import PrivateKey, SealedBox


def new_card_key() -> bytes:
    """A fresh X25519 private key for an agent's card (keep it; only its holder reads the
    agent's hole cards)."""
    return bytes(PrivateKey.generate())


class SngError(Exception):
    """A coded refusal from the API (``code`` is the error catalogue's wire name)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class SngClient:
    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        agent_key: str | None = None,
        service_key: str | None = None,
        card_key: bytes | None = None,
        timeout: float = 40.0,
    ) -> None:
        """``card_key``: an agent's X25519 private key (32 bytes, ``new_card_key()``). With
        it, ``put_card_key()`` puts its public half on the Agent Card, and every game state
        read opens the agent's ``sealedHoleCards`` into ``holeCards`` (docs/fairness.md)."""
        headers: dict[str, str] = {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if agent_key:
            headers["X-Agent-Key"] = agent_key
        if service_key:
            headers["X-Service-Key"] = service_key
        self.http = httpx.AsyncClient(base_url=base_url, headers=headers, timeout=timeout)
        self.seeded: set[str] = set()
        """The deck roots this client sent a seed for."""
        self.card_key = PrivateKey(card_key) if card_key is not None else None

    async def __aenter__(self) -> SngClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    rate_limit_retries = 5
    """A ``429 rate_limited`` answer changed nothing: the call is sent again after its
    ``Retry-After`` (at most 5 s) this many times before the refusal is raised."""

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self.http.request(method, path, **kwargs)
        for _ in range(self.rate_limit_retries):
            if response.status_code != 429:
                break
            wait = response.headers.get("Retry-After", "1")
            await asyncio.sleep(min(5.0, float(wait)) if wait.isdigit() else 1.0)
            response = await self.http.request(method, path, **kwargs)
        if response.status_code >= 400:
            try:
                body = response.json()
                raise SngError(
                    response.status_code, body.get("code", "error"), body.get("message", "")
                )
            except ValueError:
                raise SngError(response.status_code, "error", response.text) from None
        return response.json()

    # -- operators (service key) ----------------------------------------------------------
    async def create_tournament(
        self, name: str, settings: dict[str, Any], *, hand_pause_ms: int = 2000
    ) -> str:
        body = {"name": name, "settings": settings, "handPauseMs": hand_pause_ms}
        return str((await self._call("POST", "/admin/tournaments", json=body))["tournamentId"])

    async def create_agent(self, owner_user_id: str, name: str) -> dict[str, Any]:
        """An agent owned by ``owner_user_id`` (operators: the admin key); its ``key`` is in
        this answer only."""
        body = {"ownerUserId": owner_user_id, "name": name}
        created: dict[str, Any] = await self._call("POST", "/admin/agents", json=body)
        return created

    async def credit(self, user_id: str, amount: int, idempotency_key: str) -> int:
        body = {"userId": user_id, "amount": amount, "idempotencyKey": idempotency_key}
        return int((await self._call("POST", "/admin/ledger/credit", json=body))["balance"])

    async def force_end(self, tournament_id: str) -> dict[str, Any]:
        body = {"tableId": tournament_id}
        result: dict[str, Any] = await self._call("POST", "/admin/force-end-tournament", json=body)
        return result

    # -- players and agents ---------------------------------------------------------------
    async def lobby(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = await self._call("GET", "/tournaments")
        return result

    async def tournament(self, tournament_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("GET", f"/tournaments/{tournament_id}")
        return result

    async def register(
        self, tournament_id: str, advisor_agent_id: str | None = None
    ) -> dict[str, Any]:
        body = {"advisorAgentId": advisor_agent_id} if advisor_agent_id else {}
        result: dict[str, Any] = await self._call(
            "POST", f"/tournaments/{tournament_id}/register", json=body
        )
        return result

    async def pay(
        self, tournament_id: str, amount: int, permit: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """On-chain deployments: ``permit`` is the ERC-2612 permit your bound wallet signed."""
        body: dict[str, Any] = {"amount": amount}
        if permit is not None:
            body["permit"] = permit
        result: dict[str, Any] = await self._call(
            "POST", f"/tournaments/{tournament_id}/pay", json=body
        )
        return result

    async def bind_wallet(self, private_key: str) -> dict[str, Any]:
        """Bind the wallet of ``private_key`` to this account: ask for the EIP-4361 challenge,
        sign it locally (the key never leaves this process), send the signature."""
        from eth_account import Account
        from eth_account.messages import encode_defunct

        account = Account.from_key(private_key)
        challenge = await self._call(
            "POST", "/me/wallets/challenge", json={"address": account.address}
        )
        signed = account.sign_message(encode_defunct(text=challenge["message"]))
        result: dict[str, Any] = await self._call(
            "POST",
            "/me/wallets",
            json={"nonce": challenge["nonce"], "signature": "0x" + bytes(signed.signature).hex()},
        )
        return result

    async def wallets(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = await self._call("GET", "/me/wallets")
        return result

    async def leave(self, tournament_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("POST", f"/tournaments/{tournament_id}/leave")
        return result

    async def balance(self) -> int:
        return int((await self._call("GET", "/me/balance"))["balance"])

    # A tournament's table and a cash room are read and played the same way (the game state's
    # shape is ``wire.game_state.GameState``): only the paths differ.
    async def _state(
        self, path: str, wait_for_change: int | None, wait_seconds: float
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"timeout": wait_seconds}
        if wait_for_change is not None:
            params["waitForChange"] = wait_for_change
        result: dict[str, Any] = await self._call("GET", path, params=params)
        return self._open_cards(result)

    def _open_cards(self, state: dict[str, Any]) -> dict[str, Any]:
        """The state with this agent's sealed hole cards opened in place (``holeCards``)."""
        for p in (state.get("hand") or {}).get("players", []):
            sealed = p.get("sealedHoleCards")
            if sealed and self.card_key is not None:
                opened = SealedBox(self.card_key).decrypt(base64.b64decode(sealed))
                p["holeCards"] = [str(card) for card in json.loads(opened)]
        return state

    # -- the Agent Card (agents): where hole cards are sealed to ----------------------------
    async def put_card_key(self) -> dict[str, Any]:
        """Put this client's public card key on the calling agent's card."""
        assert self.card_key is not None, "SngClient(card_key=...) first"
        public = base64.b64encode(bytes(self.card_key.public_key)).decode()
        result: dict[str, Any] = await self._call(
            "PUT", "/me/agent-card", json={"publicKey": public}
        )
        return result

    async def agent_card(self) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("GET", "/me/agent-card")
        return result

    async def _act(
        self,
        path: str,
        hand_number: int,
        turn: int,
        action: str,
        amount: int | None,
        table_id: str | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"handNumber": hand_number, "turn": turn, "action": action}
        if amount is not None:
            body["amount"] = amount
        if table_id is not None:
            body["tableId"] = table_id
        result: dict[str, Any] = await self._call("POST", path, json=body)
        return result

    async def game_state(
        self, tournament_id: str, *, wait_for_change: int | None = None, wait_seconds: float = 20.0
    ) -> dict[str, Any]:
        return await self._state(
            f"/tournaments/{tournament_id}/game-state", wait_for_change, wait_seconds
        )

    async def act(
        self,
        tournament_id: str,
        *,
        hand_number: int,
        turn: int,
        action: str,
        amount: int | None = None,
        table_id: str | None = None,
    ) -> dict[str, Any]:
        """Act on your turn; ``table_id`` (the state's ``tableId``) has an action for a table
        a multi-table tournament moved you from refused (``409 table_moved``)."""
        return await self._act(
            f"/tournaments/{tournament_id}/act", hand_number, turn, action, amount, table_id
        )

    # -- fairness: the players' seeds (docs/fairness.md) ------------------------------------
    async def _seed(self, path: str, state: dict[str, Any], seed: str | None) -> bool:
        """Send ``seed`` (hex; a fresh random one by default) for the hand ``state``'s
        ``nextDeck`` names; True when the table took it. Nothing to do (no deck committed
        ahead, or this seat already seeded it) and a deck that was dealt meanwhile are False:
        the hand is dealt without it, which is never an error."""
        you, deck = state.get("you") or {}, state.get("nextDeck")
        if not deck or you.get("seat") is None or you["seat"] in deck["seeded"]:
            return False
        if deck["commitment"] in self.seeded:
            return False  # sent; the table shows it with its next change
        self.seeded.add(deck["commitment"])
        body = {
            "handNumber": deck["handNumber"],
            "commitment": deck["commitment"],
            "seed": seed or secrets.token_hex(32),
        }
        try:
            await self._call("POST", path, json=body)
        except SngError as err:
            if err.code in {"stale_commitment", "already_seeded", "player_in_transit"}:
                return False
            raise
        return True

    async def seed(
        self, tournament_id: str, state: dict[str, Any], seed: str | None = None
    ) -> bool:
        """Seed the next hand at a tournament's table (see ``_seed``)."""
        return await self._seed(f"/tournaments/{tournament_id}/seed", state, seed)

    async def room_seed(self, room_id: str, state: dict[str, Any], seed: str | None = None) -> bool:
        """Seed the next hand at a cash room (see ``_seed``)."""
        return await self._seed(f"/rooms/{room_id}/seed", state, seed)

    async def sit_in(self, tournament_id: str) -> dict[str, Any]:
        """Come back after sitting out (game state's ``you.status == "sitting_out"``)."""
        result: dict[str, Any] = await self._call("POST", f"/tournaments/{tournament_id}/sit-in")
        return result

    # -- cash rooms ---------------------------------------------------------------------------
    async def create_room(
        self,
        name: str,
        *,
        entry: int,
        small_blind: int,
        big_blind: int,
        seats: int,
        speed: str = "normal",
        hand_pause_ms: int = 2000,
        kind: str = "open",
    ) -> dict[str, Any]:
        """Operators: open a room; the room record. ``kind``: who may sit (``open``,
        ``human_only``, ``agent``, ``copilot``)."""
        body = {
            "name": name,
            "entry": {"amount": entry, "currency": "virtual_chips"},
            "stakes": {"smallBlind": small_blind, "bigBlind": big_blind},
            "seats": seats,
            "speed": speed,
            "handPauseMs": hand_pause_ms,
            "kind": kind,
        }
        result: dict[str, Any] = await self._call("POST", "/rooms", json=body)
        return result

    async def close_room(self, room_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("POST", f"/rooms/{room_id}/close")
        return result

    async def rooms(self, status: str | None = None) -> list[dict[str, Any]]:
        params = {"status": status} if status else {}
        result: list[dict[str, Any]] = await self._call("GET", "/rooms", params=params)
        return result

    async def room(self, room_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("GET", f"/rooms/{room_id}")
        return result

    async def join_room(self, room_id: str, seat: int | None = None) -> dict[str, Any]:
        """Take a seat (``seat``: 1 .. the room's seats, the lowest free one when None)."""
        body = {"seat": seat} if seat is not None else {}
        result: dict[str, Any] = await self._call("POST", f"/rooms/{room_id}/join", json=body)
        return result

    async def leave_room(self, room_id: str) -> dict[str, Any]:
        """``{"returned": N}``, or ``{"returned": None, "pending": True}`` during your hand."""
        result: dict[str, Any] = await self._call("POST", f"/rooms/{room_id}/leave")
        return result

    async def room_state(
        self, room_id: str, *, wait_for_change: int | None = None, wait_seconds: float = 20.0
    ) -> dict[str, Any]:
        return await self._state(f"/rooms/{room_id}/game-state", wait_for_change, wait_seconds)

    async def room_act(
        self,
        room_id: str,
        *,
        hand_number: int,
        turn: int,
        action: str,
        amount: int | None = None,
    ) -> dict[str, Any]:
        return await self._act(f"/rooms/{room_id}/action", hand_number, turn, action, amount)

    async def room_sit_in(self, room_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("POST", f"/rooms/{room_id}/sit-in")
        return result
