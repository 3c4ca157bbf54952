"""Pure tournament and table rules: no I/O, no clock, no randomness of their own.

Nothing in this package imports temporalio, fastapi, sqlmodel or web3 (tests/domain/test_purity.py
enforces it), so the workflows, the API and the admin pages share one set of rules.
"""
