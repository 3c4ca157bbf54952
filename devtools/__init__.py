"""Development tooling: the embedded stack ``sng dev`` runs (PostgreSQL, Temporal, a worker
and the API as child processes) and the local chain (anvil with the contracts deployed).
Nothing in the service imports it."""
