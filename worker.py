"""The worker process: runs every workflow and activity on the configured task queue.

``python worker.py`` (or ``sng worker``) runs one with the deployment's settings; scale out by
starting more of these against the same Temporal namespace and task queue. Tests and tools
build workers and replayers through ``build_worker`` and ``build_replayer`` so every one has
the same workflows, activities, codec and SDK flags.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import sys
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleHandle,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
    ScheduleUpdate,
    ScheduleUpdateInput,
)
from temporalio.converter import DataConverter
from temporalio.worker import Replayer, Worker

# The SDK's "apply every job of an activation before any coroutine runs" behaviour (its flag 2,
# recognised since 1.2x and slated to become the default). Without it a signal or Update in the
# same activation as a timer runs the handlers and the main loop before the timer is applied,
# so what the loop decides depends on how the SDK grouped the jobs. The flag is recorded in
# each history that used it, so a replay follows it whatever the replayer's default.
from temporalio.worker._workflow_instance import _WorkflowLogicFlag

from activities.act_writer import ActWriter
from activities.events import EventActivities
from activities.money import VirtualMoneyActivities
from activities.persistence import PersistenceActivities
from activities.readmodel import ReadModelActivities
from activities.reconciler import ReconcilerActivities
from activities.rooms import RoomActivities
from activities.table import new_deck_seed, new_secret, wall_clock_ms
from activities.telemetry import TelemetryActivities
from core import deck_vault
from core.codec import EncryptionCodec, codec_for
from core.settings import Settings, get_settings, refuse_implicit_dev
from core.telemetry import worker_runtime
from core.temporal import connect
from db.engine import Database
from wire.ids import RECONCILER_SCHEDULE_ID
from workflows.reconciler import ReconcilerWorkflow
from workflows.room import RoomWorkflow
from workflows.table import TableWorkflow
from workflows.tournament import TournamentWorkflow

if TYPE_CHECKING:
    # Imported where the chain backend is chosen: web3 and eth_account cost seconds at start.
    from activities.chain import ChainMoneyActivities

WORKFLOWS: Sequence[type] = (TournamentWorkflow, TableWorkflow, RoomWorkflow, ReconcilerWorkflow)

RECONCILER_EVERY = timedelta(seconds=30)
"""The seed's "30s reconciler": how often the schedule starts a sweep."""


def activities_for(
    db: Database,
    chain: ChainMoneyActivities | None = None,
    *,
    codec: EncryptionCodec | None = None,
) -> list[Any]:
    """Every activity; the money legs from the chain backend when one is given. ``codec``
    seals the read store's private parts (the deployment's codec by default).

    Both backends register the same activity names (collect_entry, refund_entry, pay_prize),
    so a workflow never knows which one runs. The rake is a ledger posting, virtual only.
    """
    codec = codec or codec_for(get_settings())
    persistence = PersistenceActivities(db, codec)
    events = EventActivities(db)
    virtual = VirtualMoneyActivities(db)
    money: VirtualMoneyActivities | ChainMoneyActivities = chain or virtual
    rooms = RoomActivities(db, codec)  # cash rooms are virtual chips on either backend
    reads = ReadModelActivities(db, codec)
    telemetry = TelemetryActivities()
    return [
        persistence.save_tournament,
        persistence.save_entrant,
        persistence.record_hand,
        persistence.publish_entrants,
        persistence.create_payout_intents,
        persistence.confirm_payout,
        persistence.fail_payout,
        events.publish_event,
        money.collect_entry,
        money.refund_entry,
        money.pay_prize,
        virtual.collect_rake,
        new_deck_seed,
        new_secret,
        wall_clock_ms,
        telemetry.record_transition,
        telemetry.record_lifecycle,
        rooms.save_room,
        rooms.room_buy_in,
        rooms.room_cash_out,
        rooms.settle_room_hand,
        rooms.publish_events,
        rooms.seconds_since_seen,
        rooms.stream_status,
        reads.publish_table,
        ReconcilerActivities(db).due_payouts,
        ReconcilerActivities(db).close_orphaned_settlements,
    ]


SINGLE_BATCH = _WorkflowLogicFlag.PROCESS_WORKFLOW_ACTIVATION_JOBS_AS_SINGLE_BATCH


def single_batch(worker: Worker) -> Worker:
    """Turn on single-batch activations for new histories (docs/durability.md); every worker
    that runs our workflows is built through here."""
    worker._set_default_workflow_logic_flag(SINGLE_BATCH, enabled=True)
    return worker


def build_worker(
    client: Client,
    db: Database,
    task_queue: str,
    *,
    chain: ChainMoneyActivities | None = None,
    write_acts: bool = True,
    act_write_stall: float = 0.0,
    **options: Any,
) -> Worker:
    """``write_acts=False`` and ``act_write_stall``: test-only fault switches of the worker's
    writer of act answers (activities/act_writer.py; ``run_worker`` takes them from the
    settings, which refuse them in prod)."""
    deck_vault.ensure_installed()  # the tables open their decks under it (core/deck_vault.py)
    writer = ActWriter(db, enabled=write_acts, stall=act_write_stall)
    interceptors = [*options.pop("interceptors", ()), writer]
    return single_batch(
        Worker(
            client,
            task_queue=task_queue,
            workflows=list(WORKFLOWS),
            activities=activities_for(db, chain, codec=_codec_of(client)),
            interceptors=interceptors,
            **options,
        )
    )


def _codec_of(client: Client) -> EncryptionCodec | None:
    codec = client.data_converter.payload_codec
    return codec if isinstance(codec, EncryptionCodec) else None


def build_replayer(
    data_converter: DataConverter, *, namespace: str = "default", extra: Sequence[type] = ()
) -> Replayer:
    """The replayer every determinism check uses: our workflows (and any a test adds), our
    converter, the same flags, and the namespace the histories were written in (the codec
    binds every payload to its namespace and workflow, so a replay must name the same one)."""
    deck_vault.ensure_installed()  # a replay opens the decks as the tables did
    replayer = Replayer(
        workflows=[*WORKFLOWS, *extra],
        data_converter=data_converter,
        namespace=namespace,
    )
    replayer._set_default_workflow_logic_flag(SINGLE_BATCH, enabled=True)
    return replayer


def reconciler_schedule(task_queue: str, schedule_id: str = RECONCILER_SCHEDULE_ID) -> Schedule:
    """The payout reconciler's schedule: a sweep (``ReconcilerWorkflow``, no input: see
    ``wire/reconciler.py``) every 30 seconds on the workers' task queue, a tick skipped while
    the last sweep still runs, and missed ticks not made up (the next sweep covers them)."""
    return Schedule(
        action=ScheduleActionStartWorkflow(
            ReconcilerWorkflow.run,
            id=schedule_id,  # each run's id is this plus the tick's time
            task_queue=task_queue,
        ),
        spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=RECONCILER_EVERY)]),
        policy=SchedulePolicy(
            overlap=ScheduleOverlapPolicy.SKIP, catchup_window=timedelta(minutes=1)
        ),
        state=ScheduleState(note="sweeps unconfirmed payout intents (docs/operations.md)"),
    )


async def ensure_reconciler_schedule(
    client: Client, task_queue: str, *, schedule_id: str = RECONCILER_SCHEDULE_ID
) -> ScheduleHandle:
    """Create the reconciler's schedule, or bring an existing one up to date: its action,
    interval and policy are this release's, its state (paused, and the note saying why) is
    left as the operators set it. Safe to call from every worker at every start."""
    schedule = reconciler_schedule(task_queue, schedule_id)
    try:
        return await client.create_schedule(schedule_id, schedule)
    except ScheduleAlreadyRunningError:
        pass
    handle = client.get_schedule_handle(schedule_id)

    def keep_state(current: ScheduleUpdateInput) -> ScheduleUpdate:
        kept = current.description.schedule.state
        return ScheduleUpdate(schedule=dataclasses.replace(schedule, state=kept))

    await handle.update(keep_state)
    return handle


async def _connect_patiently(settings: Settings, *, limit: float = 120.0) -> Client:
    """Wait for Temporal rather than die: a worker started beside a server that is still
    starting (or restarting) should simply begin polling once it answers."""
    log = logging.getLogger("sng.worker")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    delay = 0.2
    runtime = worker_runtime(settings)
    while True:
        try:
            return await connect(settings, runtime=runtime)
        except RuntimeError as err:
            if loop.time() > deadline:
                raise
            log.warning("Temporal not reachable yet (%s); retrying in %.1fs", err, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


async def run_worker(settings: Settings) -> None:
    # SDK metrics for Prometheus when SNG_WORKER_METRICS_ADDRESS is set (core/telemetry.py).
    deck_vault.ensure_installed(settings)  # refuses a prod worker without SNG_DECK_KEY
    client = await _connect_patiently(settings)
    db = Database(settings.database_url)
    chain = None
    if settings.money_backend == "chain":
        from activities.chain import ChainMoneyActivities

        chain = ChainMoneyActivities.from_settings(settings)
        if await chain.vault_takes_deposits_from_anyone():
            # Security review 3, S2: an entrant can take any entry id first on this vault.
            logging.getLogger("sng.worker").error(
                "the vault at %s takes deposits from entrants: anyone can block an entry by"
                " depositing under its id first. Deploy the current TournamentVault and drain"
                ' this one (docs/chain.md, "Moving to a new vault")',
                settings.vault_address,
            )
    worker = build_worker(
        client,
        db,
        settings.temporal_task_queue,
        chain=chain,
        write_acts=not settings.test_fault_skip_worker_act_write,
        act_write_stall=settings.test_fault_stall_worker_act_write_seconds,
    )
    if settings.reconciler_schedule:
        try:
            await ensure_reconciler_schedule(client, settings.temporal_task_queue)
        except Exception:  # the worker still serves tournaments; `sng schedules` retries
            logging.getLogger("sng.worker").exception("could not create the reconciler schedule")
    logging.getLogger("sng.worker").info(
        "worker polling %s on %s", settings.temporal_task_queue, settings.temporal_address
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        # Drain in-flight tasks instead of dying mid-activity; Temporal would retry anyway.
        loop.add_signal_handler(sig, lambda: asyncio.ensure_future(worker.shutdown()))
    try:
        await worker.run()
    finally:
        await db.dispose()


def main() -> None:
    """Run a worker against the configured Temporal and PostgreSQL (production shape): like
    ``sng api``, it runs with the public dev secrets only when ``SNG_ENV`` says so."""
    settings = get_settings()
    refuse_implicit_dev(settings, "the worker")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    asyncio.run(run_worker(settings))
    # Shut down cleanly (every task finished or handed back): leave without the interpreter's
    # finalisation, during which the Temporal core's threads can abort the process
    # (PyGILState_Release, exit -6; seen in CI after a clean SIGTERM shutdown, as with
    # `sng schedules`). A failure above still raises and exits non-zero as before.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
