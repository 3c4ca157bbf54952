// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @title Escrow for Sit-and-Go entry fees, refunds and prize payouts.
/// @notice Ids are keccak256 of the service's string ids (tournament id, payout intent id).
///         The owner is the service's operator key: it submits deposits for entrants, refunds
///         at most what an entrant deposited, and executes each payout intent at most once.
contract TournamentVault is Ownable, ReentrancyGuard {
    using SafeERC20 for IERC20;

    IERC20 public immutable token;

    /// @notice Total ever deposited by an entrant for a tournament (refunds do not lower it).
    mapping(bytes32 tournamentId => mapping(address entrant => uint256)) public deposits;
    /// @notice Total ever refunded to an entrant for a tournament.
    mapping(bytes32 tournamentId => mapping(address entrant => uint256)) public refunded;
    /// @notice Payout intents already paid: a second withdrawFor with the same id reverts.
    mapping(bytes32 intentId => bool) public executed;

    event Deposited(bytes32 indexed tournamentId, address indexed entrant, uint256 amount);
    event Refunded(bytes32 indexed tournamentId, address indexed entrant, uint256 amount);
    event Withdrawn(bytes32 indexed intentId, address indexed to, uint256 amount);

    error ZeroAmount();
    error ZeroAddress();
    error NotEntrantOrOperator(address caller);
    error InexactPull(uint256 expected, uint256 received);
    error RefundExceedsDeposit(bytes32 tournamentId, address entrant, uint256 amount, uint256 available);
    error IntentAlreadyExecuted(bytes32 intentId);

    constructor(IERC20 token_, address operator) Ownable(operator) {
        if (address(token_) == address(0)) revert ZeroAddress();
        token = token_;
    }

    /// @notice Pull exactly `amount` from `owner` into escrow for `tournamentId`.
    /// @dev The permit is best effort: anyone can submit a signed permit to the token first
    ///      (a front-run), which makes our permit call revert although the allowance is in
    ///      place. So a failed permit is ignored and the transferFrom decides. Only the entrant
    ///      or the operator may call, so nobody can sweep a standing allowance into a
    ///      tournament the entrant did not choose.
    function depositWithPermit(
        bytes32 tournamentId,
        address owner,
        uint256 amount,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external nonReentrant {
        if (amount == 0) revert ZeroAmount();
        if (msg.sender != owner && msg.sender != Ownable.owner()) revert NotEntrantOrOperator(msg.sender);
        try IERC20Permit(address(token)).permit(owner, address(this), amount, deadline, v, r, s) {}
        catch {}
        uint256 before = token.balanceOf(address(this));
        token.safeTransferFrom(owner, address(this), amount);
        uint256 received = token.balanceOf(address(this)) - before;
        if (received != amount) revert InexactPull(amount, received);
        deposits[tournamentId][owner] += amount;
        emit Deposited(tournamentId, owner, amount);
    }

    /// @notice What `entrant` still has in escrow for `tournamentId` (deposits minus refunds).
    function held(bytes32 tournamentId, address entrant) public view returns (uint256) {
        return deposits[tournamentId][entrant] - refunded[tournamentId][entrant];
    }

    /// @notice Return `amount` to the entrant; never more than they still hold for the tournament.
    function refund(bytes32 tournamentId, address owner, uint256 amount) external onlyOwner nonReentrant {
        if (amount == 0) revert ZeroAmount();
        uint256 available = held(tournamentId, owner);
        if (amount > available) revert RefundExceedsDeposit(tournamentId, owner, amount, available);
        refunded[tournamentId][owner] += amount;
        token.safeTransfer(owner, amount);
        emit Refunded(tournamentId, owner, amount);
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
