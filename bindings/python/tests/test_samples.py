"""The sample survey shipped in the package: the repository's files, usable from any
folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from svc_sdk import Emulator, Workflow, samples

ROOT = Path(__file__).resolve().parents[3]


def test_the_packaged_samples_are_the_repositorys() -> None:
    for name in samples.NAMES:
        assert samples.path(name).read_bytes() == (ROOT / "samples" / name).read_bytes(), name
    with pytest.raises(KeyError):
        samples.path("imu.csv")


def test_the_readme_example_runs_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with Emulator(processing_time=0.5, device=False) as emulator:
        outcome = Workflow(emulator.cloud()).run(
            samples.path("rover.nmea"), samples.path("processing.json"), out="results", progress=False
        )
    assert outcome.succeeded, outcome
    assert len(outcome.trajectory_rows()) > 10
    assert sorted(os.listdir(tmp_path / "results")) == ["report.json", "trajectory.csv", "trajectory.geojson"]
