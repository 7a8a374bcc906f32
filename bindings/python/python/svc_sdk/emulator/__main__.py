"""``python -m svc_sdk.emulator``: the emulator in a process of its own, for tests that
restart their own process (a resume after a restart) or code in another language.

It takes the options of the ``svc emulator`` command (``--help`` lists them), prints the
same JSON line of addresses and credentials on stdout, then serves until SIGINT or
SIGTERM (exit 0)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import Any, Optional, Sequence

from svc_sdk.emulator import Emulator
from svc_sdk.errors import SvcError


def _pairs(entries: list[str], flag: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for entry in entries:
        name, sep, value = entry.partition("=")
        if not sep:
            raise SystemExit(f"{flag} takes NAME=VALUE, got {name!r}")
        pairs[name] = value
    return pairs


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m svc_sdk.emulator",
        description="The local emulator of the cloud service and of units; prints one "
        "JSON line of addresses and credentials, then serves until SIGINT or SIGTERM.",
    )
    add = parser.add_argument
    add("--host", default="127.0.0.1", help="address to listen on")
    add("--port", type=int, default=0, help="first port; 0: free ports")
    add("--processing-seconds", type=float, default=3.0, help="how long a processing takes")
    add("--token-lifetime-seconds", type=float, default=300.0, help="access tokens' lifetime")
    add("--webhook-retry-base-ms", type=int, default=1000, help="first webhook retry delay")
    add("--credits", type=int, default=100, help="processing credits of each organization")
    add("--fault-rate", type=float, default=0.0, help="share of requests answered 500, delayed or cut")
    add("--seed", type=int, default=1, help="the faults' seed")
    add("--serial-fault-rate", type=float, default=0.0, help="share of damaged serial chunks")
    add("--device-password", action="append", default=[], metavar="USER=PASSWORD")
    add("--device-reboot-seconds", type=float, default=2.0)
    add("--device-latency-ms", type=int, default=0)
    add("--device-startup-seconds", type=float, default=0.0)
    add("--no-device-pty", action="store_true")
    add("--no-device", action="store_true")
    add("--devices", type=int, default=1)
    add("--upload-extra-field", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "processing_time": args.processing_seconds,
        "token_lifetime": args.token_lifetime_seconds,
        "webhook_retry_base_ms": args.webhook_retry_base_ms,
        "credits": args.credits,
        "fault_rate": args.fault_rate,
        "seed": args.seed,
        "serial_fault_rate": args.serial_fault_rate,
        "device_passwords": _pairs(args.device_password, "--device-password"),
        "device_reboot_seconds": args.device_reboot_seconds,
        "device_latency_ms": args.device_latency_ms,
        "device_startup_seconds": args.device_startup_seconds,
        "device_pty": not args.no_device_pty,
        "device": not args.no_device and args.devices > 0,
        "devices": max(args.devices, 1),
        "upload_extra_fields": _pairs(args.upload_extra_field, "--upload-extra-field"),
    }
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        emulator = Emulator(**options)
    except SvcError as e:
        print(f"{parser.prog}: {e}", file=sys.stderr)
        return 2
    with emulator:
        print(json.dumps(emulator.info, separators=(",", ":")), flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
