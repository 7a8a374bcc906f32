"""Convert a folder of a unit's recording sessions into one partitioned Parquet dataset,
each file decoded on a worker of a Dask cluster.

    python examples/recordings_to_parquet.py sessions/ dataset/                  # a LocalCluster
    python examples/recordings_to_parquet.py sessions/ dataset/ --scheduler tcp://head:8786

``sessions/`` holds sessions as the data logger writes them: a folder per session
(``sessions/mission/mission.001``, ``.002``, ...), or loose files (``sessions/mission.001``,
whose session is ``mission``). The dataset is hive-partitioned by message type, then by
session (URL-quoted), one part per source file::

    dataset/message=ekfNav/session=mission/part-mission.001.parquet

with the columns of ``svc_sdk.logs`` tables (``timestamp``, the message's columns with
their units as field metadata, ``utcTime``) and ``file``, the source file's name. Each
file is decoded on its own: ``timestamp`` is extended over the unit's 32-bit clock wrap
within a file, and ``utcTime`` is null until the file's first valid ``utcTime`` record;
order a session's rows by ``file``, then ``timestamp``. Read one message type back with
:func:`message_dataset` (message types have different columns).

Workers read the files by path and write their parts themselves; only small summaries
come back to the client, so its memory does not grow with the data. The same code runs
on a cluster of several machines: start ``dask scheduler`` on one and ``dask worker
tcp://head:8786`` on each, install the client's versions of Python, ``svc-sdk[arrow]``
and ``dask[distributed]`` on every worker, and mount the sessions and the output folder at the same
paths on every machine (shared storage: NFS, SMB, a cluster file system). Run as a
script, this file's functions travel with the tasks; imported from other code, the
workers must be able to import it as well (installed with that code, or
``client.upload_file(recordings_to_parquet.__file__)``). Converting again overwrites
the same parts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, TypedDict, Union
from urllib.parse import quote

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.dataset as ds  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from distributed import Client, LocalCluster, as_completed

from svc_sdk import SvcError, logs

#: A recording file: the data logger's ``.001``, ``.002``, ... (or ``.sbg``).
RECORDING_FILE = re.compile(r".+\.(\d{3}|sbg)")

#: The counters of ``Recording.stats`` that are not faults.
NOT_FAULTS = {"bytes", "frames", "records"}


class FileResult(TypedDict):
    """What a worker sends back for one file (a dict: it pickles anywhere)."""

    path: str
    records: dict[str, int]
    stats: dict[str, int]
    error: Optional[str]


@dataclass
class Summary:
    """What a conversion did: files and sessions read, records per message type, the
    decoders' fault counters summed over files, and the files that held no recording
    (path: reason)."""

    files: int = 0
    sessions: int = 0
    records: dict[str, int] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def find_sessions(folder: Path) -> list[tuple[str, Path]]:
    """The recording files under ``folder`` with their session's name, sorted: files in
    a subfolder belong to the session of the folder's name, loose files to the session
    of their name without the extension."""
    found: list[tuple[str, Path]] = []
    for entry in sorted(folder.iterdir()):
        if entry.is_dir():
            found += [(entry.name, f) for f in sorted(entry.iterdir()) if _is_recording(f)]
        elif _is_recording(entry):
            found.append((entry.stem, entry))
    parts = Counter((session, path.name) for session, path in found)
    clashes = [f"{session}/{name}" for (session, name), n in parts.items() if n > 1]
    if clashes:
        raise ValueError(f"files of the same name in one session: {', '.join(clashes)}")
    return found


def convert_file(path: str, session: str, output: str) -> FileResult:
    """Runs on a worker: decodes one file and writes a part per message type into the
    dataset at ``output``. A file that holds no recording is reported, not raised."""
    try:
        recording = logs.read(path)
    except SvcError as error:
        return FileResult(path=path, records={}, stats={}, error=str(error))
    name = os.path.basename(path)
    records: dict[str, int] = {}
    for message in recording.names():
        table = recording.table(message)
        table = table.append_column("file", pa.repeat(pa.scalar(name), table.num_rows))
        folder = Path(output) / _partition("message", message) / _partition("session", session)
        folder.mkdir(parents=True, exist_ok=True)
        # Written beside, then renamed: a reader never sees half a part (names starting
        # with "." are not read as parts of the dataset).
        temporary = folder / f".part-{name}.parquet.tmp"
        pq.write_table(table, temporary)
        os.replace(temporary, folder / f"part-{name}.parquet")
        records[message] = table.num_rows
    return FileResult(path=path, records=records, stats=dict(recording.stats), error=None)


def convert(sessions: Union[str, Path], client: Union[Client, str], output: Union[str, Path]) -> Summary:
    """Converts every session under ``sessions`` into one Parquet dataset at ``output``,
    a task per file on the Dask cluster of ``client`` (a ``Client``, or a scheduler's
    address). Paths are made absolute here and read by the workers: on a cluster of
    several machines they must name the same shared storage on every one."""
    if isinstance(client, str):
        with Client(client) as connected:  # type: ignore[no-untyped-call]
            return convert(sessions, connected, output)
    files = find_sessions(Path(sessions).resolve())
    target = str(Path(output).resolve())
    futures = client.map(
        convert_file,
        [str(path) for _, path in files],
        [session for session, _ in files],
        [target] * len(files),
        pure=False,  # files change between runs: never reuse an earlier result
    )
    summary = Summary(files=len(files), sessions=len({session for session, _ in files}))
    records: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    for _, result in as_completed(futures, with_results=True):  # type: ignore[no-untyped-call]
        if result["error"] is not None:
            summary.failed[result["path"]] = result["error"]
        records.update(result["records"])
        faults.update({k: v for k, v in result["stats"].items() if k not in NOT_FAULTS})
    summary.records = dict(sorted(records.items()))
    summary.faults = dict(sorted(faults.items()))
    return summary


def message_dataset(output: Union[str, Path], message: str) -> ds.Dataset:
    """One message type of a converted dataset, with ``session`` as a column (a string,
    whatever the sessions' names look like)."""
    session = ds.partitioning(pa.schema([("session", pa.string())]), flavor="hive")
    folder = Path(output) / _partition("message", message)
    return ds.dataset(folder, format="parquet", partitioning=session)


def _is_recording(path: Path) -> bool:
    return path.is_file() and RECORDING_FILE.fullmatch(path.name) is not None


def _partition(key: str, value: str) -> str:
    """A hive partition's folder, its value URL-quoted (as pyarrow writes and reads them)."""
    return f"{key}={quote(value, safe='')}"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Converts recording sessions into a Parquet dataset.")
    parser.add_argument("sessions", help="folder of sessions (folders of .001, .002, ... files; or loose files)")
    parser.add_argument("output", help="folder of the Parquet dataset")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a running cluster (else a LocalCluster)")
    parser.add_argument("--workers", type=int, help="worker processes of the LocalCluster")
    args = parser.parse_args(argv)
    if args.scheduler:
        summary = convert(args.sessions, args.scheduler, args.output)
    else:
        cluster = LocalCluster(n_workers=args.workers)  # type: ignore[no-untyped-call]
        with cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
            summary = convert(args.sessions, client, args.output)
    print(json.dumps(vars(summary), indent=2))
    for path, reason in summary.failed.items():
        print(f"not converted: {path}: {reason}", file=sys.stderr)
    return 1 if summary.failed else 0


if __name__ == "__main__":
    sys.exit(main())
