"""svc_sdk.logs: a unit's recording (tests/data/recording.sbg, what svc-logs' fixture
test writes) decoded natively and handed to pyarrow and pandas through the Arrow C
stream interface; the GIL released while decoding; a Recording pickles."""

from __future__ import annotations

import io
import pickle
import threading
from pathlib import Path

import pytest

import svc_sdk
from svc_sdk import logs
from svc_sdk.errors import InvalidInputError, NotFoundError

RECORDING = Path(__file__).resolve().parents[3] / "tests" / "data" / "recording.sbg"


def test_a_recording_as_tables() -> None:
    rec = logs.read(RECORDING)
    assert rec.names() == ["ekfEuler", "ekfNav", "imuShort", "utcTime"]
    nav = rec.table("ekfNav")
    assert nav.num_rows == 50
    assert nav.column_names[0] == "timestamp"
    assert nav.column("timestamp")[0].as_py() == 1_000_000
    assert rec.table("imuShort").num_rows == 500
    stats = rec.stats
    assert stats["bad_crc"] == 1 and stats["truncated"] == 1, stats
    assert stats["records"] == 605, stats
    assert stats["skipped_bytes"] > 0


def test_a_dataframe_and_the_same_from_bytes_and_files() -> None:
    frame = logs.read(RECORDING).frame("ekfNav")
    assert len(frame) == 50
    assert list(frame.columns)[0] == "timestamp"
    data = RECORDING.read_bytes()
    from_bytes = logs.read(data)
    with open(RECORDING, "rb") as file:
        from_file = logs.read(file)
    from_buffer = logs.read(io.BytesIO(data))
    for other in (from_bytes, from_file, from_buffer):
        assert other.names() == logs.read(str(RECORDING)).names()
        assert other.table("ekfNav").equals(logs.read(RECORDING).table("ekfNav"))


def test_a_sessions_files_read_as_one_stream(tmp_path: Path) -> None:
    # The unit splits a session anywhere between frames; cut here mid-frame, the files
    # still read as the one stream they were written as.
    data = RECORDING.read_bytes()
    first, second = tmp_path / "mission.001", tmp_path / "mission.002"
    first.write_bytes(data[: len(data) // 3])
    second.write_bytes(data[len(data) // 3 :])
    whole = logs.read(RECORDING)
    split = logs.read([first, str(second)])
    assert split.names() == whole.names()
    for name in whole.names():
        assert split.table(name).equals(whole.table(name)), name
    assert split.stats == whole.stats
    again = pickle.loads(pickle.dumps(split))
    assert again.table("ekfNav").equals(whole.table("ekfNav"))
    with pytest.raises(NotFoundError, match="mission.003"):
        logs.read([first, tmp_path / "mission.003"])


def test_errors_are_typed() -> None:
    with pytest.raises(InvalidInputError, match="not an sbgECom log"):
        logs.read(b"this is not a recording at all" * 100)
    with pytest.raises(NotFoundError):
        logs.read("/nonexistent/session.001")
    with pytest.raises(NotFoundError, match="ekfNav"):
        logs.read(RECORDING).table("gps1Raw")
    assert isinstance(NotFoundError("x"), svc_sdk.SvcError)
    with pytest.raises(TypeError):
        logs.read(io.StringIO("text"))  # type: ignore[arg-type]


def test_a_recording_pickles_as_its_source() -> None:
    for source in (str(RECORDING), RECORDING.read_bytes()):
        rec = logs.read(source)
        again = pickle.loads(pickle.dumps(rec))
        assert again.names() == rec.names()
        assert again.table("utcTime").equals(rec.table("utcTime"))


def test_decoding_releases_the_gil() -> None:
    data = RECORDING.read_bytes() * 200  # about 5 MB
    done = threading.Event()
    ticks = 0

    def decode() -> None:
        logs.read(data)
        done.set()

    worker = threading.Thread(target=decode)
    worker.start()
    while not done.is_set():
        ticks += 1
        done.wait(0.0005)
    worker.join()
    assert ticks > 1, "the main thread ran while the recording was decoded"
