"""svc-core's log events reach Python's ``logging`` under ``svc_sdk.*`` loggers named
after the Rust modules, levels mapped; nothing secret reaches a handler, even at the
most verbose level; nothing at all is formatted while the logger is disabled."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from svc_sdk import Emulator, Workflow, _native, samples

SECRET_UNIT_PASSWORD = "pw-S3cr3t-unit"


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=1)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture()
def recorder() -> Iterator[Recorder]:
    handler = Recorder()
    logger = logging.getLogger("svc_sdk")
    old_level = logger.level
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        _native._pump_logs()  # the forwarder follows the level back


def test_a_workflow_and_a_unit_session_log_through_logging_without_secrets(
    recorder: Recorder, tmp_path: Path
) -> None:
    logging.getLogger("svc_sdk").setLevel(1)  # everything, TRACE included
    with Emulator(processing_time=0.5) as emulator:
        info = emulator.info
        outcome = Workflow(emulator.cloud()).run(
            samples.path("rover.nmea"), samples.path("processing.json"), out=tmp_path, progress=False
        )
        assert outcome.succeeded
        unit = emulator.unit()
        unit.login("setup", "")
        unit.change_password(SECRET_UNIT_PASSWORD)
        unit.login("setup", SECRET_UNIT_PASSWORD)
        unit.set("network/ntrip/password", "ntrip-S3cr3t")
        unit.settings()
        unit.logout()
        _native._pump_logs()
    names = {r.name for r in recorder.records}
    assert any(n.startswith("svc_sdk.workflow") for n in names), names
    assert any(n.startswith("svc_sdk.cloud") for n in names), names
    assert any(n.startswith("svc_sdk.unit") for n in names), names
    assert {r.levelno for r in recorder.records} >= {10, 20}, "debug and info"
    text = "\n".join(f"{r.name} {r.getMessage()}" for r in recorder.records)
    for secret in [info["api_secret"], info["member_api_secret"], SECRET_UNIT_PASSWORD,
                   "ntrip-S3cr3t", "X-Amz-Signature", "auth=", "access_token", "whsec_"]:
        assert secret not in text, secret


def test_nothing_is_formatted_while_the_logger_is_disabled(recorder: Recorder) -> None:
    logging.getLogger("svc_sdk").setLevel(logging.WARNING)
    with Emulator(processing_time=0.5, device=False) as emulator:
        client = emulator.cloud()
        for _ in range(3):
            client.server_info()
        _native._pump_logs()
    assert [r for r in recorder.records if r.levelno < logging.WARNING] == []
    # Turned on, the same calls log.
    logging.getLogger("svc_sdk").setLevel(logging.DEBUG)
    with Emulator(processing_time=0.5, device=False) as emulator:
        emulator.cloud().server_info()
        _native._pump_logs()
    assert any(r.levelno == logging.DEBUG for r in recorder.records)
