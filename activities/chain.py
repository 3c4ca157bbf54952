"""Money legs of a tournament, on-chain backend: deposits, refunds and payouts through the vault.

Same activity names and models as :class:`activities.money.VirtualMoneyActivities`, so the
worker registers one backend or the other. The operator key signs locally; every transaction
is awaited to its receipt while the activity heartbeats.

Exactly once across retries, in two layers:

1. Right after broadcasting, the activity heartbeats ``{tx_hash, raw, nonce, move}``. A retry
   reads that back, but only as the transaction of *this* call (security review 3, S1:
   whoever polls the task queue can put any sealed heartbeat on an attempt): the raw bytes
   must hash to ``tx_hash``, be signed by the operator, go to the vault with exactly this
   call's encoded input, and the details must name this move's key (details written before
   they named one are judged by the rest). Anything else is ignored (and logged), and so is
   a transaction that failed: the vault's record decides. Then a mined receipt is the
   answer; an unmined transaction whose
   operator nonce is still free is re-broadcast byte for byte (same hash, so it can be mined
   at most once); a nonce taken by something else means it never will be.
2. Whatever the heartbeat says, the chain is asked before anything is sent, and again after
   any revert: ``executed(keccak(intent_id))`` for a payout, ``entries(keccak(entry key))``
   for an entry or its refund. The vault records each deposit under the entry's own key
   (the money move's idempotency key), so the probe answers for exactly this entry, never
   "some fee of this wallet is here" (security review C1). A step already reflected on-chain
   returns ``applied=False`` and sends nothing.

Errors: a revert the node reproduces (bad permit, over-refund, ...) is a definite refusal,
non-retryable, with the decoded custom error as the operator-visible reason; anything else
(the node is down, a timeout, a nonce race with another worker) is retryable.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import rlp
from eth_account import Account
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from eth_utils.address import is_address, to_checksum_address
from eth_utils.crypto import keccak
from hexbytes import HexBytes
from temporalio import activity
from temporalio.exceptions import ApplicationError
from web3 import AsyncHTTPProvider, AsyncWeb3
from web3.exceptions import TransactionNotFound, Web3Exception

from activities.chain_support import (
    Revert,
    artifact,
    chain_id_of,
    permit_signer,
    permit_typed_data,
    revert_of,
)
from core.settings import Settings
from domain.errors import ErrorCode
from wire.messages import MoneyMove, MoneyReceipt, PayoutReceipt, PrizePayment
from wire.refusals import coded

NONCES_ABI = [
    {
        "type": "function",
        "name": "nonces",
        "stateMutability": "view",
        "inputs": [{"name": "owner", "type": "address"}],
        "outputs": [{"name": "", "type": "uint256"}],
    }
]
"""The one token function the worker reads: ERC-2612's permit nonce."""


log = logging.getLogger("activities.chain")


class ChainError(StrEnum):
    """``ApplicationError.type`` values of this backend (besides the domain's own codes)."""

    REVERTED = "chain_reverted"
    DEPOSIT_REFUSED = "chain_deposit_refused"
    REFUND_EXCEEDS_DEPOSIT = "chain_refund_exceeds_deposit"
    PAYOUT_CONFLICT = "chain_payout_conflict"
    UNAVAILABLE = "chain_unavailable"
    NOT_MINED = "chain_not_mined"


@dataclass(frozen=True)
class _Entry:
    """The vault's record of one entry's deposit (``owner`` None: never deposited)."""

    tournament: bytes
    owner: str | None
    amount: int
    refunded: int


class _Reverted(Exception):
    def __init__(self, revert: Revert) -> None:
        super().__init__(revert.reason)
        self.revert = revert


def _refusal(kind: str, message: str, revert: Revert | None = None) -> ApplicationError:
    details: dict[str, Any] = {}
    if revert is not None:
        details = {"error": revert.name, "args": revert.args, "reason": revert.reason}
    return coded(kind, message, details)


def _heartbeat(*details: Any) -> None:
    if activity.in_activity():
        activity.heartbeat(*details)


def _address(value: str | None, what: str) -> str:
    if not value or not is_address(value):
        raise _refusal(ErrorCode.VALIDATION_ERROR.value, f"{what} is not an address: {value!r}")
    return to_checksum_address(value)


class ChainMoneyActivities:
    def __init__(
        self,
        rpc_url: str,
        operator_key: str,
        vault_address: str,
        token_address: str,
        *,
        start_block: int = 0,
        confirmations: int = 1,
        receipt_timeout: float = 120.0,
        poll_interval: float = 0.25,
        request_timeout: float = 10.0,
    ) -> None:
        # No provider-level retries: Temporal retries the whole step, durably and visibly.
        provider = AsyncHTTPProvider(
            rpc_url, request_kwargs={"timeout": request_timeout}, exception_retry_configuration=None
        )
        self.w3 = AsyncWeb3(provider)
        self.operator = Account.from_key(operator_key)
        self.vault = self.w3.eth.contract(
            address=to_checksum_address(vault_address), abi=artifact("TournamentVault")["abi"]
        )
        self.token_address = to_checksum_address(token_address)
        self.token = self.w3.eth.contract(address=self.token_address, abi=NONCES_ABI)
        self.start_block = start_block
        self.confirmations = max(1, confirmations)
        self.receipt_timeout = receipt_timeout
        self.poll_interval = poll_interval
        self._chain_id: int | None = None
        # One operator key, one nonce sequence: sends from this process go one at a time.
        self._send_lock = asyncio.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> ChainMoneyActivities:
        """The backend ``money_backend="chain"`` selects (the settings validate completeness)."""
        return cls(
            settings.chain_rpc_url,
            settings.chain_operator_key.get_secret_value(),
            settings.vault_address,
            settings.token_address,
            start_block=settings.chain_start_block,
            confirmations=settings.chain_confirmations,
        )

    async def vault_takes_deposits_from_anyone(self) -> bool:
        """Whether the vault is a build from before security review 3's S2 (deposits open to
        an entry's owner, so anyone can take an entry id first): asked of the node as a
        stranger's zero deposit, which the current vault refuses as not its owner's and an
        older one as a zero amount. Not a transaction: nothing is sent."""
        stranger = Account.create().address
        call = self.vault.functions.depositWithPermit(
            b"\0" * 32, b"\0" * 32, stranger, 0, 0, 27, b"\0" * 32, b"\0" * 32
        )
        try:
            await call.call({"from": stranger})
        except Exception as exc:
            revert = revert_of(exc)
            return revert is not None and revert.name == "ZeroAmount"
        return True

    async def aclose(self) -> None:
        await self.w3.provider.disconnect()

    # -- activities ---------------------------------------------------------------------------

    @activity.defn
    async def collect_entry(self, move: MoneyMove) -> MoneyReceipt:
        permit = move.permit
        if permit is None:
            raise _refusal(ErrorCode.VALIDATION_ERROR.value, "an on-chain entry needs a permit")
        if permit.value != move.amount or not _same(permit.spender, self.vault.address):
            raise _refusal(
                ErrorCode.TOURNAMENT_ENTRY_FEE_MISMATCH.value,
                f"the permit must grant exactly {move.amount} to the vault {self.vault.address}"
                f" (it grants {permit.value} to {permit.spender})",
            )
        owner = _address(permit.owner, "the permit owner")
        tournament = chain_id_of(move.tournament_id)
        entry_id = chain_id_of(move.key)

        async def already() -> bool:
            entry = await self._entry(entry_id)
            if entry.owner is None:
                return False
            if entry.tournament != tournament or not _same(entry.owner, owner):
                raise _refusal(
                    ChainError.DEPOSIT_REFUSED.value,
                    f"entry {move.key} was deposited by {entry.owner} for another move",
                )
            return entry.amount >= move.amount

        try:
            call = self.vault.functions.depositWithPermit(
                tournament,
                entry_id,
                owner,
                move.amount,
                permit.deadline,
                permit.v,
                HexBytes(permit.r).rjust(32, b"\0"),
                HexBytes(permit.s).rjust(32, b"\0"),
            )
        except (ValueError, TypeError, OverflowError, Web3Exception) as err:
            # web3 cannot encode it, and no retry will (security review H1).
            raise _refusal(
                ErrorCode.VALIDATION_ERROR.value,
                f"the permit cannot be encoded for the vault: {type(err).__name__}",
            ) from None

        async def signed_by_owner() -> None:
            # Before anything is sent: the operator relays only a permit the owner really
            # signed, for now, with the token's current nonce (security review C1: the vault
            # ignores a failing permit, so a garbage one spent any standing allowance).
            nonce, block = await self._guarded(
                asyncio.gather(
                    self.token.functions.nonces(owner).call(),
                    self.w3.eth.get_block("latest"),
                )
            )
            typed = permit_typed_data(
                owner=owner,
                token=self.token_address,
                spender=self.vault.address,
                value=permit.value,
                nonce=int(nonce),
                deadline=permit.deadline,
                chain_id=await self._guarded(self._get_chain_id()),
            )
            if not _same(permit_signer(typed, permit.v, permit.r, permit.s) or "", owner):
                raise _refusal(
                    ErrorCode.VALIDATION_ERROR.value,
                    f"the permit is not signed by {owner} for the vault (or not with its"
                    " current nonce): nothing was sent",
                )
            if permit.deadline <= int(block["timestamp"]):
                raise _refusal(ErrorCode.VALIDATION_ERROR.value, "the permit has expired")

        tx_hash = await self._once(
            call,
            move.key,
            already,
            ChainError.DEPOSIT_REFUSED,
            "deposit refused",
            before_send=signed_by_owner,
        )
        reference = f"tx:{tx_hash}" if tx_hash else f"vault-entry:0x{entry_id.hex()}"
        return MoneyReceipt(
            key=move.key, applied=tx_hash is not None, reference=reference, amount=move.amount
        )

    @activity.defn
    async def refund_entry(self, move: MoneyMove) -> MoneyReceipt:
        wallet = _address(move.wallet, "the refund wallet")
        if not move.entry_key:
            raise _refusal(ErrorCode.VALIDATION_ERROR.value, "a refund names the entry it refunds")
        entry_id = chain_id_of(move.entry_key)

        async def already() -> bool:
            entry = await self._entry(entry_id)
            if entry.owner is not None and not _same(entry.owner, wallet):
                raise _refusal(
                    ChainError.REVERTED.value,
                    f"entry {move.entry_key} was paid by {entry.owner}, not {wallet}",
                )
            if entry.amount - entry.refunded >= move.amount:
                return False
            if entry.refunded >= move.amount:
                return True  # this refund (or an equal one) is already back in the wallet
            raise _refusal(
                ChainError.REFUND_EXCEEDS_DEPOSIT.value,
                f"refund of {move.amount} exceeds what entry {move.entry_key} holds"
                f" ({entry.amount - entry.refunded})",
            )

        call = self.vault.functions.refund(entry_id, move.amount)
        tx_hash = await self._once(call, move.key, already, ChainError.REVERTED, "refund refused")
        reference = f"tx:{tx_hash}" if tx_hash else f"vault-refunded:0x{entry_id.hex()}"
        return MoneyReceipt(
            key=move.key, applied=tx_hash is not None, reference=reference, amount=move.amount
        )

    @activity.defn
    async def pay_prize(self, payment: PrizePayment) -> PayoutReceipt:
        to = _address(payment.destination, "the payout destination")
        intent = chain_id_of(payment.intent_id)

        async def already() -> bool:
            return bool(await self._guarded(self.vault.functions.executed(intent).call()))

        call = self.vault.functions.withdrawFor(intent, to, payment.amount)
        tx_hash = await self._once(
            call, payment.intent_id, already, ChainError.REVERTED, "payout refused"
        )
        applied = tx_hash is not None
        if tx_hash is None:
            tx_hash = await self._earlier_payout(payment, intent, to)
        return PayoutReceipt(
            intent_id=payment.intent_id,
            applied=applied,
            tx_hash=tx_hash,
            reference=f"vault-intent:0x{intent.hex()}",
            amount=payment.amount,
        )

    # -- exactly once -------------------------------------------------------------------------

    async def _once(
        self,
        call: Any,
        key: str,
        already: Any,
        refused: ChainError,
        what: str,
        *,
        before_send: Callable[[], Awaitable[None]] | None = None,
    ) -> str | None:
        """Send ``call`` (the money move ``key``) unless done; the tx hash when this run moved
        money, else None. ``before_send`` may refuse (it runs only when something is about to
        be sent)."""
        try:
            receipt = await self._guarded(self._resume_previous(call, key))
            if receipt is not None and receipt["status"] == 1:
                return "0x" + bytes(receipt["transactionHash"]).hex()
            if await already():
                return None
            if before_send is not None:
                await before_send()
            receipt = await self._transact(call, key)
        except _Reverted as reverted:
            if await already():  # someone (an earlier attempt, another worker) got there first
                return None
            kind = refused
            if reverted.revert.name == "RefundExceedsDeposit":
                kind = ChainError.REFUND_EXCEEDS_DEPOSIT
            raise _refusal(
                kind.value, f"{what}: {reverted.revert.reason}", reverted.revert
            ) from None
        return "0x" + bytes(receipt["transactionHash"]).hex()

    async def _resume_previous(self, call: Any, key: str) -> Any:
        """The receipt of the transaction an earlier attempt of this call broadcast, when it
        can still count."""
        if not activity.in_activity():
            return None
        details = activity.info().heartbeat_details
        last = details[-1] if details else None
        if not isinstance(last, dict) or "tx_hash" not in last:
            return None
        why = self._not_this_call(last, call, key)
        if why is not None:
            # Not this move's transaction: whatever it is, it proves nothing here. The chain's
            # own record (``already``) decides as if no attempt had broadcast anything.
            log.warning("ignored a heartbeat that is not %s's transaction: %s", key, why)
            return None
        tx_hash = HexBytes(last["tx_hash"])
        receipt = await self._receipt(tx_hash)
        if receipt is not None and receipt["status"] != 1:
            # It failed and moved nothing: the chain's own record (``already``) decides, never
            # a replay of it (a revert that depended on its block's order may not reproduce,
            # and every retry would resume it again).
            return None
        if receipt is not None:
            return await self._confirmed(tx_hash, receipt)
        latest = await self.w3.eth.get_transaction_count(self.operator.address, "latest")
        if latest > int(last["nonce"]):
            # Its nonce is used: either ours got mined meanwhile or it never can be.
            receipt = await self._receipt(tx_hash)
            if receipt is None or receipt["status"] != 1:
                return None
            return await self._confirmed(tx_hash, receipt)
        try:
            await self.w3.eth.send_raw_transaction(HexBytes(last["raw"]))
        except Exception:
            pass  # "already known" and the like: it is still pending; the wait decides
        _heartbeat(last)
        return await self._await_receipt(tx_hash, last)

    def _not_this_call(self, last: dict[str, Any], call: Any, key: str) -> str | None:
        """Why heartbeat ``last`` is not a transaction this call sent (None when it is)."""
        if last.get("move", key) != key:  # heartbeats from before it had none: the input decides
            return f"it names the move {last.get('move')!r}"
        try:
            raw = HexBytes(last["raw"])
            if keccak(raw) != bytes(HexBytes(last["tx_hash"])):
                return "its bytes do not hash to its transaction hash"
            to, data = _destination_and_input(raw)
            sender = Account.recover_transaction(raw)
            int(last["nonce"])
        except Exception as exc:  # anything undecodable is not ours
            return f"it does not decode ({type(exc).__name__})"
        if not _same(sender, self.operator.address):
            return f"it was signed by {sender}, not the operator"
        if not _same(to, self.vault.address):
            return f"it goes to {to}, not the vault"
        if data != bytes(HexBytes(call._encode_transaction_data())):
            return "its input is another call's"
        return None

    async def _transact(self, call: Any, key: str) -> Any:
        async with self._send_lock:
            chain_id = await self._guarded(self._get_chain_id())
            nonce = await self._guarded(
                self.w3.eth.get_transaction_count(self.operator.address, "pending")
            )
            try:
                tx = await call.build_transaction(
                    {"from": self.operator.address, "nonce": nonce, "chainId": chain_id}
                )
            except Exception as exc:  # gas estimation simulates the call: reverts show here
                revert = revert_of(exc)
                if revert is None:
                    raise _unavailable(exc) from exc
                raise _Reverted(revert) from None
            tx["gas"] = tx["gas"] * 6 // 5  # headroom for state that changes before mining
            signed = self.operator.sign_transaction(tx)
            sent = {
                "tx_hash": "0x" + bytes(signed.hash).hex(),
                "raw": "0x" + bytes(signed.raw_transaction).hex(),
                "nonce": nonce,
                "move": key,
            }
            _heartbeat(sent)  # before the broadcast: a retry must know what may be in flight
            await self._guarded(self.w3.eth.send_raw_transaction(signed.raw_transaction))
        return await self._guarded(self._await_receipt(HexBytes(signed.hash), sent))

    async def _await_receipt(self, tx_hash: HexBytes, sent: dict[str, Any]) -> Any:
        deadline = time.monotonic() + self.receipt_timeout
        while True:
            _heartbeat(sent)
            receipt = await self._receipt(tx_hash)
            if receipt is not None:
                confirmed = await self._confirmed(tx_hash, receipt)
                if confirmed is not None:
                    return confirmed
            if time.monotonic() > deadline:
                raise ApplicationError(
                    f"transaction {tx_hash.to_0x_hex()} not confirmed after"
                    f" {self.receipt_timeout}s",
                    type=ChainError.NOT_MINED.value,
                )
            await asyncio.sleep(self.poll_interval)

    async def _confirmed(self, tx_hash: HexBytes, receipt: Any) -> Any:
        """The receipt once deep enough; a failed one is replayed to name its revert."""
        head = await self.w3.eth.block_number
        if head - receipt["blockNumber"] + 1 < self.confirmations:
            return None
        if receipt["status"] == 1:
            return receipt
        tx = await self.w3.eth.get_transaction(tx_hash)
        call = {k: tx[k] for k in ("from", "to", "input", "value", "gas") if k in tx}
        try:
            await self.w3.eth.call(call, receipt["blockNumber"] - 1)  # type: ignore[arg-type]
        except Exception as exc:
            revert = revert_of(exc)
            if revert is not None:
                raise _Reverted(revert) from None
            raise _unavailable(exc) from exc
        # Not reproducible (out of gas, reordering): not a definite refusal, so retry.
        raise ApplicationError(
            f"transaction {tx_hash.to_0x_hex()} failed without a reproducible revert",
            type=ChainError.UNAVAILABLE.value,
        )

    async def _receipt(self, tx_hash: HexBytes) -> Any:
        try:
            return await self.w3.eth.get_transaction_receipt(tx_hash)
        except TransactionNotFound:
            return None

    async def _earlier_payout(self, payment: PrizePayment, intent: bytes, to: str) -> str | None:
        """The hash of the transaction that already paid this intent, checked against it."""
        logs = await self._guarded(
            self.vault.events.Withdrawn.get_logs(
                argument_filters={"intentId": intent}, from_block=self.start_block
            )
        )
        for log in logs:
            if log["args"]["to"] != to or log["args"]["amount"] != payment.amount:
                raise _refusal(
                    ChainError.PAYOUT_CONFLICT.value,
                    f"intent {payment.intent_id} was executed as {log['args']['amount']} to"
                    f" {log['args']['to']}, not {payment.amount} to {to}",
                )
            return "0x" + bytes(log["transactionHash"]).hex()
        return None  # executed, but the node no longer serves the log

    # -- reads and error mapping ----------------------------------------------------------------

    async def _entry(self, entry_id: bytes) -> _Entry:
        tournament, owner, amount, refunded = await self._guarded(
            self.vault.functions.entries(entry_id).call()
        )
        unset = int(owner, 16) == 0
        return _Entry(bytes(tournament), None if unset else owner, int(amount), int(refunded))

    async def _get_chain_id(self) -> int:
        if self._chain_id is None:
            self._chain_id = await self.w3.eth.chain_id
        return self._chain_id

    async def _guarded(self, awaitable: Any) -> Any:
        """Await a node call; a failure that is not ours to decide becomes retryable."""
        try:
            return await awaitable
        except (ApplicationError, _Reverted):
            raise
        except Exception as exc:
            raise _unavailable(exc) from exc


_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*)://(?:[^@/\s'\"]*@)?([^/\s'\"?#]+)[^\s'\"]*")


def redact_urls(text: str) -> str:
    """Keep a URL's scheme and host only: providers put API keys in the path, the query or
    the user info, and failure messages go into history unencrypted (security review L9)."""
    return _URL.sub(lambda m: f"{m.group(1)}://{m.group(2)}/…", text)


def _unavailable(exc: BaseException) -> ApplicationError:
    return ApplicationError(
        redact_urls(f"JSON-RPC call failed ({type(exc).__name__}: {exc})")[:500],
        type=ChainError.UNAVAILABLE.value,
    )


def _destination_and_input(raw: HexBytes) -> tuple[str, bytes]:
    """A signed transaction's ``to`` and input data, typed (EIP-2718) or legacy."""
    if raw[0] < 0x7F:
        fields = TypedTransaction.from_bytes(raw).as_dict()
        return "0x" + bytes(fields["to"]).hex(), bytes(fields["data"])
    fields = rlp.decode(bytes(raw))  # nonce, gasPrice, gas, to, value, data, v, r, s
    return "0x" + bytes(fields[3]).hex(), bytes(fields[5])


def _same(a: str, b: str) -> bool:
    return is_address(a) and to_checksum_address(a) == to_checksum_address(b)
