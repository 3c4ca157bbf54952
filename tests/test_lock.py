"""The installed dependencies are the locked ones, and the Temporal SDK is the one our
durability was proved on (docs/versioning.md, "Upgrading the Temporal SDK").

Durability rests on a private SDK flag: every worker and replayer turns on
``PROCESS_WORKFLOW_ACTIVATION_JOBS_AS_SINGLE_BATCH`` (worker.SINGLE_BATCH), so a new SDK could
change what a history means. When one of these fails after an upgrade: bump the pin in
pyproject.toml, run bin/lock, run the whole suite, and re-record the golden histories
(tests/histories/golden/, ``python -m tests.histories.golden.record``) only if they no longer
replay and the changelog says why.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = "tests/histories/golden/{tournament,table,room}.json and golden/v2/"


def _locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"requirements.lock pins every package exactly: {line!r}"
        pins[canonicalize_name(name)] = version
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [
        Requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    ]


def test_every_declared_dependency_is_locked_within_its_range() -> None:
    locked = _locked()
    for requirement in _declared():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement.name} is not in requirements.lock: run bin/lock"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"requirements.lock pins {name}=={locked[name]} outside {requirement}: run bin/lock"
        )


def test_the_installed_packages_are_the_locked_ones() -> None:
    drift = {
        name: (version, metadata.version(name))
        for name, version in _locked().items()
        if metadata.version(name) != version
    }
    assert not drift, f"installed versions differ from requirements.lock: {drift}"


def test_the_temporal_sdk_is_pinned_and_has_the_flag_our_histories_need() -> None:
    [sdk] = [r for r in _declared() if canonicalize_name(r.name) == "temporalio"]
    pinned = re.fullmatch(r"==(\d+\.\d+\.\d+)", str(sdk.specifier))
    assert pinned, f"temporalio must be pinned exactly in pyproject.toml, not {sdk.specifier}"
    installed = metadata.version("temporalio")
    assert installed == pinned.group(1), (
        f"temporalio {installed} is installed, {pinned.group(1)} is pinned: an SDK upgrade is one"
        f" deliberate commit (pin, bin/lock, the whole suite; re-record {GOLDEN} if needed)"
    )
    from temporalio.worker import Replayer, Worker
    from temporalio.worker._workflow_instance import _WorkflowLogicFlag

    assert hasattr(_WorkflowLogicFlag, "PROCESS_WORKFLOW_ACTIVATION_JOBS_AS_SINGLE_BATCH"), (
        f"temporalio {installed} lost the single-batch flag our workers and replays run with:"
        f" check what the SDK does instead, then re-record {GOLDEN}"
    )
    for cls in (Worker, Replayer):
        assert hasattr(cls, "_set_default_workflow_logic_flag"), (
            f"temporalio {installed}: {cls.__name__} can no longer set the single-batch flag"
        )
