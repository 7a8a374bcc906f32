"""The smoke test of an installed svc_sdk (`cargo xtask dist --check`): the package
imports with the expected version, a settings diff, and the in-process emulator running
a whole workflow on the sample survey. Standard library only, so that it runs on a bare
interpreter (an arm64 CPython under qemu-user).

usage: python smoke.py VERSION SAMPLES_DIR
"""

import platform
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    version, samples = sys.argv[1], Path(sys.argv[2])
    started = time.monotonic()
    import svc_sdk
    from svc_sdk import Emulator, Workflow, settings

    where = f"{platform.machine()} {platform.python_implementation()} {platform.python_version()}"
    assert svc_sdk.__version__ == version, f"svc_sdk {svc_sdk.__version__}, expected {version}"
    print(f"import svc_sdk {svc_sdk.__version__} on {where}: {time.monotonic() - started:.2f} s")

    old = {"output": {"comA": {"messages": {"imuShort": "off", "status": "1s"}}}}
    new = {"output": {"comA": {"messages": {"imuShort": "10ms", "status": "1s"}}}}
    patch = settings.diff(old, new)
    assert patch.changed == ["output/comA/messages/imuShort"], patch.changed
    assert patch.tree == {"output": {"comA": {"messages": {"imuShort": "10ms"}}}}, patch.tree
    assert settings.apply(old, patch.to_write()) == new
    print("settings diff: output/comA/messages/imuShort")

    started = time.monotonic()
    with tempfile.TemporaryDirectory() as out, Emulator(processing_time=0.5, device=False) as emulator:
        outcome = Workflow(emulator.cloud()).run(
            [samples / "rover.nmea", samples / "imu.csv"],
            samples / "processing.json",
            name="smoke",
            out=out,
            progress=False,
        )
        assert outcome.succeeded, outcome
        names = sorted(p.name for p in outcome.downloaded)
        assert names == ["report.json", "trajectory.csv", "trajectory.geojson"], names
        rows = outcome.trajectory_rows()
        assert rows and {"time", "latitude", "longitude", "height"} <= set(rows[0]), rows[:1]
    print(f"workflow on the emulator: {len(rows)} trajectory rows in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
