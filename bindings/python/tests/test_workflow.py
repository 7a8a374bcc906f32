"""The whole workflow from Python against the in-process emulator: outputs identical
to the `svc` command's, progress, wait with a timeout, cancel, resume by id, Ctrl-C,
and the errors that name what was created."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_sdk import (
    CanceledError,
    ConflictError,
    Emulator,
    NotFoundError,
    PermissionDeniedError,
    WaitTimeoutError,
    Workflow,
    WorkflowError,
)

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples"
INPUTS = [SAMPLES / "rover.nmea", SAMPLES / "imu.csv"]
CONFIG = SAMPLES / "processing.json"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.5, device=False) as emulator:
        yield emulator


def test_outputs_are_those_of_the_svc_command(emulator: Emulator, tmp_path: Path, svc_bin: Path) -> None:
    reports: list[dict[str, Any]] = []
    outcome = Workflow(emulator.cloud()).run(
        INPUTS, CONFIG, name="python", out=tmp_path / "py", progress=reports.append
    )
    assert outcome.succeeded, outcome
    assert outcome.error_messages() == []
    names = sorted(p.name for p in outcome.downloaded)
    assert names == ["report.json", "trajectory.csv", "trajectory.geojson"]
    assert outcome.processing.name == "python"
    assert outcome.container_id is not None

    # Every stage reported, in order, on this thread.
    order = ["creating_container", "uploading", "starting", "queued", "running",
             "downloading", "done"]
    stages = [r["stage"] for r in reports]
    ranks = [order.index(s) for s in stages if s in order]
    assert ranks == sorted(ranks), stages
    assert {"creating_container", "uploading", "done"} <= set(stages)

    # The same job through the command-line tool, against the same emulator.
    env = {**os.environ, **emulator.env}
    cli = subprocess.run(
        [str(svc_bin), "process", *map(str, INPUTS), "--config", str(CONFIG),
         "--out", str(tmp_path / "cli"), "--json"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    for name in ["trajectory.csv", "trajectory.geojson"]:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name

    # The outputs in the analyst's tools.
    rows = outcome.trajectory_rows()
    assert rows and set(rows[0]) >= {"time", "latitude", "longitude", "height"}
    assert outcome.geojson()["type"] in ("FeatureCollection", "Feature")
    assert isinstance(outcome.report(), dict)


def test_the_trajectory_as_a_dataframe(emulator: Emulator, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    outcome = Workflow(emulator.cloud()).run(INPUTS, CONFIG, out=tmp_path, progress=False)
    frame = outcome.trajectory()
    assert str(frame["time"].dtype) == "datetime64[ns, UTC]"
    assert frame["latitude"].dtype == "float64"
    assert len(frame) == len(outcome.trajectory_rows())
    assert isinstance(frame, pd.DataFrame)


def test_wait_with_a_timeout_then_to_the_end(emulator: Emulator, tmp_path: Path) -> None:
    task = Workflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path)
    with pytest.raises(WaitTimeoutError):
        task.wait(timeout=0.01)
    outcome = task.wait()
    assert outcome.succeeded
    assert task.done()
    assert task.processing_id == outcome.processing.id


def test_threads_waiting_on_one_task_all_get_its_outcome(emulator: Emulator, tmp_path: Path) -> None:
    task = Workflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path)
    got: list[str] = []
    failed: list[BaseException] = []

    def wait() -> None:
        try:
            got.append(task.wait(timeout=30).processing.id)
        except BaseException as error:  # noqa: BLE001 - reported below
            failed.append(error)

    threads = [threading.Thread(target=wait) for _ in range(3)]
    for thread in threads:
        thread.start()
    assert not task.done()
    for thread in threads:
        thread.join()
    assert failed == []
    assert task.done()
    assert len(got) == 3 and len(set(got)) == 1
    # And again, afterwards: the same outcome.
    assert task.wait().processing.id == got[0]


def test_done_means_wait_zero_gives_the_outcome_while_another_thread_waits(
    emulator: Emulator, tmp_path: Path
) -> None:
    for _ in range(3):
        task = Workflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path)
        waiter = threading.Thread(target=task.wait)
        waiter.start()
        deadline = time.monotonic() + 30
        while not task.done() and time.monotonic() < deadline:
            pass  # holds the GIL as much as it can: the waiter thread must still finish
        assert task.wait(timeout=0).succeeded
        waiter.join()


def test_each_wait_gets_its_own_copy_of_the_outcome(emulator: Emulator, tmp_path: Path) -> None:
    task = Workflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path)
    first, second = task._n.wait(30, None), task._n.wait(30, None)
    assert first == second and first is not second
    first["processing"]["status"] = "changed by one caller"
    first["downloaded"].clear()
    third = task._n.wait(30, None)
    assert third == second and third["processing"]["status"] == "processed"


def test_the_outcome_is_kept_when_the_last_reports_raise(emulator: Emulator, tmp_path: Path) -> None:
    task = Workflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path)
    deadline = time.monotonic() + 30
    while not task.done() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert task.done()

    def fails(report: dict[str, object]) -> None:
        raise ValueError("a progress callback failed")

    # The reports queued meanwhile reach the callback, which raises: that error, and
    # the outcome is kept for the next wait.
    with pytest.raises(ValueError, match="a progress callback failed"):
        task._n.wait(None, fails)
    assert task.wait(timeout=5).succeeded


def test_each_wait_raises_its_own_copy_and_keeps_nothing_alive() -> None:
    with Emulator(processing_time=30, device=False) as emulator:
        task = Workflow(emulator.cloud()).start(INPUTS, CONFIG)
        task.cancel()

        def caught() -> CanceledError:
            local = Workflow  # noqa: F841 - a frame local, held by the traceback
            try:
                task.wait()
            except CanceledError as error:
                return error
            raise AssertionError("not canceled")

        first, second = caught(), caught()
        assert first is not second and type(first) is type(second)
        assert (first.kind, str(first)) == (second.kind, str(second)) == ("canceled", str(first))
        # The task kept refers to no traceback: once dropped, it is freed.
        alive = weakref.ref(task)
        del task, first, second
        gc.collect()
        assert alive() is None


def test_a_callback_may_wait_on_its_own_task(emulator: Emulator, tmp_path: Path) -> None:
    task = Workflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path)
    inner: list[str] = []

    def report(p: dict[str, object]) -> None:
        if not inner:
            inner.append(task.wait(timeout=30).processing.id)

    outer = task._n.wait(30, report)
    assert inner == [outer["processing"]["id"]]


def test_progress_bars_fill_when_tqdm_is_installed(
    emulator: Emulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import tqdm  # type: ignore[import-untyped]  # noqa: F401 - a dev requirement: the bars are what is tested

    outcome = Workflow(emulator.cloud()).run(INPUTS, CONFIG, out=tmp_path, progress=True)
    assert outcome.succeeded
    shown = capsys.readouterr().err
    # One bar per step, each closed full; queued and running share the processing's.
    assert shown.count("processing:") >= 1
    last = {name: shown.rsplit(f"{name}:", 1)[1].split("\r")[0].split("\n")[0]
            for name in ("uploading", "processing", "downloading")}
    for name, line in last.items():
        assert line.lstrip().startswith("100%"), (name, line)
    # The processing's bar ends on where the processing ended, not on a step.
    assert last["processing"].rstrip().endswith("processed]"), last["processing"]
    assert shown.count("\n") == 3, shown  # three bars closed, none opened twice


def test_a_processing_is_resumed_by_its_id(emulator: Emulator, tmp_path: Path) -> None:
    workflow = Workflow(emulator.cloud())
    started = workflow.run(INPUTS, CONFIG, follow=False, progress=False)
    assert started.processing.status in ("pending", "processing")
    assert started.downloaded == []
    # A new client, as after a restarted notebook.
    outcome = Workflow(emulator.cloud()).resume(
        started.processing.id, out=tmp_path / "{processing_id}", progress=False
    )
    assert outcome.succeeded
    assert outcome.processing.id == started.processing.id
    assert (tmp_path / started.processing.id / "trajectory.csv").exists()


def test_cancel_names_the_processing_that_goes_on(tmp_path: Path) -> None:
    with Emulator(processing_time=30, device=False) as emulator:
        client = emulator.cloud()
        task = Workflow(client).start(INPUTS, CONFIG, out=tmp_path)
        deadline = time.monotonic() + 30
        while task.processing_id is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert task.processing_id is not None
        task.cancel()
        with pytest.raises(CanceledError) as caught:
            task.wait()
        assert isinstance(caught.value, WorkflowError)
        assert caught.value.processing_id == task.processing_id
        assert caught.value.container_id == task.container_id
        # It goes on in the cloud, as the error says.
        assert client.get_processing(task.processing_id).status in ("pending", "processing")
        client.cancel_processing(task.processing_id)


def test_a_dropped_task_cancels_its_workflow_unless_detached(tmp_path: Path) -> None:
    """The rule of every binding: dropping what the caller holds cancels the work, and
    ``detach()`` keeps it running."""
    with Emulator(processing_time=1, device=False) as emulator:
        client = emulator.cloud()
        for detached in (False, True):
            out = tmp_path / str(detached)
            task = Workflow(client).start(INPUTS, CONFIG, out=out, wait_for_organization=True)
            deadline = time.monotonic() + 30
            while task.processing_id is None and time.monotonic() < deadline:
                time.sleep(0.02)
            processing_id = task.processing_id
            assert processing_id is not None
            if detached:
                task.detach()
            del task
            gc.collect()
            # The processing ends in the cloud either way; only a detached workflow
            # goes on to download its outputs.
            deadline = time.monotonic() + 30
            while client.get_processing(processing_id).status != "processed":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            deadline = time.monotonic() + (30 if detached else 2)
            while not (out / "report.json").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert (out / "report.json").exists() == detached


def test_errors_name_what_was_created(tmp_path: Path) -> None:
    with Emulator(processing_time=30, device=False) as emulator:
        client = emulator.cloud()
        first = Workflow(client).start(INPUTS, CONFIG)
        deadline = time.monotonic() + 30
        while first.processing_id is None and time.monotonic() < deadline:
            time.sleep(0.05)
        # One processing at a time: the second is a conflict, and a workflow error.
        with pytest.raises(ConflictError) as caught:
            Workflow(client).run(INPUTS, CONFIG, progress=False)
        assert isinstance(caught.value, WorkflowError)
        assert caught.value.status == 409
        assert caught.value.container_id is not None
        assert caught.value.cleaned_up is False
        assert client.get_container(caught.value.container_id).id == caught.value.container_id
        # Asked to, the workflow deletes what it created before a processing started.
        with pytest.raises(ConflictError) as cleaned:
            Workflow(client).run(INPUTS, CONFIG, progress=False, cleanup_on_failure=True)
        assert isinstance(cleaned.value, WorkflowError)
        assert cleaned.value.cleaned_up is True
        with pytest.raises(NotFoundError):
            client.get_container(cleaned.value.container_id or "")
        first.cancel()
        client.cancel_processing(first.processing_id or "")

        emulator.set_credits(0)
        with pytest.raises(PermissionDeniedError) as denied:
            Workflow(client).run(INPUTS, CONFIG, progress=False)
        assert isinstance(denied.value, WorkflowError)
        assert denied.value.container_id is not None
        assert denied.value.processing_id is None


CHILD = """
import sys
from svc_sdk import Emulator, Workflow
with Emulator(processing_time=60, device=False) as emulator:
    said = []
    def report(p):
        if p["stage"] in ("queued", "running") and not said:
            said.append(True)
            print("running", flush=True)
    try:
        Workflow(emulator.cloud()).run(sys.argv[1:3], sys.argv[3], progress=report)
    except KeyboardInterrupt as e:
        print("interrupted:", e, flush=True)
        sys.exit(0)
print("not interrupted", flush=True)
sys.exit(1)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_says_which_processing_goes_on() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, *map(str, INPUTS), str(CONFIG)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "running"
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        elapsed = time.monotonic() - sent
        assert line.startswith("interrupted:"), line
        assert "goes on in the cloud" in line, line
        assert elapsed < 1.0, elapsed
        assert child.wait(timeout=10) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


CHILD_TASK = """
import sys, time
from svc_sdk import Emulator, Workflow
with Emulator(processing_time=60, device=False) as emulator:
    said = []
    def report(p):
        if p["stage"] in ("queued", "running") and not said:
            said.append(True)
            print("running", flush=True)
    task = Workflow(emulator.cloud()).start(sys.argv[1:3], sys.argv[3], progress=report)
    if sys.argv[4] == "detached":
        task.detach()
    try:
        task.wait()
    except KeyboardInterrupt:
        time.sleep(0.5)
        print("still running" if not task.done() else "stopped", flush=True)
        task.cancel()
        sys.exit(0)
print("not interrupted", flush=True)
sys.exit(1)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("detached", [False, True])
def test_ctrl_c_in_a_wait_stops_the_workflow_unless_detached(detached: bool) -> None:
    mode = "detached" if detached else "attached"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_TASK, *map(str, INPUTS), str(CONFIG), mode],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "running"
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        assert line == ("still running" if detached else "stopped"), line
        assert child.wait(timeout=10) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_a_bad_job_is_refused_before_sending(emulator: Emulator, tmp_path: Path) -> None:
    from svc_sdk import InvalidInputError

    with pytest.raises(InvalidInputError):
        Workflow(emulator.cloud()).run([], CONFIG, progress=False)
    missing = tmp_path / "missing.nmea"
    with pytest.raises(WorkflowError) as caught:
        Workflow(emulator.cloud()).run([missing], CONFIG, progress=False)
    assert caught.value.kind == "io"
    assert caught.value.container_id is None
    config = tmp_path / "list.json"
    config.write_text(json.dumps([1, 2]))
    with pytest.raises(InvalidInputError):
        Workflow(emulator.cloud()).run(INPUTS, config, progress=False)


def test_local_files_raise_the_sdks_error_and_the_os_error(emulator: Emulator, tmp_path: Path) -> None:
    import errno
    import pickle

    from svc_sdk import InvalidInputError, LocalFileError, SvcError

    workflow = Workflow(emulator.cloud())
    missing = tmp_path / "missing.nmea"
    with pytest.raises(FileNotFoundError) as caught:
        workflow.run([missing], CONFIG, progress=False)
    error = caught.value
    assert isinstance(error, SvcError) and isinstance(error, LocalFileError)
    assert isinstance(error, WorkflowError)
    assert error.errno == errno.ENOENT and error.filename == str(missing)
    assert str(missing) in str(error)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and again.errno == errno.ENOENT

    # A missing configuration file, likewise; one that is not JSON names its line and
    # column; one whose JSON is not an object is invalid input.
    with pytest.raises(FileNotFoundError) as caught:
        workflow.run(INPUTS, tmp_path / "nope.json", progress=False)
    assert isinstance(caught.value, SvcError)
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "processing": {"type": "insSingle",}\n}\n')
    with pytest.raises(InvalidInputError) as invalid:
        workflow.run(INPUTS, broken, progress=False)
    assert str(broken) in str(invalid.value) and "line 2" in str(invalid.value), invalid.value
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([1, 2]))
    with pytest.raises(InvalidInputError):
        workflow.run(INPUTS, listed, progress=False)


def test_one_path_is_one_input(emulator: Emulator, tmp_path: Path) -> None:
    outcome = Workflow(emulator.cloud()).run(str(SAMPLES / "rover.nmea"), CONFIG, out=tmp_path, progress=False)
    assert outcome.succeeded
    outcome = Workflow(emulator.cloud()).run(SAMPLES / "rover.nmea", CONFIG, progress=False)
    assert outcome.succeeded
    with pytest.raises(TypeError):
        Workflow(emulator.cloud()).run(b"rover.nmea", CONFIG, progress=False)  # type: ignore[arg-type]


def test_the_trajectory_of_a_failed_processing_says_it_failed(emulator: Emulator, tmp_path: Path) -> None:
    from svc_sdk import SvcError

    empty = tmp_path / "empty.nmea"
    empty.write_text("no fix here\n")
    outcome = Workflow(emulator.cloud()).run([empty], CONFIG, out=tmp_path / "out", progress=False)
    assert outcome.failed, outcome
    with pytest.raises(SvcError) as caught:
        outcome.trajectory_rows()
    message = str(caught.value)
    assert "failed" in message and outcome.processing.id in message, message
    assert "out=" not in message
    assert isinstance(caught.value, FileNotFoundError)

    # raise_for_status makes the failed processing an exception, with what it said.
    from svc_sdk import InvalidInputError, ProcessingFailedError

    with pytest.raises(ProcessingFailedError) as failed:
        outcome.raise_for_status()
    assert isinstance(failed.value, InvalidInputError)
    assert failed.value.processing_id == outcome.processing.id
    assert failed.value.result == "failed"
    assert failed.value.processing_status == "processed"
    assert any("no usable GNSS input" in e for e in failed.value.errors), failed.value.errors
    assert "no usable GNSS input" in str(failed.value)
    good = Workflow(emulator.cloud()).run(INPUTS, CONFIG, progress=False)
    assert good.raise_for_status() is good


def test_what_an_interrupted_wait_says_is_true(tmp_path: Path) -> None:
    """A workflow waiting for the organization still goes on after its wait is
    interrupted: its report says it will start its processing unless canceled; once
    canceled, that none was started."""
    with Emulator(processing_time=30, device=False) as emulator:
        client = emulator.cloud()
        busy = Workflow(client).start(INPUTS, CONFIG, follow=False)
        busy.wait(timeout=30)
        task = Workflow(client).start(INPUTS, CONFIG, wait_for_organization=True)
        deadline = time.monotonic() + 30
        while task.container_id is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert task.container_id is not None
        said = task._n.left_in_the_cloud()
        assert "goes on" in said and "unless it is canceled" in said, said
        task.cancel()
        with pytest.raises(CanceledError):
            task.wait(timeout=30)
        said = task._n.left_in_the_cloud()
        assert said == f"container {task.container_id} was created; no processing was started", said
        assert len(list(client.list_processings())) == 1


CHILD_WAITING = """
import sys, time
from svc_sdk import Emulator, Workflow
with Emulator(processing_time=1.5, device=False) as emulator:
    client = emulator.cloud()
    Workflow(client).start(sys.argv[1:3], sys.argv[3], follow=False).wait(timeout=30)
    task = Workflow(client).start(sys.argv[1:3], sys.argv[3], wait_for_organization=True)
    def report(p):
        if p["stage"] == "waiting_for_organization":
            print("waiting", flush=True)
    task._progress = report
    try:
        task.wait()
    except KeyboardInterrupt as e:
        print("interrupted:", e, flush=True)
    # The organization frees: a workflow still going on would start its processing now.
    time.sleep(3)
    print("processings:", len(list(client.list_processings())), flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_in_a_wait_stops_what_was_not_started() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_WAITING, *map(str, INPUTS), str(CONFIG)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "waiting"
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        assert line.startswith("interrupted: container "), line
        assert line.endswith("was created; no processing was started"), line
        assert child.stdout.readline().strip() == "processings: 1"
        assert child.wait(timeout=20) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
