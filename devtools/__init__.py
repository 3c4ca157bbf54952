"""Development tooling: the embedded stack ``sng dev`` runs (PostgreSQL, Temporal, a worker
and the API as child processes), the local chain (anvil with the contracts deployed) and the
catalogue of refusal codes in docs/api.md (``python -m devtools.refusals``).
Nothing in the service imports it."""
