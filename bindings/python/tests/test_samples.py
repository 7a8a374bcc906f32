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


def test_the_vendor_form_sample_writes_its_exports_and_reports(tmp_path: Path) -> None:
    with Emulator(processing_time=0.5, device=False) as emulator:
        outcome = Workflow(emulator.cloud()).run(
            samples.path("rover.nmea"), samples.path("project.json"), out=tmp_path, progress=False
        )
    assert outcome.succeeded, outcome
    written = sorted(str(p.relative_to(tmp_path)) for p in outcome.downloaded)
    assert written == [
        "export/export_ascii.txt",
        "export/export_sbet.sbet",
        "export/track.kml",
        "report.json",
        "reports/html_report.html",
        "reports/json_report.json",
        "trajectory.csv",
        "trajectory.geojson",
    ]
    rows = len(outcome.trajectory_rows())
    # 1 Hz fixes exported at 10 Hz: ten records a second, both ends included.
    assert (tmp_path / "export/export_sbet.sbet").stat().st_size == ((rows - 1) * 10 + 1) * 17 * 8
