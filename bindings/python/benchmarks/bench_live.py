"""Records into arrays in batch mode (``svc_sdk.live``), against the offline decoder
(``svc_sdk.logs.read``) on the same log, in the same run.

The log: a data logger session of the emulated unit recording imuData, imuShort,
ekfNav, ekfEuler and ekfQuat every millisecond, repeated until it holds about
``--records`` records. The live side follows the file (``live.follow``) and takes
batches of Arrow tables until it ends (the stream ends once the file has been idle for
50 ms: that wait is part of its time); the offline side decodes the whole file into
its tables. Each is timed as the best of three runs.

    python bindings/python/benchmarks/bench_live.py              # about 2 million records
    python bindings/python/benchmarks/bench_live.py --quick      # a smoke run
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Callable

from svc_sdk import Emulator, live, logs

MESSAGES = ["imuData", "imuShort", "ekfNav", "ekfEuler", "ekfQuat"]


def session_bytes(seconds: float) -> bytes:
    """A session the emulated unit records for ``seconds``."""
    with Emulator(processing_time=0.5) as emulator, tempfile.TemporaryDirectory() as out:
        unit = emulator.unit()
        unit.login("setup", "")
        unit.write({"output": {"dataLogger": {"messages": {name: "1ms" for name in MESSAGES}}}})
        unit.logger_start()
        time.sleep(seconds)
        unit.logger_stop()
        files = unit.logger_files(emulator.info["device_ftp"])
        name = files.sessions()[-1]["name"]
        done = files.download(name, out)
        return b"".join(Path(path).read_bytes() for path in done["files"])


def best(call: Callable[[], int], repeats: int = 3) -> tuple[float, int]:
    """The best time of ``repeats`` calls, and what the call counted."""
    times = []
    count = 0
    for _ in range(repeats):
        started = time.perf_counter()
        count = call()
        times.append(time.perf_counter() - started)
    return min(times), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--records", type=int, default=2_000_000)
    args = parser.parse_args()
    wanted = 100_000 if args.quick else args.records

    session = session_bytes(0.5 if args.quick else 2.0)
    per_copy = logs.read(session).stats["records"]
    copies = max(1, -(-wanted // per_copy))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.bin"
        path.write_bytes(session * copies)
        size = path.stat().st_size

        def followed() -> int:
            with live.follow(path, capacity=65_536, idle_end=0.05) as stream:
                return sum(batch.records for batch in stream.batches(max_records=262_144))

        def offline() -> int:
            recording = logs.read(path)
            return sum(recording.table(name).num_rows for name in recording.names())

        live_seconds, live_rows = best(followed)
        offline_seconds, offline_rows = best(offline)

    print(f"log: {size / 1e6:.1f} MB, {live_rows:,} records ({copies} copies of a session)")
    print(f"{'':32} {'seconds':>9} {'records/s':>14}")
    print(f"{'live.follow, batches':32} {live_seconds:9.3f} {live_rows / live_seconds:14,.0f}")
    print(f"{'logs.read, whole tables':32} {offline_seconds:9.3f} {offline_rows / offline_seconds:14,.0f}")
    print(f"live / offline time: {live_seconds / offline_seconds:.2f}")
    if live_rows != offline_rows:
        raise SystemExit(f"the live side took {live_rows} rows, the offline side {offline_rows}")


if __name__ == "__main__":
    main()
