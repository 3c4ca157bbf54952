"""The tournament.lifecycle span: one root span per tournament, and each state_transition
emitted as it happens (docs/operations.md, "Traces").

A workflow cannot hold a live span across days, replays, worker restarts and continue-as-new,
and OpenTelemetry cannot resume a span in another process. So the span's identity is fixed
instead: its trace id and span id follow from the tournament id (``lifecycle_ids``), and
whichever worker runs a step can name it.

- At each transition (from ``starting`` on, under the ``lifecycle-live-v1`` patch) the
  workflow calls ``record_transition``: a ``state_transition`` span, a child of the root,
  exported at once, at the transition's time, with the seed's seven config attributes.
- At close (or cancel) ``record_lifecycle`` exports the root itself: no parent, its real start
  (the transition into ``starting``), the seven config attributes, one ``state_transition``
  event per transition at its time, and the close attributes.

Telemetry is best effort (five tries each). Every span id is fixed too, so a try repeated
after its export carries the same ids: a backend sees the same span again, not another.
"""

from __future__ import annotations

import copy
import hashlib

from opentelemetry import trace
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, Tracer
from temporalio import activity

from wire.messages import LifecycleConfig, LifecycleRecord, LifecycleTransition

MS = 1_000_000  # nanoseconds per millisecond
LIFECYCLE = "tournament.lifecycle"
TRANSITION = "state_transition"


def _digest(text: str, size: int) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:size], "big") or 1


def lifecycle_ids(tournament_id: str) -> tuple[int, int]:
    """The tournament's trace id and its root span's id: the same in every worker, for ever.

    >>> trace_id, span_id = lifecycle_ids("t1")
    >>> f"{trace_id:032x}", f"{span_id:016x}"
    ('628b49d96dcde97a430dd4f597705899', 'b8d94f2e2976f906')
    """
    return _digest(tournament_id, 16), _digest(f"{tournament_id}:lifecycle", 8)


def transition_span_id(tournament_id: str, index: int) -> int:
    """The span id of the tournament's ``index``-th transition (its place in the transitions)."""
    return _digest(f"{tournament_id}:transition:{index}", 8)


class _FixedIds(IdGenerator):
    def __init__(self, trace_id: int, span_id: int) -> None:
        self.trace_id, self.span_id = trace_id, span_id

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id

    def is_trace_id_random(self) -> bool:
        return False


def _naming(tracer: Tracer, trace_id: int, span_id: int) -> Tracer:
    """``tracer``, but the next span it starts gets these ids (the SDK's tracer takes its ids
    from its ``id_generator``; the copy leaves the provider's own tracer untouched). Any
    other tracer exports nothing (no SDK provider is installed), so its ids do not matter."""
    if not isinstance(tracer, sdk_trace.Tracer):
        return tracer
    fixed = copy.copy(tracer)
    fixed.id_generator = _FixedIds(trace_id, span_id)
    return fixed


def config_attributes(rec: LifecycleConfig) -> dict[str, str | int]:
    """The seed's seven config attributes."""
    return {
        "tournament.table_id": rec.tournament_id,
        "tournament.seats": rec.seats,
        "tournament.entry_fee": rec.entry_fee,
        "tournament.starting_stack": rec.starting_stack,
        "tournament.level_duration_seconds": rec.level_duration_seconds,
        "tournament.action_timeout_seconds": rec.action_timeout_seconds,
        "tournament.prize_structure_summary": rec.prize_structure_summary,
    }


class TelemetryActivities:
    def __init__(self, tracer: Tracer | None = None) -> None:
        self._tracer = tracer

    @property
    def tracer(self) -> Tracer:
        # Looked up when used: the worker installs its provider after building its activities.
        return self._tracer or trace.get_tracer("sng.lifecycle")

    @activity.defn
    async def record_transition(self, t: LifecycleTransition) -> None:
        """One state_transition, now: a child span of the tournament's root, at its time."""
        trace_id, root_id = lifecycle_ids(t.tournament_id)
        root = NonRecordingSpan(
            SpanContext(
                trace_id=trace_id,
                span_id=root_id,
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
        )
        tracer = _naming(self.tracer, trace_id, transition_span_id(t.tournament_id, t.index))
        span = tracer.start_span(
            TRANSITION,
            context=trace.set_span_in_context(root),
            start_time=t.at_ms * MS,
            attributes={**config_attributes(t), "from": t.from_state, "to": t.to_state},
        )
        span.end(end_time=t.at_ms * MS)

    @activity.defn
    async def record_lifecycle(self, rec: LifecycleRecord) -> None:
        """The root span, at close: the tournament's whole life, with every transition."""
        opened = next((t for t in rec.transitions if t.state == "starting"), rec.transitions[0])
        tracer = _naming(self.tracer, *lifecycle_ids(rec.tournament_id))
        span = tracer.start_span(
            LIFECYCLE,
            # A root: no parent, not even the activity's own (the interceptor's) span.
            context=trace.set_span_in_context(trace.INVALID_SPAN),
            start_time=opened.at_ms * MS,
            attributes=config_attributes(rec),
        )
        # The first move is into `starting` (from `registering`); a cancel's, into `cancelled`.
        first = rec.transitions.index(opened) or 1
        for before, t in zip(rec.transitions[first - 1 :], rec.transitions[first:], strict=False):
            span.add_event(
                TRANSITION, {"from": before.state, "to": t.state}, timestamp=t.at_ms * MS
            )
        span.set_attribute("tournament.duration_ms", rec.closed_at_ms - opened.at_ms)
        span.set_attribute("tournament.actual_payouts", rec.actual_payouts)
        span.set_attribute("tournament.auto_fold_count", rec.auto_fold_count)
        span.end(end_time=rec.closed_at_ms * MS)
