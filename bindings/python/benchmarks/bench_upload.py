"""Peak memory of a 256 MiB upload to the emulator's storage: svc_sdk against
``requests`` and ``httpx``, in the same run, to the same storage, each in a fresh
Python process (its peak RSS is the figure; the RSS of a process that only imports
the same library is shown beside it).

    python bindings/python/benchmarks/bench_upload.py              # 256 MiB
    python bindings/python/benchmarks/bench_upload.py --mib 16     # a smoke run

Every upload must succeed (storage checks the signed form and the exact length), so a
tool that cheats on the body cannot win. Needs ``requests`` and ``httpx``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from svc_sdk import Emulator

CHILD = r"""
import json, resource, sys, time
tool, mode, path, form = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if tool == "svc_sdk":
    from svc_sdk import CloudClient
elif tool == "requests":
    import requests
else:
    import httpx
began = time.monotonic()
if mode == "upload":
    if tool == "svc_sdk":
        report = CloudClient.from_env().upload(form["container_id"], {form["name"]: path})
        assert report["bytes"] == form["size"], report
    else:
        with open(path, "rb") as f:
            files = {"file": (form["name"], f, "application/octet-stream")}
            if tool == "requests":
                answer = requests.post(form["url"], data=form["fields"], files=files)
            else:
                answer = httpx.post(form["url"], data=form["fields"], files=files, timeout=600)
        assert answer.status_code == 204, (answer.status_code, answer.text)
elapsed = time.monotonic() - began
print(json.dumps({"rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "seconds": elapsed}))
"""


def child(tool: str, mode: str, path: Path, form: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, tool, mode, str(path), json.dumps(form)],
        env=env, capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{tool} {mode} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", type=int, default=256)
    args = parser.parse_args()
    size = args.mib * 1024 * 1024
    with Emulator(device=False) as emulator, tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "survey.bin"
        with open(path, "wb") as f:
            block = os.urandom(1024 * 1024)
            for _ in range(args.mib):
                f.write(block)
        client = emulator.cloud()
        env = {**os.environ, **emulator.env}
        rows = []
        for tool in ("svc_sdk", "requests", "httpx"):
            container = client.create_container(files=[client.file(path.name, size=size)])
            [registered] = container.files
            info = registered.upload_info or {}
            form = {"container_id": container.id, "name": path.name, "size": size,
                    "url": info.get("url"), "fields": info.get("fields")}
            idle = child(tool, "import", path, form, env)
            upload = child(tool, "upload", path, form, env)
            if client.get_container(container.id).files[0].status != "ready":
                raise SystemExit(f"{tool}: storage did not accept the upload")
            rows.append((tool, upload["rss_kib"] / 1024, idle["rss_kib"] / 1024,
                         size / 2**20 / upload["seconds"]))
            client.delete_container(container.id)
    print(f"Upload of {args.mib} MiB to the emulator's storage (peak RSS of the process)")
    print(f"{'tool':<10} {'peak RSS':>10} {'import only':>12} {'throughput':>12}")
    for tool, rss, idle, speed in rows:
        print(f"{tool:<10} {rss:>7.1f} MiB {idle:>8.1f} MiB {speed:>8.0f} MiB/s")


if __name__ == "__main__":
    main()
