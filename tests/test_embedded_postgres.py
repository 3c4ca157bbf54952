"""The embedded PostgreSQL (`sng dev`, the tests) serves on TCP only: a Unix-domain socket in
its data directory failed to start it once that directory's path was long (a socket path is
at most 107 bytes), as a CI run's temporary directory was (`.../pytest-114/popen-gw1/...`)."""

from __future__ import annotations

from pathlib import Path

from devtools.devstack import free_port
from devtools.pg import EmbeddedPostgres


def test_it_starts_in_a_data_directory_with_a_long_path(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / "data" / "postgres"
    assert len(str(deep / "pgdata" / ".s.PGSQL.65535")) > 107
    server = EmbeddedPostgres(deep, free_port())
    try:
        server.start()
        assert server._ready()
    finally:
        server.stop()
