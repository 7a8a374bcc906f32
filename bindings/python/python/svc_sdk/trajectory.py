"""Trajectories of processings: read, compare, map.

>>> from svc_sdk import trajectory                                   # doctest: +SKIP
>>> before, after = outcome_a.trajectory(), outcome_b.trajectory()   # doctest: +SKIP
>>> result = trajectory.compare(before, after)                       # doctest: +SKIP
>>> result.summary["vertical"]["rms"]                                # doctest: +SKIP
0.012
>>> trajectory.map(after)                                            # doctest: +SKIP

- :func:`compare` aligns two trajectories in time and splits their difference along
  the first one's track, across it and vertically, in metres (svc-core's comparison:
  the CLI, Kotlin and Swift compare alike). It is a function, not a method, since
  pandas' ``DataFrame.compare`` exists.
- :func:`read_sbet` reads an ``SBET`` export as a ``DataFrame``.
- :func:`map` draws a trajectory on an interactive map coloured by its solution
  quality (needs ``folium``: ``pip install 'svc-sdk[map]'``).

Trajectories are the ``DataFrame`` that :meth:`WorkflowOutcome.trajectory
<svc_sdk.WorkflowOutcome.trajectory>` gives (or any with ``time``, ``latitude``,
``longitude``, ``height`` and, optionally, ``velocity_north``/``velocity_east`` and
``quality``), or a :class:`~svc_sdk.WorkflowOutcome` itself.
"""

from __future__ import annotations

import html
import os
from typing import TYPE_CHECKING, Any, TypedDict, Union

from . import _native

if TYPE_CHECKING:
    import folium
    import pandas as pd

    from .workflow import WorkflowOutcome

__all__ = ["Comparison", "Statistics", "compare", "map", "read_sbet"]


class Statistics(TypedDict):
    """Summary statistics of one difference, metres."""

    mean: float
    std: float
    rms: float
    max_abs: float


class Comparison:
    """Two trajectories compared (:func:`compare`).

    Attributes:
        differences: a ``DataFrame`` with one row per epoch of the first trajectory that
            both cover: ``time`` (UTC), ``along_track`` (positive: the second is
            ahead), ``cross_track`` (positive: to the right), ``vertical`` (positive:
            higher) and ``horizontal``, in metres.
        summary: each difference's :class:`Statistics` by name.
    """

    differences: pd.DataFrame
    summary: dict[str, Statistics]

    def __init__(self, differences: pd.DataFrame, summary: dict[str, Statistics]) -> None:
        self.differences = differences
        self.summary = summary

    def __repr__(self) -> str:
        shown = ", ".join(f"{name} rms={stats['rms']:.3f} m" for name, stats in self.summary.items())
        return f"Comparison({len(self.differences)} epochs: {shown})"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th>{html.escape(name)}</th>"
            + "".join(
                f"<td>{value:.3f}</td>"
                for value in (stats["mean"], stats["std"], stats["rms"], stats["max_abs"])
            )
            + "</tr>"
            for name, stats in self.summary.items()
        )
        return (
            f"<p>{len(self.differences)} epochs compared (metres)</p>"
            "<table><tr><th></th><th>mean</th><th>std</th><th>rms</th><th>max |x|</th></tr>"
            f"{rows}</table>"
        )


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("this needs pandas: pip install 'svc-sdk[pandas]'") from e
    return pandas


def _frame(trajectory: Union[pd.DataFrame, WorkflowOutcome]) -> pd.DataFrame:
    from .workflow import WorkflowOutcome

    if isinstance(trajectory, WorkflowOutcome):
        return trajectory.trajectory()
    return trajectory


def _columns(name: str, frame: pd.DataFrame) -> dict[str, list[Any]]:
    from .errors import InvalidInputError

    pandas = _pandas()
    for column in ("time", "latitude", "longitude", "height"):
        if column not in frame.columns:
            raise InvalidInputError(f"{name}: no `{column}` column")
    times = pandas.to_datetime(frame["time"], utc=True)
    columns: dict[str, list[Any]] = {
        # Microseconds since 1970 (the dtype's unit may be ns, us, ...).
        "time_us": [int(t.value // 1000) for t in times],
        "latitude": frame["latitude"].astype("float64").tolist(),
        "longitude": frame["longitude"].astype("float64").tolist(),
        "height": frame["height"].astype("float64").tolist(),
    }
    if "velocity_north" in frame.columns and "velocity_east" in frame.columns:
        columns["velocity_north"] = frame["velocity_north"].astype("float64").tolist()
        columns["velocity_east"] = frame["velocity_east"].astype("float64").tolist()
    return columns


def compare(
    a: Union[pd.DataFrame, WorkflowOutcome], b: Union[pd.DataFrame, WorkflowOutcome]
) -> Comparison:
    """Compares ``b`` with ``a``: at each epoch of ``a`` within the time both cover,
    ``b``'s position interpolated in time, the difference on the local level split along
    ``a``'s direction of travel, across it and vertically (metres). Both in time order.
    Raises ``InvalidInputError`` for a trajectory without the needed columns."""
    pandas = _pandas()
    for name, frame in (("a", a), ("b", b)):
        if not isinstance(frame, pandas.DataFrame):
            from .workflow import WorkflowOutcome

            if not isinstance(frame, WorkflowOutcome):
                raise TypeError(f"{name}: a DataFrame or a WorkflowOutcome, not {type(frame).__name__}")
    result = _native._compare_trajectories(_columns("a", _frame(a)), _columns("b", _frame(b)))
    differences = pandas.DataFrame(
        {
            "time": pandas.to_datetime(result["time_us"], unit="us", utc=True),
            "along_track": result["along_track"],
            "cross_track": result["cross_track"],
            "vertical": result["vertical"],
            "horizontal": result["horizontal"],
        }
    )
    summary: dict[str, Statistics] = {
        name: Statistics(
            mean=stats["mean"], std=stats["std"], rms=stats["rms"], max_abs=stats["max_abs"]
        )
        for name, stats in result["summary"].items()
    }
    return Comparison(differences, summary)


def read_sbet(path: Union[str, os.PathLike[str]]) -> pd.DataFrame:
    """An ``SBET`` export as a ``DataFrame``: ``time`` (GPS seconds of the week),
    ``latitude``, ``longitude`` (degrees), ``height`` (m), ``velocity_north``,
    ``velocity_east``, ``velocity_down`` (m/s), ``roll``, ``pitch``, ``heading``,
    ``wander_angle`` (degrees), ``acceleration_x/y/z`` (m/s², body frame) and
    ``angular_rate_x/y/z`` (rad/s). Raises ``InvalidInputError`` for a file that is not
    a whole number of 136-byte records."""
    pandas = _pandas()
    import math

    columns = _native._read_sbet(os.fspath(path))
    for name in ("latitude", "longitude", "roll", "pitch", "heading", "wander_angle"):
        columns[name] = [math.degrees(v) for v in columns[name]]
    frame: pd.DataFrame = pandas.DataFrame(columns)
    return frame


#: Colours of the solution qualities 1 (RTK fixed) to 6 (an outage).
QUALITY_COLOURS = {1: "#1a9850", 2: "#91cf60", 3: "#d9ef8b", 4: "#fee08b", 5: "#fc8d59", 6: "#d73027"}


def map(  # noqa: A001 - the module's verb, as `svc_sdk.trajectory.map`
    trajectory: Union[pd.DataFrame, WorkflowOutcome], *, max_points: int = 5000
) -> folium.Map:
    """An interactive map of ``trajectory`` (a ``folium.Map``, shown inline in
    Jupyter): the track as segments coloured by solution quality (green: RTK fixed, to
    red: an outage), at most ``max_points`` epochs (evenly picked). Needs ``folium``
    (``pip install 'svc-sdk[map]'``)."""
    try:
        import folium
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("map() needs folium: pip install 'svc-sdk[map]'") from e
    frame = _frame(trajectory)
    if len(frame) == 0:
        raise ValueError("the trajectory is empty")
    step = max(1, -(-len(frame) // max_points))
    picked = frame.iloc[::step]
    latitudes = picked["latitude"].astype("float64").tolist()
    longitudes = picked["longitude"].astype("float64").tolist()
    qualities = picked["quality"].astype("int64").tolist() if "quality" in picked.columns else [0] * len(picked)
    view = folium.Map(location=[sum(latitudes) / len(latitudes), sum(longitudes) / len(longitudes)])
    for i in range(1, len(latitudes)):
        folium.PolyLine(
            [(latitudes[i - 1], longitudes[i - 1]), (latitudes[i], longitudes[i])],
            color=QUALITY_COLOURS.get(qualities[i], "#3388ff"),
            weight=4,
            tooltip=f"quality {qualities[i]}",
        ).add_to(view)
    view.fit_bounds([[min(latitudes), min(longitudes)], [max(latitudes), max(longitudes)]])
    return view
