"""Multi-table tournament rules: seating, balancing, hand-for-hand and MTT payouts.

Pure like the rest of ``domain/``: no clock, no I/O, and randomness only from a ``randbelow``
callable the caller passes in (a workflow passes ``workflow.random().randrange``). Nothing here
is wired to a workflow, a setting or the API yet; docs/mtt.md says what is built and what is not.
"""
