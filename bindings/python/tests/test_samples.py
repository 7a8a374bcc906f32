"""The sample survey shipped in the package: the repository's files, usable from any
folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from svc_sdk import Emulator, Workflow, samples, trajectory

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


# The vendor's cloud samples' configuration, as they submit it.
VENDOR_CONFIG = {
    "version": "1.0",
    "project": {"name": "Qinertia CLI", "type": "sbgECom", "path": "rover/"},
    "processing": {
        "motionProfile": "automotive",
        "type": "insSingle",
        "bases": [
            {
                "positionMode": "published",
                "antenna": {"type": "TWIVP6050_CONE  NONE"},
                "data": ["base/sbgs167p.20d"],
            }
        ],
    },
    "exports": [
        {"name": "Export SBET", "profile": "SBET: 200Hz", "outputDir": "export"},
        {"name": "Export ASCII", "profile": "ASCII: INS at 200Hz", "outputDir": "export"},
    ],
    "reports": [
        {"name": "JSON report", "template": "Minimal JSON", "outputDir": "reports/json"},
        {"name": "PDF report", "template": "Full PDF"},
    ],
}


def test_a_session_written_by_the_vendors_library_processes_with_the_vendors_configuration(tmp_path: Path) -> None:
    """The mission folder of the vendor's samples: the unit's session (written by the
    vendor's sbgECom library, tests/data/README.md) and its settings in ``rover/``, a
    base station's observations in ``base/``."""
    mission = tmp_path / "mission"
    (mission / "rover").mkdir(parents=True)
    (mission / "base").mkdir()
    (mission / "rover" / "Navsight-Auto-Demo.002").write_bytes((ROOT / "tests/data/vendor-session.sbg").read_bytes())
    (mission / "rover" / "Navsight-Auto-Demo.json").write_text(
        '{"settings": {"sensor": {"leverArm": [0.3, -0.16, 0.26]}}}'
    )
    header = [
        ("1.0                 COMPACT RINEX FORMAT", "CRINEX VERS   / TYPE"),
        ("     2.11           OBSERVATION DATA    M (MIXED)", "RINEX VERSION / TYPE"),
        ("  2020     6    15    15     0    0.0000000     GPS", "TIME OF FIRST OBS"),
        ("", "END OF HEADER"),
    ]
    (mission / "base" / "sbgs167p.20d").write_text("".join(f"{c:<60}{label}\n" for c, label in header))

    with Emulator(processing_time=0.5, device=False) as emulator:
        outcome = Workflow(emulator.cloud()).run(mission, VENDOR_CONFIG, out=tmp_path / "out", progress=False)
    assert outcome.succeeded, outcome
    assert outcome.processing["errorCount"] == {"errors": 0, "warnings": 0}, outcome
    written = sorted(str(p.relative_to(tmp_path / "out")) for p in outcome.downloaded)
    assert "export/export_sbet.sbet" in written and "pdf_report.pdf" in written, written
    report = outcome.report()
    assert report["startTime"] == "2020-06-15T15:20:00.000Z", report
    assert report["durationSeconds"] == 30.0
    assert "the local emulator, not the cloud service" in report.get("producedBy", ""), report
    notes = {f["path"]: f.get("notes") for f in report["inputFiles"]}
    assert notes["rover/Navsight-Auto-Demo.json"] == ["the rover's settings: settings.sensor.leverArm applied"]
    assert notes["base/sbgs167p.20d"] == [
        "base station observations from 2020-06-15T14:59:42.000Z to an end it does not say"
    ]
    minimal = json.loads((tmp_path / "out/reports/json/json_report.json").read_text())
    assert minimal["leverArm"] == [0.3, -0.16, 0.26]
    sbet = trajectory.read_sbet(tmp_path / "out/export/export_sbet.sbet")
    assert len(sbet) == 30 * 200 + 1
    # The heading the library logged in ekfEuler: 0.3 rad at the start.
    assert sbet["heading"].iloc[0] == pytest.approx(17.1887, abs=0.01)
    assert sbet["time"].iloc[0] == pytest.approx(141_618.0)
