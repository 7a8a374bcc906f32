"""`WorkflowTask.wait` and the progress reports: a wait without a callback takes none
of them, a wait that timed out leaves the rest to the next one, and several waits with
callbacks share them (each report reaches one of them)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_sdk import Emulator, WaitTimeoutError, Workflow

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples"
INPUTS = [SAMPLES / "rover.nmea", SAMPLES / "imu.csv"]
CONFIG = SAMPLES / "processing.json"
ORDER = ["creating_container", "uploading", "starting", "queued", "running", "downloading", "done"]


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.5, device=False) as emulator:
        yield emulator


def stages(reports: list[dict[str, Any]]) -> list[str]:
    """The stages reported, checked to be in the workflow's order."""
    said = [str(r["stage"]) for r in reports]
    ranks = [ORDER.index(s) for s in said if s in ORDER]
    assert ranks == sorted(ranks), said
    return said


def test_a_wait_without_a_callback_takes_no_report(emulator: Emulator, tmp_path: Path) -> None:
    task = Workflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path)
    first = task._n.wait(30, None)
    assert task.done()
    # Every report is still there for a wait with a callback, from the start.
    reports: list[dict[str, Any]] = []
    again = task._n.wait(0, reports.append)
    assert again == first
    said = stages(reports)
    assert said[0] == "creating_container" and said[-1] == "done", said
    # Given once: a further wait has none left.
    more: list[dict[str, Any]] = []
    task._n.wait(0, more.append)
    assert more == []


def test_a_wait_that_timed_out_leaves_the_rest_to_the_next(emulator: Emulator, tmp_path: Path) -> None:
    task = Workflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path)
    reports: list[dict[str, Any]] = []
    with pytest.raises(WaitTimeoutError):
        task._n.wait(0.01, reports.append)
    assert not task.done()
    outcome = task._n.wait(30, reports.append)
    assert outcome["processing"]["status"] == "processed"
    said = stages(reports)
    assert {"creating_container", "uploading", "done"} <= set(said), said


def test_waits_with_callbacks_on_several_threads_share_the_reports(
    emulator: Emulator, tmp_path: Path
) -> None:
    task = Workflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path)
    lock = threading.Lock()
    reports: list[dict[str, Any]] = []
    got: list[str] = []
    failed: list[BaseException] = []

    def report(p: dict[str, Any]) -> None:
        with lock:
            reports.append(p)

    def wait() -> None:
        try:
            got.append(task._n.wait(30, report)["processing"]["id"])
        except BaseException as error:  # noqa: BLE001 - reported below
            failed.append(error)

    threads = [threading.Thread(target=wait) for _ in range(3)]
    for thread in threads:
        thread.start()
    # And one without a callback, on this thread.
    mine = task._n.wait(30, None)
    for thread in threads:
        thread.join()
    assert failed == []
    assert got == [mine["processing"]["id"]] * 3
    # Each callback runs on its own thread: the order across threads is theirs.
    said = {str(r["stage"]) for r in reports}
    assert {"creating_container", "uploading", "done"} <= said, said
