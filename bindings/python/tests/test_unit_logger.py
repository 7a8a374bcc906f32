"""The unit's recordings over FTP from Python (``Unit.logger_files``) against the
emulated unit: list, download, read as tables, delete with the right, typed errors,
the asyncio form and calls from several threads. Each test records its own session."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from svc_sdk import (
    AuthenticationError,
    ConflictError,
    Emulator,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    Unit,
    logs,
)
from svc_sdk.aio import AsyncUnit


@pytest.fixture()
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.5) as emulator:
        unit = emulator.unit()
        unit.logger_start()
        time.sleep(0.3)
        unit.logger_stop()
        yield emulator


def _ftp(emulator: Emulator) -> str:
    address: str = emulator.info["device_ftp"]
    return address


def test_a_session_is_listed_downloaded_and_read_as_tables(
    emulator: Emulator, tmp_path: Path
) -> None:
    files = emulator.unit().logger_files(_ftp(emulator))
    assert files.user == "viewer"
    assert files.address == _ftp(emulator)
    [session] = files.sessions()
    assert session["name"] == "session"
    assert session["recording"] is False
    assert session["files"][0]["name"] == "session.001"
    assert session["size"] == sum(f["size"] for f in session["files"]) > 0

    done = files.download("session", tmp_path)
    assert done["bytes"] == session["size"]
    assert done["resumed"] == 0 and done["deleted"] is False
    path = tmp_path / "session" / "session.001"
    assert done["files"] == [str(path)]
    assert path.stat().st_size == session["size"]
    assert not list(tmp_path.glob("session/*.part"))

    # From the unit's session to a table: its navigation on the unit's path.
    recording = logs.read(path)
    assert "ekfNav" in recording.names()
    nav = recording.table("ekfNav")
    assert nav.num_rows > 0
    latitude = nav.column("latitude").to_pylist()
    assert all(48.8 < value < 48.9 for value in latitude)
    assert recording.stats["bad_crc"] == 0

    # One file by name; names that are not a session, and missing ones, are typed.
    files.download("session/session.001", tmp_path / "one")
    with pytest.raises(NotFoundError):
        files.download("nope", tmp_path)
    with pytest.raises(InvalidInputError):
        files.download("../etc", tmp_path)


def test_the_session_says_it_is_being_recorded(emulator: Emulator) -> None:
    unit = emulator.unit()
    files = unit.logger_files(_ftp(emulator))
    unit.logger_start()
    try:
        [session] = files.sessions()
        assert session["recording"] is True
    finally:
        unit.logger_stop()


def test_deleting_needs_the_write_right_and_the_sessions_user_is_used(
    emulator: Emulator, tmp_path: Path
) -> None:
    viewer = emulator.unit().logger_files(_ftp(emulator))
    with pytest.raises(PermissionDeniedError) as refused:
        viewer.delete("session")
    assert refused.value.status == 550
    # With delete_after, a viewer's download is kept and nothing is deleted.
    with pytest.raises(PermissionDeniedError):
        viewer.download("session", tmp_path, delete_after=True)
    assert (tmp_path / "session" / "session.001").exists()
    assert len(viewer.sessions()) == 1

    operator_unit = emulator.unit()
    operator_unit.login("operator", "")
    operator = operator_unit.logger_files(_ftp(emulator))
    assert operator.user == "operator"
    done = operator.download("session", tmp_path / "again", delete_after=True)
    assert done["deleted"] is True
    assert (tmp_path / "again" / "session" / "session.001").read_bytes() == (
        tmp_path / "session" / "session.001"
    ).read_bytes()
    assert viewer.sessions() == []
    with pytest.raises(NotFoundError):
        operator.delete("session")


def test_a_recording_session_is_not_deleted(emulator: Emulator, tmp_path: Path) -> None:
    unit = emulator.unit()
    unit.logger_start()
    try:
        operator = unit.logger_files(_ftp(emulator), user="operator", password="")
        # Grown since its download, or refused as the session being written.
        with pytest.raises((ConflictError, PermissionDeniedError)):
            operator.download("session", tmp_path, delete_after=True)
    finally:
        unit.logger_stop()
    assert [s["name"] for s in operator.sessions()] == ["session"]


def test_wrong_passwords_and_missing_addresses_are_typed(emulator: Emulator) -> None:
    unit = emulator.unit()
    files = unit.logger_files(_ftp(emulator), user="factory", password="hunter2-secret")
    with pytest.raises(AuthenticationError) as refused:
        files.sessions()
    assert refused.value.status == 530
    assert "hunter2" not in f"{refused.value} {refused.value!r} {files!r}"
    with pytest.raises(InvalidInputError):
        unit.logger_files(_ftp(emulator), user="root")
    with pytest.raises(InvalidInputError):
        unit.logger_files(_ftp(emulator), password="lonely")

    # A unit over a serial link has no host of its own: the address is needed.
    serial = emulator.unit_serial_tcp()
    with pytest.raises(InvalidInputError):
        serial.logger_files()
    [session] = serial.logger_files(_ftp(emulator)).sessions()
    assert session["recording"] is False


def test_the_default_address_is_port_21_of_the_units_host(emulator: Emulator) -> None:
    unit = Unit.http("http://127.0.0.1:1")
    assert unit.logger_files().address == "127.0.0.1:21"


def test_awaitable_and_from_threads(emulator: Emulator, tmp_path: Path) -> None:
    async def main() -> None:
        files = AsyncUnit(emulator.unit()).logger_files(_ftp(emulator))
        sessions = await files.sessions()
        done = await files.download(sessions[0]["name"], tmp_path / "aio")
        assert done["bytes"] == sessions[0]["size"]

    asyncio.run(main())

    files = emulator.unit().logger_files(_ftp(emulator))
    with ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(lambda i: files.download("session", tmp_path / f"t{i}")["bytes"], range(4))
        )
    assert len(set(results)) == 1
