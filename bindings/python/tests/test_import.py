from __future__ import annotations

import subprocess
import sys

HEAVY = ["pandas", "numpy", "tqdm", "fastapi", "flask", "starlette", "werkzeug", "pydantic"]


def test_import_is_light() -> None:
    code = (
        "import sys, time\n"
        "start = time.perf_counter()\n"
        "import svc_sdk\n"
        "elapsed = time.perf_counter() - start\n"
        f"print(elapsed, [name for name in {HEAVY!r} if name in sys.modules])\n"
    )
    runs = [subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
            for _ in range(3)]
    best = min(float(run.split()[0]) for run in runs)
    assert all(run.split(maxsplit=1)[1].strip() == "[]" for run in runs), runs
    # The goal is 150 ms; a loaded test machine gets some slack here (xtask checks 150 ms).
    assert best < 0.5, best
