"""Batches of missions from Python (``Workflow.run_many`` / ``start_many``) against the
in-process emulator: each mission processed, one at a time, failures isolated and
returned by name, progress labelled by mission."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_sdk import Emulator, InvalidInputError, LocalFileError, Workflow, WorkflowOutcome

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples"
CONFIG = SAMPLES / "processing.json"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.3, device=False) as emulator:
        yield emulator


def mission(folder: Path, good: bool = True) -> Path:
    folder.mkdir(parents=True)
    if good:
        for name in ("rover.nmea", "imu.csv"):
            shutil.copy(SAMPLES / name, folder / name)
    else:
        (folder / "rover.nmea").write_text("no GNSS here\n")
    return folder


def test_run_many_processes_each_mission_and_isolates_failures(emulator: Emulator, tmp_path: Path) -> None:
    folders = [
        mission(tmp_path / "missions" / "north"),
        mission(tmp_path / "missions" / "broken", good=False),
        mission(tmp_path / "missions" / "south"),
    ]
    reports: list[tuple[str, str]] = []
    in_line: list[tuple[str, object, object]] = []

    def progress(name: str, report: dict[str, Any]) -> None:
        reports.append((name, report["stage"]))
        if report["stage"] == "waiting_for_organization":
            in_line.append((name, report["behind"], report["ahead"]))

    results = Workflow(emulator.cloud()).run_many(
        [*folders, tmp_path / "missions" / "absent"],
        CONFIG,
        out=tmp_path / "out",
        progress=progress,
    )
    assert list(results) == ["north", "broken", "south", "absent"]
    north, broken, south, absent = results.values()
    assert isinstance(north, WorkflowOutcome) and north.succeeded, north
    assert isinstance(south, WorkflowOutcome) and south.succeeded, south
    assert north.processing.name == "north"
    assert sorted(p.name for p in south.downloaded) == ["report.json", "trajectory.csv", "trajectory.geojson"]
    assert all(p.parent == tmp_path / "out" / "south" for p in south.downloaded)
    assert isinstance(broken, WorkflowOutcome) and broken.failed, broken
    # A mission that could not even start is its own error, the others unharmed.
    assert isinstance(absent, LocalFileError), absent
    # Each mission's reports carry its name, and every processed one got to its end.
    done = {name for name, stage in reports if stage == "done"}
    assert done == {"north", "broken", "south"}
    # A mission in line says which mission of the batch it waits behind.
    assert any(behind is not None for _, behind, _ in in_line), in_line
    for name, behind, ahead in in_line:
        if behind is not None:
            assert behind in {"north", "broken", "south"} - {name} and ahead == 1, in_line
    # One processing at a time: none was refused with a conflict, none started twice.
    names = sorted(p.name or "" for p in emulator.cloud().list_processings())
    assert names == ["broken", "north", "south"]


def test_start_many_gives_a_task_per_mission_by_name(emulator: Emulator, tmp_path: Path) -> None:
    a = mission(tmp_path / "a")
    tasks = Workflow(emulator.cloud()).start_many({"first": a, "second": [a / "rover.nmea", a / "imu.csv"]}, CONFIG)
    assert list(tasks) == ["first", "second"]
    outcomes = {name: task.wait(timeout=60) for name, task in tasks.items()}
    assert all(o.succeeded for o in outcomes.values())
    assert [o.processing.name for o in outcomes.values()] == ["first", "second"]


def test_missions_are_checked_before_anything_is_sent(emulator: Emulator, tmp_path: Path) -> None:
    workflow = Workflow(emulator.cloud())
    twin = mission(tmp_path / "x" / "same")
    other = mission(tmp_path / "y" / "same")
    with pytest.raises(InvalidInputError, match="two missions"):
        workflow.start_many([twin, other], CONFIG)
    with pytest.raises(InvalidInputError, match="no mission"):
        workflow.start_many([], CONFIG)
    with pytest.raises(TypeError):
        workflow.start_many(twin, CONFIG)  # type: ignore[arg-type]


def test_a_rerun_with_a_key_spends_no_second_credit(emulator: Emulator, tmp_path: Path) -> None:
    workflow = Workflow(emulator.cloud())
    folder = mission(tmp_path / "keyed")
    first = workflow.run(folder, CONFIG, key=True, out=tmp_path / "first", progress=False)
    assert first.succeeded and not first.reused
    again = workflow.run(folder, CONFIG, key=True, out=tmp_path / "again", progress=False)
    assert again.reused and again.processing.id == first.processing.id
    assert sorted(p.name for p in again.downloaded) == sorted(p.name for p in first.downloaded)

    # A batch rerun: each mission found by its own key, nothing started again.
    batch = {"k1": mission(tmp_path / "k1"), "k2": mission(tmp_path / "k2")}
    once = workflow.run_many(batch, CONFIG, key="survey-7", progress=False)
    twice = workflow.run_many(batch, CONFIG, key="survey-7", progress=False)
    for name in batch:
        a, b = once[name], twice[name]
        assert isinstance(a, WorkflowOutcome) and isinstance(b, WorkflowOutcome)
        assert not a.reused and b.reused and a.processing.id == b.processing.id
        assert a.processing["metadata"]["svc-job-key"] == f"survey-7/{name}"
    with pytest.raises(TypeError):
        workflow.start(folder, CONFIG, key=7)  # type: ignore[arg-type]


def test_the_async_batch_gives_the_same_results(emulator: Emulator, tmp_path: Path) -> None:
    import asyncio

    from svc_sdk.aio import AsyncWorkflow

    folders = [mission(tmp_path / "east"), mission(tmp_path / "west", good=False)]
    seen: list[str] = []

    async def main() -> dict[str, Any]:
        workflow = AsyncWorkflow(emulator.cloud())
        return await workflow.run_many(folders, CONFIG, progress=lambda name, report: seen.append(name))

    results = asyncio.run(main())
    assert list(results) == ["east", "west"]
    east, west = results.values()
    assert isinstance(east, WorkflowOutcome) and east.succeeded
    assert isinstance(west, WorkflowOutcome) and west.failed
    assert {"east", "west"} <= set(seen)


def test_lists_filter_by_name_and_metadata(emulator: Emulator, tmp_path: Path) -> None:
    client = emulator.cloud()
    folder = mission(tmp_path / "filtered")
    Workflow(client).run(folder, CONFIG, name="filtered", metadata={"site": "quay-3"}, progress=False)
    named = list(client.list_processings(name="filtered"))
    assert [p.name for p in named] == ["filtered"]
    tagged = list(client.list_processings(metadata={"site": "quay-3"}))
    assert [p.name for p in tagged] == ["filtered"]
    assert list(client.list_processings(name="filtered", metadata={"site": "other"})) == []
    containers = list(client.list_containers(metadata={"site": "quay-3"}))
    assert len(containers) == 1 and containers[0]["metadata"]["site"] == "quay-3"
    assert len(list(client.list_processings())) > 1


def test_a_batch_run_again_with_its_journal_starts_nothing_twice(emulator: Emulator, tmp_path: Path) -> None:
    workflow = Workflow(emulator.cloud())
    batch = {"j1": mission(tmp_path / "j1"), "j2": mission(tmp_path / "j2")}
    journal = tmp_path / "batch.jsonl"
    first = workflow.run_many(batch, CONFIG, journal=journal, progress=False)
    again = workflow.run_many(batch, CONFIG, journal=journal, progress=False)
    for name in batch:
        a, b = first[name], again[name]
        assert isinstance(a, WorkflowOutcome) and isinstance(b, WorkflowOutcome)
        assert a.processing.id == b.processing.id
    journal.write_text("not a journal\n{}\n")
    with pytest.raises(LocalFileError):
        workflow.start_many(batch, CONFIG, journal=journal)
