"""A mission folder with the vendor's form of the processing configuration, from Python:
its files keep their paths in the container, and a configuration naming what the
folder lacks, or of the wrong shape, is refused before anything is sent."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_sdk import Emulator, InvalidInputError, Workflow, samples


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.3) as emulator:
        yield emulator


def _config(base: Any) -> dict[str, Any]:
    return {
        "version": "1.0",
        "project": {"name": "mission", "type": "nmea", "path": "rover/"},
        "processing": {"type": "gnssSingle", "bases": [{"data": [base]}]},
    }


def test_a_mission_folder_keeps_its_paths(emulator: Emulator, tmp_path: Path) -> None:
    mission = tmp_path / "mission"
    (mission / "rover").mkdir(parents=True)
    (mission / "base").mkdir()
    shutil.copy(samples.path("rover.nmea"), mission / "rover" / "rover.nmea")
    (mission / "base" / "base.20o").write_text("     3.04           OBSERVATION DATA\n")
    client = emulator.cloud()
    outcome = Workflow(client).run(mission, _config("base/base.20o"), progress=False)
    assert outcome.processing.status == "processed"
    assert outcome.container_id is not None
    files = client.get_container(outcome.container_id)["files"]
    assert sorted(f["path"] for f in files) == ["base/base.20o", "rover/rover.nmea"]

    before = len(list(client.list_containers()))
    with pytest.raises(InvalidInputError, match=r"processing\.bases\[0\]\.data\[0\]"):
        Workflow(client).run(mission, _config("base/other.20o"), progress=False)
    with pytest.raises(InvalidInputError, match=r"processing\.bases\[0\]\.data\[0\]: invalid type"):
        Workflow(client).run(mission, _config(7), progress=False)
    assert len(list(client.list_containers())) == before
