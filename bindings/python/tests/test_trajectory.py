"""Trajectories of processings from Python: typed, read back (the SBET export also by
an independent reader, numpy), compared, and on a map."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from svc_sdk import Emulator, InvalidInputError, Workflow, WorkflowOutcome, samples, trajectory
from svc_sdk.workflow import TRAJECTORY_COLUMNS


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.3, device=False) as emulator:
        yield emulator


CONFIG: dict[str, Any] = {
    "version": "1.0",
    "project": {"name": "paris", "type": "nmea", "path": "rover/"},
    "processing": {"type": "insSingle", "motionProfile": "automotive"},
    "exports": [
        {"name": "Export SBET", "profile": "SBET: 5Hz", "outputDir": "export"},
        {"name": "Export ASCII", "profile": "ASCII: INS at 5Hz", "outputDir": "export"},
    ],
    "reports": [{"name": "JSON report", "template": "Minimal JSON", "outputDir": "reports"}],
}


def _mission(emulator: Emulator, folder: Path, up: float) -> WorkflowOutcome:
    """The sample drive with the antenna `up` metres above the IMU (the settings sidecar)."""
    (folder / "rover").mkdir(parents=True)
    shutil.copy(samples.path("rover.nmea"), folder / "rover" / "rover.nmea")
    sidecar = {"settings": {"sensor": {"leverArm": [0.0, 0.0, -up]}}}
    (folder / "rover" / "settings.json").write_text(json.dumps(sidecar))
    return Workflow(emulator.cloud()).run(folder, CONFIG, out=folder.with_suffix(".out"), progress=False)


@pytest.fixture(scope="module")
def outcomes(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> tuple[WorkflowOutcome, WorkflowOutcome]:
    root = tmp_path_factory.mktemp("trajectories")
    return _mission(emulator, root / "plain", 0.0), _mission(emulator, root / "raised", 2.0)


def test_the_trajectory_is_typed_with_attitude_accuracy_and_quality(
    outcomes: tuple[WorkflowOutcome, WorkflowOutcome],
) -> None:
    frame = outcomes[0].trajectory()
    assert list(frame.columns) == list(TRAJECTORY_COLUMNS)
    assert {c: str(t) for c, t in frame.dtypes.items()} == TRAJECTORY_COLUMNS
    assert frame["quality"].between(1, 6).all()
    assert frame["heading"].between(0, 360).all()
    assert (frame["std_north"] > 0).all()
    report = outcomes[0].report()
    assert report["fixCount"] == len(frame)
    view = outcomes[0]._repr_html_()
    assert "<caption>report.json</caption>" in view and "export_sbet.sbet" in view, view
    # Results of the emulator say so, in the report and in its view.
    assert "the local emulator, not the cloud service" in report.get("producedBy", ""), report
    assert "the local emulator, not the cloud service" in view, view
    assert report["inputFiles"][0]["path"] == "rover/rover.nmea"


def test_the_sbet_export_reads_back_alike_by_two_readers(
    outcomes: tuple[WorkflowOutcome, WorkflowOutcome],
) -> None:
    folder = Path(outcomes[0].downloaded[0]).parent
    while not (folder / "export").exists():
        folder = folder.parent
    path = folder / "export" / "export_sbet.sbet"
    sbet = trajectory.read_sbet(path)
    # numpy on the published layout: 17 little-endian doubles per record.
    raw = np.fromfile(path, dtype="<f8").reshape(-1, 17)
    assert len(sbet) == len(raw) > 0
    assert np.allclose(np.degrees(raw[:, 1]), sbet["latitude"])
    assert np.allclose(np.degrees(raw[:, 9]), sbet["heading"])
    assert np.allclose(raw[:, 0], sbet["time"])
    ascii_rows = [
        line for line in (folder / "export" / "export_ascii.txt").read_text().splitlines() if not line.startswith("#")
    ]
    assert len(ascii_rows) == len(sbet)
    # A file cut mid-record is refused, not half read.
    cut = folder / "cut.sbet"
    cut.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(InvalidInputError, match="do not make a record"):
        trajectory.read_sbet(cut)


def test_two_processings_compare_along_across_and_vertically(
    outcomes: tuple[WorkflowOutcome, WorkflowOutcome],
) -> None:
    plain, raised = outcomes
    same = trajectory.compare(plain, plain.trajectory())
    assert same.summary["horizontal"]["max_abs"] == 0.0
    result = trajectory.compare(plain, raised)
    assert list(result.differences.columns) == ["time", "along_track", "cross_track", "vertical", "horizontal"]
    assert len(result.differences) == len(plain.trajectory())
    assert str(result.differences["time"].dtype).startswith("datetime64")
    # The antenna 2 m higher above the IMU: the trajectory 2 m lower.
    assert abs(result.summary["vertical"]["mean"] + 2.0) < 0.01
    assert result.summary["horizontal"]["max_abs"] < 0.1
    assert "vertical rms=1.99" in repr(result) and f"{len(result.differences)} epochs" in repr(result)
    assert "<table>" in result._repr_html_()
    with pytest.raises(InvalidInputError, match="a: no `height` column"):
        trajectory.compare(plain.trajectory().drop(columns=["height"]), raised)


def test_a_trajectory_on_a_map_coloured_by_quality(outcomes: tuple[WorkflowOutcome, WorkflowOutcome]) -> None:
    folium = pytest.importorskip("folium")
    frame = outcomes[0].trajectory()
    view = trajectory.map(frame)
    assert isinstance(view, folium.Map)
    lines = [child for child in view._children.values() if isinstance(child, folium.PolyLine)]
    assert len(lines) == len(frame) - 1
    assert {line.options["color"] for line in lines} <= set(trajectory.QUALITY_COLOURS.values())
    assert "leaflet" in view.get_root().render().lower()
    with pytest.raises(ValueError, match="empty"):
        trajectory.map(pd.DataFrame(columns=["latitude", "longitude"]))
