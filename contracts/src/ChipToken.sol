// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title Tournament chips: an ERC-20 with ERC-2612 permit, one base unit per chip.
/// @notice Entrants sign a permit for the vault instead of sending an approve transaction.
///         Minting is owner-only and exists for development and demos; a production token
///         can be any ERC-2612 token with the same decimals convention.
contract ChipToken is ERC20, ERC20Permit, Ownable {
    constructor(address initialOwner)
        ERC20("SnG Chip", "CHIP")
        ERC20Permit("SnG Chip")
        Ownable(initialOwner)
    {}

    /// @dev Chips are whole: the service's entry fees and prizes are integer chip counts.
    function decimals() public pure override returns (uint8) {
        return 0;
    }

    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
