// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @title Escrow for Sit-and-Go entry fees, refunds and prize payouts.
/// @notice Ids are keccak256 of the service's string ids (tournament id, entry key, payout
///         intent id). The owner is the service's operator key: it alone submits deposits (for
///         entrants, with their permits), refunds at most what an entry deposited (to the
///         wallet that paid it), and executes each payout intent at most once.
/// @dev Deposits are recorded per entry, keyed by the money move's idempotency key, never
///      per (tournament, wallet): "this wallet holds a fee here" is not proof that *this*
///      entry paid (security review C1), and one entry's refund cannot return another's fee.
contract TournamentVault is Ownable, ReentrancyGuard {
    using SafeERC20 for IERC20;

    struct Entry {
        bytes32 tournamentId;
        address owner;
        uint256 amount;
        uint256 refunded;
    }

    IERC20 public immutable token;

    /// @notice Each entry's deposit: at most one per entry id, ever.
    mapping(bytes32 entryId => Entry) public entries;
    /// @notice Payout intents already paid: a second withdrawFor with the same id reverts.
    mapping(bytes32 intentId => bool) public executed;

    event Deposited(bytes32 indexed tournamentId, bytes32 indexed entryId, address indexed entrant, uint256 amount);
    event Refunded(bytes32 indexed tournamentId, bytes32 indexed entryId, address indexed entrant, uint256 amount);
    event Withdrawn(bytes32 indexed intentId, address indexed to, uint256 amount);

    error ZeroAmount();
    error ZeroAddress();
    error InexactPull(uint256 expected, uint256 received);
    error EntryAlreadyDeposited(bytes32 entryId);
    error UnknownEntry(bytes32 entryId);
    error RefundExceedsDeposit(bytes32 entryId, uint256 amount, uint256 available);
    error IntentAlreadyExecuted(bytes32 intentId);

    constructor(IERC20 token_, address operator) Ownable(operator) {
        if (address(token_) == address(0)) revert ZeroAddress();
        token = token_;
    }

    /// @notice Pull exactly `amount` from `owner` into escrow as entry `entryId` of `tournamentId`.
    /// @dev The permit is best effort: anyone can submit a signed permit to the token first
    ///      (a front-run), which makes our permit call revert although the allowance is in
    ///      place. So a failed permit is ignored and the transferFrom decides. Only the
    ///      operator may call: entry ids are the service's, and an entrant who could deposit
    ///      could take any entry id first (1 chip under a victim's predictable id blocked the
    ///      victim's entry for good: security review 3, S2); nobody can sweep a standing
    ///      allowance into a tournament the entrant did not choose either, since the operator
    ///      checks the permit's signature off-chain before it relays one.
    function depositWithPermit(
        bytes32 tournamentId,
        bytes32 entryId,
        address owner,
        uint256 amount,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external onlyOwner nonReentrant {
        if (amount == 0) revert ZeroAmount();
        if (owner == address(0)) revert ZeroAddress();
        if (entries[entryId].owner != address(0)) revert EntryAlreadyDeposited(entryId);
        try IERC20Permit(address(token)).permit(owner, address(this), amount, deadline, v, r, s) {}
        catch {}
        uint256 before = token.balanceOf(address(this));
        token.safeTransferFrom(owner, address(this), amount);
        uint256 received = token.balanceOf(address(this)) - before;
        if (received != amount) revert InexactPull(amount, received);
        entries[entryId] = Entry(tournamentId, owner, amount, 0);
        emit Deposited(tournamentId, entryId, owner, amount);
    }

    /// @notice What entry `entryId` still has in escrow (its deposit minus its refunds).
    function held(bytes32 entryId) public view returns (uint256) {
        Entry storage entry = entries[entryId];
        return entry.amount - entry.refunded;
    }

    /// @notice Return `amount` of entry `entryId` to the wallet that paid it; never more than
    ///         the entry still holds.
    function refund(bytes32 entryId, uint256 amount) external onlyOwner nonReentrant {
        if (amount == 0) revert ZeroAmount();
        Entry storage entry = entries[entryId];
        if (entry.owner == address(0)) revert UnknownEntry(entryId);
        uint256 available = entry.amount - entry.refunded;
        if (amount > available) revert RefundExceedsDeposit(entryId, amount, available);
        entry.refunded += amount;
        token.safeTransfer(entry.owner, amount);
        emit Refunded(entry.tournamentId, entryId, entry.owner, amount);
    }

    /// @notice Pay one payout intent; a second call with the same intent id reverts.
    function withdrawFor(bytes32 intentId, address to, uint256 amount) external onlyOwner nonReentrant {
        if (executed[intentId]) revert IntentAlreadyExecuted(intentId);
        if (to == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        executed[intentId] = true;
        token.safeTransfer(to, amount);
        emit Withdrawn(intentId, to, amount);
    }
}
