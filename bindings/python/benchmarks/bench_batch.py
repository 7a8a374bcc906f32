"""A batch of missions against the emulator, three ways in the same run: one
``Workflow.run`` after another, ``asyncio.gather`` of ``AsyncWorkflow.run`` with
``wait_for_organization=True`` (every mission at once, in line for the organization),
and ``Workflow.run_many``. The service (and the emulator) runs one processing at a time
per organization, so the floor is the missions' processings end to end.

    python bindings/python/benchmarks/bench_batch.py            # 20 missions of 2 s
    python bindings/python/benchmarks/bench_batch.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Callable

from svc_sdk import Emulator, Workflow
from svc_sdk.aio import AsyncWorkflow

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples"
INPUTS = [SAMPLES / "rover.nmea", SAMPLES / "imu.csv"]
CONFIG = SAMPLES / "processing.json"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2 missions of 0.3 s")
    args = parser.parse_args()
    missions, seconds = (2, 0.3) if args.quick else (20, 2.0)

    with Emulator(processing_time=seconds, device=False) as emulator:
        client = emulator.cloud()
        workflow = Workflow(client)

        def one_after_another() -> None:
            for i in range(missions):
                workflow.run(INPUTS, CONFIG, name=f"loop {i}", progress=False)

        def gathered() -> None:
            async def all_at_once() -> None:
                aw = AsyncWorkflow(client)
                await asyncio.gather(
                    *(aw.run(INPUTS, CONFIG, name=f"gather {i}", wait_for_organization=True)
                      for i in range(missions))
                )

            asyncio.run(all_at_once())

        def run_many() -> None:
            results = workflow.run_many(
                {f"batch {i}": INPUTS for i in range(missions)}, CONFIG, progress=False
            )
            assert all(not isinstance(r, Exception) for r in results.values()), results

        cases: list[tuple[str, Callable[[], None]]] = [
            ("one Workflow.run after another", one_after_another),
            ("asyncio.gather, wait_for_organization", gathered),
            ("Workflow.run_many", run_many),
        ]
        floor = missions * seconds
        print(f"{missions} missions, processings of {seconds} s (floor {floor:.1f} s)")
        for label, case in cases:
            began = time.perf_counter()
            case()
            took = time.perf_counter() - began
            print(f"  {label:<40} {took:6.2f} s  ({took / floor:.2f}x the floor)")


if __name__ == "__main__":
    main()
