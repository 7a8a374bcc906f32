"""svc_sdk.aio: the same operations as awaitables; cancelling the awaiting task
cancels the operation."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from svc_sdk import CanceledError, ConflictError, Emulator, NotFoundError, WaitTimeoutError, WorkflowError
from svc_sdk.aio import AsyncCloudClient, AsyncUnit, AsyncWorkflow

SAMPLES = Path(__file__).resolve().parents[3] / "samples"
INPUTS = [SAMPLES / "rover.nmea", SAMPLES / "imu.csv"]
CONFIG = SAMPLES / "processing.json"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.5) as emulator:
        yield emulator


def test_cloud_operations_as_awaitables(emulator: Emulator) -> None:
    async def main() -> None:
        client = AsyncCloudClient.of(emulator.cloud(page_size=2))
        made = [await client.create_container() for _ in range(3)]
        listed = [c.id async for c in client.list_containers()]
        assert {c.id for c in made} <= set(listed)
        # Many at once on one loop.
        got = await asyncio.gather(*(client.get_container(c.id) for c in made))
        assert [g.id for g in got] == [c.id for c in made]
        for c in made:
            await client.delete_container(c.id)
        with pytest.raises(NotFoundError):
            await client.get_container(made[0].id)

    asyncio.run(main())


def test_a_workflow_awaited_and_cancelled(tmp_path: Path) -> None:
    with Emulator(processing_time=30, device=False) as emulator:
        client = AsyncCloudClient.of(emulator.cloud())

        async def main() -> str:
            started = asyncio.Event()
            seen: list[str] = []

            def report(p: dict[str, object]) -> None:
                seen.append(str(p["stage"]))
                if p["stage"] in ("queued", "running"):
                    started.set()

            task = asyncio.ensure_future(
                AsyncWorkflow(client).run(INPUTS, CONFIG, out=tmp_path, progress=report)
            )
            await asyncio.wait_for(started.wait(), 30)
            began = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.monotonic() - began < 1.0
            assert "uploading" in seen
            processings = [p async for p in client.list_processings()]
            assert len(processings) == 1
            return processings[0].id

        processing_id = asyncio.run(main())
        # The processing goes on in the cloud; the local work stopped.
        assert emulator.cloud().get_processing(processing_id).status in ("pending", "processing")
        assert list(tmp_path.iterdir()) == []


def test_a_quick_workflow_to_its_end(emulator: Emulator, tmp_path: Path) -> None:
    async def main() -> None:
        outcome = await AsyncWorkflow(emulator.cloud()).run(INPUTS, CONFIG, out=tmp_path)
        assert outcome.succeeded
        assert (tmp_path / "trajectory.csv").exists()

    asyncio.run(main())


def test_unit_as_awaitables(emulator: Emulator) -> None:
    async def main() -> None:
        unit = AsyncUnit.http(emulator.info["device_url"])
        serial = await AsyncUnit.serial_tcp(emulator.info["device_serial_tcp"])
        http_tree, serial_tree = await asyncio.gather(unit.settings(), serial.settings())
        assert http_tree == serial_tree
        assert (await unit.info())["serialNumber"]

    asyncio.run(main())


def test_the_async_api_has_every_name_of_the_sync_one() -> None:
    from svc_sdk import CloudClient, Unit, Workflow, WorkflowTask
    from svc_sdk.aio import AsyncWorkflowTask

    def public(cls: type) -> set[str]:
        return {n for n in dir(cls) if not n.startswith("_")}

    for sync, awaitable in [
        (CloudClient, AsyncCloudClient),
        (Unit, AsyncUnit),
        (Workflow, AsyncWorkflow),
        (WorkflowTask, AsyncWorkflowTask),
    ]:
        missing = public(sync) - public(awaitable)
        assert missing == set(), (awaitable.__name__, missing)


def test_each_operation_is_written_once_for_both_apis() -> None:
    """Every operation is one definition, which the blocking and the awaitable method
    both wrap (its arguments, checks and conversion), with its name and documentation."""
    from svc_sdk import CloudClient, Unit, cloud, unit
    from svc_sdk.aio import AsyncLoggerFiles
    from svc_sdk.unit import LoggerFiles

    for ops, sync, awaitable, count in [
        (cloud._ops, CloudClient, AsyncCloudClient, 23),
        (unit._ops, Unit, AsyncUnit, 22),
        (unit._logger_ops, LoggerFiles, AsyncLoggerFiles, 3),
    ]:
        names = [name for name in vars(ops) if not name.startswith("_")]
        assert len(names) == count, (ops.__name__, names)
        for name in names:
            definition = getattr(ops, name)
            blocking, awaited = getattr(sync, name), getattr(awaitable, name)
            assert blocking.__wrapped__ is definition, (sync.__name__, name)
            assert awaited.__wrapped__ is definition, (awaitable.__name__, name)
            assert blocking.__name__ == awaited.__name__ == name
            assert not asyncio.iscoroutinefunction(blocking)
            assert asyncio.iscoroutinefunction(awaited)


def test_an_async_workflow_task_waits_without_a_thread(emulator: Emulator, tmp_path: Path) -> None:
    async def main() -> None:
        loop_thread = threading.get_ident()
        called_on: set[int] = set()
        stages: list[str] = []

        def report(p: dict[str, object]) -> None:
            called_on.add(threading.get_ident())
            stages.append(str(p["stage"]))

        threads = threading.active_count()
        task = AsyncWorkflow(emulator.cloud()).start(INPUTS, CONFIG, out=tmp_path, progress=report)
        with pytest.raises(WaitTimeoutError):
            await task.wait(timeout=0.01)
        assert not task.done()
        outcome = await task.wait()
        assert threading.active_count() == threads  # no worker thread was used
        assert outcome.succeeded and task.done()
        assert task.processing_id == outcome.processing.id
        assert called_on == {loop_thread}
        assert stages[0] == "creating_container" and stages[-1] == "done"
        assert (tmp_path / "trajectory.csv").exists()

    asyncio.run(main())


def test_a_cancelled_await_stops_the_workflow_unless_detached(emulator: Emulator) -> None:
    """The task awaiting ``wait`` is the workflow's scope: cancelling it (here through
    ``wait_for``'s timeout) cancels the workflow; ``detach()`` keeps it running."""

    async def main(detached: bool) -> None:
        client = AsyncCloudClient.of(emulator.cloud())
        task = AsyncWorkflow(client).start(INPUTS, CONFIG, progress=None)
        if detached:
            task.detach()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(task.wait(), 0.05)
        if detached:
            assert (await task.wait(timeout=30)).succeeded
        else:
            with pytest.raises(CanceledError):
                await task.wait(timeout=10)
            # A processing it had started goes on in the cloud (one at a time): ended.
            if task.processing_id is not None:
                await client.cancel_processing(task.processing_id)

    for detached in (False, True):
        asyncio.run(main(detached))


def test_async_progress_like_the_sync_one(emulator: Emulator, tmp_path: Path) -> None:
    async def main() -> None:
        # `progress=True`: the bars (tqdm), as `Workflow.run` does by default.
        outcome = await AsyncWorkflow(emulator.cloud()).run(INPUTS, CONFIG, out=tmp_path, progress=True)
        assert outcome.succeeded

        # A callback that raises ends `run` with its error, and stops the workflow.
        def fails(p: dict[str, object]) -> None:
            if p["stage"] == "uploading":
                raise ValueError("callback failed")

        task = AsyncWorkflow(emulator.cloud()).start(INPUTS, CONFIG, progress=fails)
        with pytest.raises(ValueError):
            await AsyncWorkflow._to_the_end(task)
        with pytest.raises(CanceledError):
            await task.wait(timeout=10)

    asyncio.run(main())


def test_the_workflow_follow_timeout_ends_an_awaited_run(tmp_path: Path) -> None:
    with Emulator(processing_time=60, device=False) as emulator:
        async def main() -> None:
            began = time.monotonic()
            with pytest.raises(WaitTimeoutError) as caught:
                # (Bounded: a wait that swallowed this timeout would never return.)
                await asyncio.wait_for(
                    AsyncWorkflow(emulator.cloud()).run(INPUTS, CONFIG, out=tmp_path, follow_timeout=0.5), 30
                )
            assert isinstance(caught.value, WorkflowError), caught.value
            assert time.monotonic() - began < 10

        asyncio.run(main())


def test_a_lock_cancelled_while_taken_is_released(emulator: Emulator) -> None:
    async def main() -> None:
        unit = AsyncUnit.http(emulator.info["device_url"])
        other = AsyncUnit.http(emulator.info["device_url"])
        await unit.login("setup", "")
        await other.login("powerUser", "")
        arm = "aiding/gnss1/leverArmPrimary"

        async def hold() -> None:
            async with unit.locked():
                await asyncio.sleep(10)

        for delay in [0.0, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02] * 2:
            holder = asyncio.ensure_future(hold())
            await asyncio.sleep(delay)
            holder.cancel()
            with pytest.raises(asyncio.CancelledError):
                await holder
            # Released whenever the cancel came: another session may write.
            await other.set(arm, [0.0, 0.0, 0.0])

    asyncio.run(main())


def test_async_unit_serial_lock_and_reboot(emulator: Emulator) -> None:
    async def main() -> None:
        unit = await AsyncUnit.serial(emulator.info["device_serial_path"], 115_200)
        other = AsyncUnit.http(emulator.info["device_url"])
        await unit.login("setup", "")
        await other.login("powerUser", "")
        assert unit.user == "setup" and "setup" in repr(unit)
        arm = "aiding/gnss1/leverArmPrimary"
        async with unit.locked():
            with pytest.raises(ConflictError):
                await other.set(arm, [0.0, 0.0, 0.2])
        await other.set(arm, [0.0, 0.0, 0.2])  # released on leaving the block
        # Released also when the block fails.
        with pytest.raises(RuntimeError):
            async with unit.locked():
                raise RuntimeError("inside")
        await other.set(arm, [0.0, 0.0, 0.0])
        info = await other.reboot(wait=True, timeout=30)
        assert info is not None and info["serialNumber"]

    asyncio.run(main())


def test_a_cancelled_upload_stops_at_the_storage(tmp_path: Path) -> None:
    """The task awaiting ``upload`` is the upload's scope: cancelled (through
    ``wait_for``'s timeout), the upload stops, and the storage never gets the file."""
    local = tmp_path / "imu.bin"
    local.write_bytes(b"\x07" * (1024 * 1024))

    async def main(emulator: Emulator) -> None:
        client = AsyncCloudClient.of(emulator.cloud())
        container = await client.create_container(
            files=[{"path": "imu.bin", "type": "input", "size": 1024 * 1024}]
        )
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.upload(container, [local]), timeout=0.3)
        # Past the time the whole file would have taken (4 s at 256 KiB/s).
        await asyncio.sleep(4.5)
        after = await client.get_container(container.id)
        assert after.files[0].status == "pending"

    # A slow uplink: the file is still in flight when the task is cancelled.
    with Emulator(device=False, upload_bytes_per_second=256 * 1024) as slow:
        asyncio.run(main(slow))


def test_async_upload_and_pages(emulator: Emulator, tmp_path: Path) -> None:
    rover = SAMPLES / "rover.nmea"

    async def main() -> None:
        client = AsyncCloudClient.of(emulator.cloud())
        container = await client.create_container(
            files=[{"path": "rover.nmea", "type": "input", "size": rover.stat().st_size}]
        )
        report = await client.upload(container, [rover])
        assert report["bytes"] == rover.stat().st_size
        page, _ = await client.list_containers_page(0, 100)
        assert container.id in [c.id for c in page]
        await client.delete_container(container.id)

    asyncio.run(main())
