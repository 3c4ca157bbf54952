"""The tournament.lifecycle span: one root span per tournament, recorded at close.

A workflow cannot hold a span open across days, replays and continue-as-new, so the workflow
keeps its transitions (state, time) in its state and, once closed, hands them to this
activity, which emits the span with the recorded start, events and end times. Telemetry is
best effort: a retry after the span was exported emits it again (same trace id, derived from
the tournament id, so a backend shows both together).
"""

from __future__ import annotations

import hashlib

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, Tracer
from temporalio import activity

from wire.messages import LifecycleRecord

MS = 1_000_000  # nanoseconds per millisecond


def _trace_id(tournament_id: str) -> int:
    return int.from_bytes(hashlib.sha256(tournament_id.encode()).digest()[:16], "big") or 1


class TelemetryActivities:
    def __init__(self, tracer: Tracer | None = None) -> None:
        self.tracer = tracer or trace.get_tracer("sng.lifecycle")

    @activity.defn
    async def record_lifecycle(self, rec: LifecycleRecord) -> None:
        opened = next((t for t in rec.transitions if t.state == "starting"), rec.transitions[0])
        parent = NonRecordingSpan(
            SpanContext(
                trace_id=_trace_id(rec.tournament_id),
                span_id=1,
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
        )
        span = self.tracer.start_span(
            "tournament.lifecycle",
            context=trace.set_span_in_context(parent),
            start_time=opened.at_ms * MS,
            attributes={
                "tournament.table_id": rec.tournament_id,
                "tournament.seats": rec.seats,
                "tournament.entry_fee": rec.entry_fee,
                "tournament.starting_stack": rec.starting_stack,
                "tournament.level_duration_seconds": rec.level_duration_seconds,
                "tournament.action_timeout_seconds": rec.action_timeout_seconds,
                "tournament.prize_structure_summary": rec.prize_structure_summary,
            },
        )
        previous = None
        for t in rec.transitions:
            if t.at_ms >= opened.at_ms:
                span.add_event(
                    "state_transition",
                    {"from": previous or "", "to": t.state},
                    timestamp=t.at_ms * MS,
                )
            previous = t.state
        span.set_attribute("tournament.duration_ms", rec.closed_at_ms - opened.at_ms)
        span.set_attribute("tournament.actual_payouts", rec.actual_payouts)
        span.set_attribute("tournament.auto_fold_count", rec.auto_fold_count)
        span.end(end_time=rec.closed_at_ms * MS)
