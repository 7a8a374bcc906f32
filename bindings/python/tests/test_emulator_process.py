"""``python -m svc_sdk.emulator``: the emulator in a process of its own, as a test that
restarts its own process uses it: the JSON line, a client reaching it, SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from svc_sdk import CloudClient, Unit


def test_a_standalone_emulator_process() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "svc_sdk.emulator", "--processing-seconds", "0.5",
         "--no-device-pty", "--device-password", "setup=pw-3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        info = json.loads(process.stdout.readline())
        client = CloudClient(
            base_url=info["base_url"],
            auth_url=info["auth_url"],
            notification_url=info["notification_url"],
            api_key=info["api_key"],
            api_secret=info["api_secret"],
            organization_id=info["organization_id"],
        )
        assert client.server_info()["version"]
        unit = Unit.http(info["device_url"])
        unit.login("setup", "pw-3")
        assert info["device_serial_path"] is None
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=20)
    assert code == 0, process.stderr.read() if process.stderr else ""


def test_bad_options_are_refused_by_name() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "svc_sdk.emulator", "--serial-fault-rate", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "serial_fault_rate" in run.stderr
    assert "Traceback" not in run.stderr
