"""``sng bench``: the service measured against a bare Temporal Update (``bench.runner``), its
load and history sections, the pollers' own process (``bench.poll``), the engine against
pokerkit (``bench.engine``, with the differential harness in ``bench.oracle`` that the domain
tests share). Nothing in the service imports it."""
