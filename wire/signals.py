"""The signals between a tournament and its table, by name (architecture review, change 5).

The table cannot import the tournament (the tournament imports the table), so it cannot send
by a typed handle; both sides use these names: the tournament's handlers are declared with
them (``@workflow.signal(name=...)``), the table sends and signs its reports with them
(``report_mac`` binds the name). Every recorded history names its signals so: never change
one.

>>> (HAND_COMPLETED, TABLE_FINISHED, STOP)
('hand_completed', 'table_finished', 'stop')
"""

from __future__ import annotations

HAND_COMPLETED = "hand_completed"
"""Table → tournament: a hand ended (``HandReport``)."""
TABLE_FINISHED = "table_finished"
"""Table → tournament: the table stopped dealing (``TableResult``)."""
STOP = "stop"
"""Tournament → table: a force-end stops play (``StopOrder``)."""
BOUNDARY = "boundary"
"""Tournament → an MTT's table: what to do after a hand (``wire.mtt.BoundaryOrder``)."""
