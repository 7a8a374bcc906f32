"""The unit's live output logs from Python (``svc_sdk.live``) against the emulated
unit: records and batches from the serial link beside other calls, dropped frames
reported, UDP and a growing file as sources, ``wait_ready``, the asyncio form and
threads."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_sdk import (
    Emulator,
    InvalidInputError,
    NotFoundError,
    Unit,
    WaitTimeoutError,
    live,
    logs,
)
from svc_sdk.aio import AsyncLiveStream, AsyncUnit

_OFF = ["status", "imuData", "imuShort", "ekfEuler", "ekfQuat", "gps1Pos", "utcTime", "ekfNav"]


def _port_a(emulator: Emulator, **messages: str) -> None:
    unit = emulator.unit()
    unit.login("setup", "")
    wanted = {name: "off" for name in _OFF}
    wanted.update(messages)
    unit.write({"output": {"comA": {"messages": wanted}}})


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.5) as emulator:
        yield emulator


@pytest.fixture()
def serial(emulator: Emulator) -> Unit:
    _port_a(emulator, ekfNav="10ms", utcTime="100ms")
    return emulator.unit_serial_tcp()


def test_records_come_in_order_while_the_session_calls_the_unit(serial: Unit) -> None:
    with serial.subscribe(["ekfNav"]) as stream:
        assert stream.messages == ["ekfNav"]
        assert stream.source.startswith("serial bridge")
        records = []
        for record in stream:
            records.append(record)
            if len(records) % 10 == 0:
                assert serial.info()["serialNumber"]
            if len(records) == 50:
                break
    stamps = [r["timestamp"] for r in records]
    assert all(r["message"] == "ekfNav" for r in records)
    assert stamps == sorted(stamps)
    assert all(9_000 <= b - a <= 11_000 for a, b in zip(stamps, stamps[1:]))
    assert all(48.8 < r["latitude"] < 48.9 for r in records)
    assert stream.stats["records"] == 50
    assert stream.stats["dropped"] == 0


def test_batches_are_arrow_tables_and_dataframes(serial: Unit) -> None:
    with serial.subscribe("ekfNav,utcTime") as stream:
        time.sleep(0.3)
        batch = stream.batch(timeout=2.0)
    assert batch.records >= 20
    assert set(batch.names()) <= {"ekfNav", "utcTime"}
    nav = batch.table("ekfNav")
    assert nav.num_rows >= 20
    assert nav.column_names[0] == "timestamp"
    assert "latitude" in nav.column_names
    frame = batch.frame("ekfNav")
    assert len(frame) == nav.num_rows
    with pytest.raises(NotFoundError):
        batch.table("imuData")


def test_a_consumer_that_falls_behind_is_told(serial: Unit) -> None:
    with serial.subscribe(["ekfNav"], capacity=8) as stream:
        time.sleep(0.4)
        with pytest.warns(live.DroppedFramesWarning) as warned:
            for _ in range(9):
                next(stream)
        dropped = sum(w.message.frames for w in warned if isinstance(w.message, live.DroppedFramesWarning))
        assert dropped > 10
        assert stream.stats["dropped"] >= dropped
        # In batches, counted in the batch.
        time.sleep(0.3)
        batch = stream.batch(timeout=1.0)
        assert batch.dropped > 0 and batch.records <= 8


def test_bad_subscriptions_are_refused(emulator: Emulator, serial: Unit) -> None:
    with pytest.raises(InvalidInputError):
        serial.subscribe(["ekfNavv"])
    with pytest.raises(InvalidInputError):
        serial.subscribe(capacity=0)
    with pytest.raises(InvalidInputError, match="UDP"):
        emulator.unit().subscribe()
    with pytest.raises(NotFoundError):
        live.follow("/nonexistent/session.bin")


def test_a_recorded_session_followed_reads_as_the_live_stream(
    emulator: Emulator, tmp_path: Path
) -> None:
    unit = emulator.unit()
    unit.logger_start()
    time.sleep(0.3)
    unit.logger_stop()
    files = unit.logger_files(emulator.info["device_ftp"])
    name = files.sessions()[-1]["name"]
    done = files.download(name, tmp_path)
    path = done["files"][0]
    recorded = logs.read(path)
    with live.follow(path, idle_end=0.3) as stream:
        records = list(stream)
    assert len(records) == recorded.stats["records"] > 0
    assert sum(r["message"] == "ekfNav" for r in records) == recorded.table("ekfNav").num_rows
    # And as batches, whole.
    with live.follow(path, capacity=16, idle_end=0.3) as stream:
        rows = sum(batch.records for batch in stream.batches(max_records=100))
    assert rows == len(records)


def test_udp_datagrams_of_an_ethernet_output(emulator: Emulator) -> None:
    with live.udp("127.0.0.1:0", ["ekfNav"]) as stream:
        address = stream.local_address
        assert address is not None
        port = int(address.rsplit(":", 1)[1])
        unit = emulator.unit()
        unit.login("setup", "")
        unit.write(
            {
                "ports": {"eth2": {"protocol": "udp", "udpIp": "127.0.0.1", "udpOutPort": port}},
                "output": {"eth2": {"messages": {"ekfNav": "10ms"}}},
            }
        )
        unit.save()
        unit.reboot(wait=True, timeout=30)
        record = stream.next(timeout=10.0)
        assert record is not None and record["message"] == "ekfNav"
        unit.login("setup", "")
        unit.write({"output": {"eth2": {"messages": {"ekfNav": "off"}}}})


def test_wait_ready_and_what_was_missing() -> None:
    with Emulator(processing_time=0.5, device_startup_seconds=1.0) as emulator:
        _port_a(emulator, gps1Pos="100ms", ekfNav="50ms", utcTime="100ms")
        serial = emulator.unit_serial_tcp()
        ready = serial.wait_ready(timeout=20)
        assert ready["filter"] == "NavPosition"
        assert ready["utc_valid"] is True
        assert ready["fix"] in ("single", "rtkFixed")
        with pytest.raises(InvalidInputError):
            serial.wait_ready(fix="great")
    with Emulator(processing_time=0.5, device_startup_seconds=600) as emulator:
        _port_a(emulator, gps1Pos="100ms", ekfNav="50ms", utcTime="100ms")
        serial = emulator.unit_serial_tcp()
        with pytest.raises(WaitTimeoutError) as late:
            serial.wait_ready(fix="rtkFixed", timeout=0.5)
        missing: list[str] = late.value.missing  # type: ignore[attr-defined]
        assert len(missing) == 3
        assert "no solution" in missing[0]


def test_asyncio_iteration_cancellation_and_readiness(serial: Unit) -> None:
    async def main() -> None:
        unit = AsyncUnit(serial)
        async with unit.subscribe(["ekfNav"]) as stream:
            got = []
            async for record in stream:
                got.append(record)
                if len(got) == 5:
                    break
            assert [r["message"] for r in got] == ["ekfNav"] * 5
            # A cancelled wait takes nothing: the stream goes on.
            quiet = AsyncLiveStream(live.udp("127.0.0.1:0"))
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(quiet.__anext__(), 0.1)
            quiet.close()
            batch = await stream.batch(timeout=1.0)
            assert batch.records > 0
        ready = await unit.wait_ready(fix=None, timeout=5)
        assert ready["utc_valid"] is True

    asyncio.run(main())


def test_a_stream_read_on_a_thread_beside_calls_and_closed_from_another(serial: Unit) -> None:
    stream = serial.subscribe(["ekfNav"])
    seen: list[dict[str, Any]] = []

    def read() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for record in stream:
                seen.append(record)

    reader = threading.Thread(target=read)
    reader.start()
    for _ in range(5):
        assert serial.info()["serialNumber"]
    time.sleep(0.3)
    stream.close()
    reader.join(timeout=10)
    assert not reader.is_alive(), "close() ends the iteration"
    assert len(seen) >= 10
