"""Process the sample survey on the local emulator, read the trajectory, configure
the emulated unit and compare two settings exports — the quickstart notebook as a
script (checked by ``mypy --strict``).

Runs from any folder: the sample survey ships with the package (``svc_sdk.samples``).
"""

from __future__ import annotations

import tempfile

from svc_sdk import Emulator, Workflow, samples, settings


def main() -> None:
    with Emulator(processing_time=1.0) as emulator, tempfile.TemporaryDirectory() as out:
        # 1. The whole workflow: upload, process in the (emulated) cloud, download.
        outcome = Workflow(emulator.cloud()).run(
            samples.path("rover.nmea"),
            samples.path("processing.json"),
            out=out,
            progress=False,
        )
        print(outcome.processing.status, outcome.processing.processing_result)
        rows = outcome.trajectory_rows()
        print(f"{len(rows)} trajectory points, first at {rows[0]['time']}")

        # 2. Configure the emulated unit: only what differs is written.
        unit = emulator.unit()
        before = unit.export_settings()
        report = unit.apply({"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}}})
        print("changed:", report["changed"])

        # 3. Compare two exports offline.
        patch = settings.diff(before, unit.export_settings())
        print("diff:", patch.changed)


if __name__ == "__main__":
    main()
