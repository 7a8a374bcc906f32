"""svc_sdk.aio: the same operations as awaitables; cancelling the awaiting task
cancels the operation."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from svc_sdk import Emulator, NotFoundError
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


def test_the_async_client_has_every_operation_of_the_sync_one() -> None:
    from svc_sdk import CloudClient, Unit

    def public(cls: type) -> set[str]:
        return {n for n in vars(cls) if not n.startswith("_") and callable(getattr(cls, n))}

    skip = {"from_env", "file", "of"}
    assert public(CloudClient) - skip <= public(AsyncCloudClient)
    assert public(Unit) - {"serial", "locked"} <= public(AsyncUnit) | {"serial"}


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
