"""Many sessions on a Dask cluster: examples/recordings_to_parquet.py run on a
LocalCluster of worker processes (so the tasks, and what they return, cross processes
pickled) converts a folder of sessions into one partitioned Parquet dataset; a
Recording pickles with pickle and with cloudpickle (what dask uses)."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

import cloudpickle  # type: ignore[import-untyped]  # noqa: E402
import pyarrow as pa  # type: ignore[import-untyped]  # noqa: E402
import pyarrow.dataset as ds  # type: ignore[import-untyped]  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from svc_sdk import logs  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import recordings_to_parquet as example  # noqa: E402

RECORDING = Path(__file__).resolve().parents[3] / "tests" / "data" / "recording.sbg"
GARBAGE = b"not an sbgECom frame " * 20


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two sessions in folders (one with a space in its name), one loose file, a file
    with garbage before its frames and its end cut, and one holding no recording."""
    root = tmp_path_factory.mktemp("sessions")
    data = RECORDING.read_bytes()
    (root / "line 7").mkdir()
    shutil.copy(RECORDING, root / "line 7" / "line 7.001")
    shutil.copy(RECORDING, root / "line 7" / "line 7.002")
    (root / "line8").mkdir()
    (root / "line8" / "line8.001").write_bytes(GARBAGE + data[:-200])
    (root / "line8" / "line8.002").write_bytes(GARBAGE)
    (root / "line8" / "notes.txt").write_text("not a recording")
    shutil.copy(RECORDING, root / "loose.001")
    return root


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    """Two worker processes of one thread: every task and result crosses processes."""
    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0"
    )
    with cluster, Client(cluster) as connected:  # type: ignore[no-untyped-call]
        yield connected


def test_sessions_become_one_partitioned_dataset(sessions: Path, client: Client, tmp_path: Path) -> None:
    output = tmp_path / "dataset"
    summary = example.convert(sessions, client, output)

    copy_1, copy_2 = sessions / "line 7" / "line 7.001", sessions / "line 7" / "line 7.002"
    damaged, empty = sessions / "line8" / "line8.001", sessions / "line8" / "line8.002"
    assert summary.files == 5 and summary.sessions == 3, summary
    assert list(summary.failed) == [str(empty)], summary.failed
    assert "not an sbgECom log" in summary.failed[str(empty)]

    # Records per message and faults: what svc_sdk.logs gives file by file.
    recordings = {path: logs.read(path) for path in (copy_1, copy_2, damaged, sessions / "loose.001")}
    records: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    for rec in recordings.values():
        records.update({name: rec.table(name).num_rows for name in rec.names()})
        faults.update({k: v for k, v in rec.stats.items() if k not in example.NOT_FAULTS})
    assert summary.records == dict(records)
    assert set(records) == {"ekfEuler", "ekfNav", "imuShort", "utcTime"}
    assert summary.faults == dict(faults)
    clean, cut = recordings[copy_1].stats, recordings[damaged].stats
    assert cut["skipped_bytes"] >= len(GARBAGE) > clean["skipped_bytes"]
    assert cut["truncated"] == 1 and cut["records"] < clean["records"]
    assert summary.faults["skipped_bytes"] >= len(GARBAGE) and summary.faults["truncated"] == 4

    # One dataset, partitioned by message then session, a part per file.
    assert (output / "message=ekfNav" / "session=line%207" / "part-line 7.001.parquet").is_file()
    assert not list(output.rglob("*.tmp"))
    dataset = ds.dataset(output, format="parquet", partitioning="hive")
    keys = dataset.to_table(columns=["message", "session"]).group_by(["message", "session"]).aggregate([])
    assert sorted(zip(keys["message"].to_pylist(), keys["session"].to_pylist())) == sorted(
        (message, session) for message in records for session in ("line 7", "line8", "loose")
    )
    for message, rows in records.items():
        assert dataset.count_rows(filter=ds.field("message") == message) == rows

    # The values: a sorted column over everything, and one file's table whole.
    nav = example.message_dataset(output, "ekfNav").to_table()
    expected = pa.concat_tables(rec.table("ekfNav") for rec in recordings.values())
    assert sorted(nav["latitude"].to_pylist()) == sorted(expected["latitude"].to_pylist())
    one = example.message_dataset(output, "imuShort").to_table(
        filter=(ds.field("session") == "line 7") & (ds.field("file") == "line 7.002")
    )
    assert one.drop_columns(["file", "session"]).equals(recordings[copy_2].table("imuShort"))
    assert one.schema.field("accelX").metadata == {b"unit": b"m.s^-2"}

    # Converting again overwrites the same parts.
    assert example.convert(sessions, client, output) == summary
    assert example.message_dataset(output, "ekfNav").count_rows() == records["ekfNav"]


def test_the_command_on_a_running_cluster(
    sessions: Path, client: Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = str(client.scheduler_info()["address"])
    code = example.main([str(sessions), str(tmp_path / "dataset"), "--scheduler", address])
    printed = capsys.readouterr()
    assert code == 1, printed  # a file holds no recording
    summary = json.loads(printed.out)
    assert summary["files"] == 5 and summary["records"]["ekfNav"] == 4 * 50, summary
    assert "not converted:" in printed.err and "line8.002" in printed.err


def test_a_recording_pickles_with_pickle_and_cloudpickle() -> None:
    for source in (str(RECORDING), RECORDING.read_bytes()):
        rec = logs.read(source)
        for dumps in (pickle.dumps, cloudpickle.dumps):
            again = pickle.loads(dumps(rec))
            assert again.names() == rec.names()
            for name in rec.names():
                assert again.table(name).equals(rec.table(name))
            assert again.stats == rec.stats


def test_import_svc_sdk_does_not_import_dask() -> None:
    code = "import sys, svc_sdk.logs; print([m for m in ('dask', 'distributed') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
