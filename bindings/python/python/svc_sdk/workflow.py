"""The whole processing workflow in one call: local files in, the final processing,
its errors and warnings and the downloaded outputs out.

>>> outcome = Workflow(client).run(["rover.nmea", "imu.csv"], config, out="results")  # doctest: +SKIP
>>> outcome.trajectory()        # a pandas DataFrame (with the ``pandas`` extra)     # doctest: +SKIP

:meth:`Workflow.run` blocks with a progress bar (``tqdm.auto`` when installed, so a
notebook shows a widget) or calls ``progress=callable`` with each report (a dict with
a ``stage``). :meth:`Workflow.start` returns a :class:`WorkflowTask` at once.
:meth:`Workflow.resume` picks up a processing started earlier (a notebook restarted
mid-processing) by its id.

Ctrl-C during :meth:`Workflow.run` stops the local work (uploads, downloads) and
raises ``KeyboardInterrupt`` saying what goes on in the cloud. A processing whose
result is ``failed`` is not an exception: the outcome holds it with its errors.
"""

from __future__ import annotations

import csv
import errno as _errnos
import json
import inspect
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, TypedDict, TypeVar, Union

if TYPE_CHECKING:
    import pandas as pd
    from typing_extensions import Unpack

from svc_sdk import _native
from svc_sdk.cloud import CloudClient, Id
from svc_sdk import errors as _errors
from svc_sdk.errors import WaitTimeoutError
from svc_sdk.records import OutputFile, Processing, ProcessingError

__all__ = [
    "Files",
    "Workflow",
    "WorkflowSettings",
    "WorkflowOutcome",
    "WorkflowTask",
    "ProgressCallback",
    "TRAJECTORY_COLUMNS",
    "Report",
    "InputFileReport",
    "BoundingBox",
    "MissionLocation",
]

#: Called with the progress reports: ``{"stage": "uploading", "done_bytes": ..., ...}``; every
#: change of stage, in order, and the latest report of a stage when the callback falls behind.
ProgressCallback = Callable[[dict[str, Any]], None]

PathLike = Union[str, "os.PathLike[str]"]

#: Files given to a workflow: a list of paths, or one path (a ``str`` or
#: ``os.PathLike``) for a single file (``run("rover.nmea", config)``).
Files = Union[PathLike, Iterable[PathLike]]

#: The columns of ``trajectory.csv``, with their dtypes in :meth:`WorkflowOutcome.trajectory`.
TRAJECTORY_COLUMNS = {
    "time": "datetime64[ns, UTC]",
    "latitude": "float64",
    "longitude": "float64",
    "height": "float64",
    "velocity_north": "float64",
    "velocity_east": "float64",
    "velocity_up": "float64",
    "roll": "float64",
    "pitch": "float64",
    "heading": "float64",
    "std_north": "float64",
    "std_east": "float64",
    "std_up": "float64",
    "std_velocity_north": "float64",
    "std_velocity_east": "float64",
    "std_velocity_up": "float64",
    "std_roll": "float64",
    "std_pitch": "float64",
    "std_heading": "float64",
    "quality": "int64",
}


class _InputFileReportRequired(TypedDict):
    path: str
    sentences: int
    validFixes: int
    skippedLines: int


class InputFileReport(_InputFileReportRequired, total=False):
    """One input file in :class:`Report`: sentences (or binary positions) read, valid
    fixes, lines skipped, and notes when there are some."""

    notes: list[str]


class BoundingBox(TypedDict):
    """The trajectory's extent (degrees, metres)."""

    minLatitude: float
    minLongitude: float
    maxLatitude: float
    maxLongitude: float
    minHeight: float
    maxHeight: float


class MissionLocation(TypedDict):
    """Where the mission took place (``None`` when not known)."""

    country: Optional[str]
    region: Optional[str]
    place: Optional[str]


class _ReportRequired(TypedDict):
    fixCount: int
    inputFiles: list[InputFileReport]
    startTime: str
    endTime: str
    durationSeconds: float
    missionLengthSeconds: int
    distanceMeters: float
    boundingBox: BoundingBox
    missionLocation: MissionLocation
    fixQuality: dict[str, int]
    warnings: int


class Report(_ReportRequired, total=False):
    """``report.json`` (:meth:`WorkflowOutcome.report`): times in ISO 8601 UTC,
    distances in metres, ``fixQuality`` the fix count per GGA quality (``"4"``: RTK
    fixed) and ``rmcOnly``; ``producedBy`` names the emulator when it made the file."""

    producedBy: str


class WorkflowOutcome:
    """What a workflow produced: the processing as it ended, its errors and warnings,
    its outputs and the files downloaded."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.processing = Processing(data["processing"])
        self.errors = [ProcessingError(e) for e in data.get("errors") or []]
        self.outputs = [OutputFile(o) for o in data.get("outputs") or []]
        self.downloaded = [Path(p) for p in data.get("downloaded") or []]
        self.container_id: Optional[str] = data.get("container_id")
        self.status_reads: int = int(data.get("status_reads") or 0)
        #: Whether the processing is an earlier run's of the same job, found by its
        #: ``key`` instead of starting (and paying for) another.
        self.reused: bool = bool(data.get("reused"))

    @property
    def succeeded(self) -> bool:
        """Whether the processing ended ``processed`` with the result ``succeeded``."""
        return self.processing.succeeded

    @property
    def failed(self) -> bool:
        return self.processing.processing_result == "failed"

    def error_messages(self) -> list[ProcessingError]:
        return [e for e in self.errors if e.level == "error"]

    def raise_for_status(self) -> WorkflowOutcome:
        """This outcome when its processing succeeded; else raises
        :class:`~svc_sdk.errors.ProcessingFailedError` with the processing's
        identifier, status, result and error messages (a failed processing is not an
        exception by itself: this makes it one)."""
        if self.succeeded:
            return self
        p = self.processing
        messages = [e.message or "(no message)" for e in self.error_messages()]
        ended = p.status if p.processing_result is None else f"{p.status}, {p.processing_result}"
        reason = f"processing {p.id} ended {ended}" + (f": {'; '.join(messages)}" if messages else "")
        raise _errors._new_error(
            reason,
            kind="invalid_input",
            subsystem="processing",
            processing_id=str(p.id),
            processing_status=str(p.status),
            result=p.processing_result,
            errors=messages,
        )

    def warnings(self) -> list[ProcessingError]:
        return [e for e in self.errors if e.level == "warning"]

    def _file(self, name: str) -> Path:
        for path in self.downloaded:
            if path.name == name:
                return path
        p = self.processing
        if not self.succeeded:
            # Nothing to read: say why, with the processing's own errors.
            ended = p.status if p.processing_result is None else f"{p.status}, {p.processing_result}"
            errors = "; ".join(e.message or "(no message)" for e in self.error_messages())
            reason = (
                f"processing {p.id} ended {ended}: it has no {name}"
                + (f" (its errors: {errors})" if errors else "")
            )
        else:
            reason = (
                f"{name} was not downloaded (give `out=` to the workflow; downloaded: "
                f"{[d.name for d in self.downloaded]})"
            )
        raise _errors._new_error(
            reason, kind="io", subsystem="workflow", errno=_errnos.ENOENT, filename=name
        )

    def trajectory(self) -> pd.DataFrame:
        """``trajectory.csv`` as a pandas ``DataFrame`` with the columns and dtypes of
        :data:`TRAJECTORY_COLUMNS`: ``time`` in UTC (``datetime64[ns, UTC]``), position
        (degrees, ellipsoidal metres), velocity (m/s), attitude (degrees), their 1-sigma
        standard deviations, and ``quality`` (1 RTK fixed to 6 an outage). Needs pandas
        (the ``svc-sdk[pandas]`` extra); without it, use :meth:`trajectory_rows`."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError(
                "trajectory() needs pandas: pip install 'svc-sdk[pandas]' "
                "(or use trajectory_rows())"
            ) from e
        frame: pd.DataFrame = pd.read_csv(self._file("trajectory.csv"))
        frame["time"] = pd.to_datetime(frame["time"], utc=True).astype("datetime64[ns, UTC]")
        dtypes: dict[Any, Any] = {
            column: TRAJECTORY_COLUMNS.get(str(column), "float64")
            for column in frame.columns
            if column != "time"
        }
        typed: pd.DataFrame = frame.astype(dtypes)
        return typed

    def trajectory_rows(self) -> list[dict[str, str]]:
        """``trajectory.csv`` as a list of rows (dicts of the CSV's text)."""
        with open(self._file("trajectory.csv"), newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))

    def geojson(self) -> Any:
        """``trajectory.geojson`` as a dict."""
        with open(self._file("trajectory.geojson"), encoding="utf-8") as f:
            return json.load(f)

    def report(self) -> Report:
        """``report.json``: the figures of the processing's inputs and trajectory."""
        with open(self._file("report.json"), encoding="utf-8") as f:
            report: Report = json.load(f)
        return report

    def __repr__(self) -> str:
        return (
            f"WorkflowOutcome(processing={self.processing!r}, errors={len(self.errors)}, "
            f"downloaded={[p.name for p in self.downloaded]})"
        )

    def _repr_html_(self) -> str:
        """The notebook view: the processing, its errors and warnings, the figures of
        ``report.json`` (when downloaded) and the files downloaded."""
        import html

        parts = [self.processing._repr_html_()]
        if self.errors:
            items = "".join(
                f"<li><b>{html.escape(str(e.level))}</b>: {html.escape(str(e.message))}</li>"
                for e in self.errors
            )
            parts.append(f"<p>Errors and warnings</p><ul>{items}</ul>")
        try:
            report = self.report()
        except (OSError, ValueError, _errors.SvcError):
            report = None
        if report is not None:
            shown: list[tuple[str, object]] = [
                ("fixes", report.get("fixCount")),
                ("from", report.get("startTime")),
                ("to", report.get("endTime")),
                ("distance (m)", report.get("distanceMeters")),
                ("where", ", ".join(str(v) for v in (report.get("missionLocation") or {}).values() if v)),
            ]
            if "producedBy" in report:
                shown.append(("made by", report["producedBy"]))
            rows = "".join(
                f"<tr><th style='text-align:left'>{html.escape(label)}</th>"
                f"<td style='text-align:left'>{html.escape(str(value))}</td></tr>"
                for label, value in shown
            )
            parts.append(f"<table><caption>report.json</caption>{rows}</table>")
        if self.downloaded:
            files = "".join(f"<li>{html.escape(str(p))}</li>" for p in self.downloaded)
            parts.append(f"<p>Downloaded</p><ul>{files}</ul>")
        return "".join(parts)


#: The bar each stage of a report moves: queued and running share the processing's.
_BARS = {"uploading": "uploading", "queued": "processing", "running": "processing",
         "downloading": "downloading"}


class _Bars:
    """Progress bars on ``tqdm.auto`` (widgets in notebooks): one for the upload, one
    for the processing (queued, then running; full when it succeeded) and one for the
    download, each closed when the next begins."""

    def __init__(self, tqdm: Any) -> None:
        self._tqdm = tqdm
        self._bar: Any = None
        self._name: Optional[str] = None

    def close(self, full: bool, label: Optional[str] = None) -> None:
        bar = self._bar
        if bar is not None:
            if full and bar.total is not None:
                bar.n = bar.total
            if label is not None:
                bar.set_postfix_str(label, refresh=False)
            bar.refresh()
            bar.close()
        self._bar = self._name = None

    def __call__(self, p: dict[str, Any]) -> None:
        stage = p.get("stage")
        name = _BARS.get(str(stage))
        if name != self._name:
            # A transfer is over when the next stage begins; the processing ended when
            # the download begins or the workflow is done (the last report while
            # running may have said less than 100 %).
            # The processing's bar ends on where it ended ("processed, succeeded"), not on
            # the step of the last report before the end.
            label = None
            if self._name == "processing" and stage == "done":
                label = ", ".join(str(v) for v in (p.get("status"), p.get("result")) if v)
            elif self._name == "processing" and stage == "downloading":
                label = "processed"
            self.close(full=self._name != "processing" or stage == "downloading"
                       or (stage == "done" and p.get("result") == "succeeded"), label=label)
            if name == "processing":
                self._bar = self._tqdm(total=100, unit="%", desc="processing")
            elif name is not None:
                self._bar = self._tqdm(total=p.get("total_bytes"), unit="B", unit_scale=True, desc=name)
            self._name = name
        bar = self._bar
        if bar is None:
            return
        if name == "processing":
            if stage == "running":
                bar.n = round(100 * (p.get("progress") or 0.0))
                bar.set_postfix_str(str(p.get("step") or ""), refresh=False)
        else:
            if p.get("total_bytes") is not None:
                bar.total = p["total_bytes"]
            bar.n = p.get("done_bytes") or 0
        bar.refresh()


def _bar() -> Optional[ProgressCallback]:
    """Progress bars (:class:`_Bars`) if tqdm is installed."""
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return None
    return _Bars(tqdm)


def _progress(progress: Union[bool, ProgressCallback, None]) -> Optional[ProgressCallback]:
    if callable(progress):
        return progress
    return _bar() if progress else None


class WorkflowTask:
    """A workflow under way (:meth:`Workflow.start`). Dropping it before its end
    cancels it (a processing already started goes on in the cloud), unless
    :meth:`detach` was called."""

    def __init__(
        self, native: _native.WorkflowTask, progress: Optional[ProgressCallback] = None
    ) -> None:
        self._n = native
        self._progress = progress

    @property
    def processing_id(self) -> Optional[str]:
        """The processing, once started (it goes on in the cloud after a cancel)."""
        return self._n.processing_id

    @property
    def container_id(self) -> Optional[str]:
        return self._n.container_id

    def wait(self, timeout: Optional[float] = None) -> WorkflowOutcome:
        """Waits for the end (at most ``timeout`` seconds: then ``WaitTimeoutError``,
        the workflow still running). Progress reports reach the callback from this
        thread. Ctrl-C stops the workflow unless it is detached (what it had not
        started, a processing included, is not started) and raises
        ``KeyboardInterrupt`` saying exactly what it leaves in the cloud."""
        try:
            return WorkflowOutcome(self._n.wait(timeout, self._progress))
        except WaitTimeoutError:
            raise  # Still running: the bars stay.
        except KeyboardInterrupt:
            self._close_bars()
            _stop([self])
            raise KeyboardInterrupt(self._n.left_in_the_cloud()) from None
        except BaseException:
            self._close_bars()
            raise

    def _close_bars(self) -> None:
        if isinstance(self._progress, _Bars):
            self._progress.close(full=False)

    def cancel(self) -> None:
        """Stops the workflow (transfers aborted); a started processing goes on in the
        cloud. :meth:`wait` then raises ``CanceledError``."""
        self._n.cancel()

    def detach(self) -> None:
        """Lets the workflow run to its end even when this task is dropped (work that
        must outlive the code that started it); :meth:`cancel` still stops it."""
        self._n.detach()

    def done(self) -> bool:
        return self._n.done()

    def __repr__(self) -> str:
        return f"WorkflowTask(container_id={self.container_id!r}, processing_id={self.processing_id!r})"


def _paths(paths: Files) -> list[str]:
    """The paths of `paths`: one path (``str``, ``os.PathLike``) is one file, never
    split into its characters; ``bytes`` are refused (a path is text here)."""
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    if isinstance(paths, (bytes, bytearray)):
        raise TypeError("give file paths as str or os.PathLike, not bytes")
    return [os.fspath(p) for p in paths]


def _config(config: Union[Mapping[str, Any], PathLike]) -> dict[str, Any]:
    if isinstance(config, Mapping):
        return dict(config)
    # A missing file raises LocalFileError (also FileNotFoundError), invalid JSON an
    # InvalidInputError naming the file, line and column.
    return _native.read_processing_config(os.fspath(config))


class WorkflowSettings(TypedDict, total=False):
    """The settings of :meth:`Workflow.start` and :meth:`Workflow.run` (and of their
    :mod:`svc_sdk.aio` twins), each optional:

    - ``resources``: resource files (export profiles, report templates, geodesy
      resources), a list or one path;
    - ``name``: the processing's name;
    - ``metadata``: metadata of the container and the processing (``dict`` of ``str``);
    - ``out``: the folder the outputs are downloaded to (``{processing_id}`` in it is
      replaced; checked for writing before anything is sent); without it, nothing is
      downloaded;
    - ``region``: where the files are stored and the processing runs (``eu-west-3``);
    - ``follow``: follow the processing to its end (``True``), or return once started;
    - ``follow_timeout``: the longest follow, in seconds (``WaitTimeoutError`` after it;
      the processing goes on in the cloud);
    - ``wait_for_organization``: wait for the organization's ongoing processing to end
      instead of failing with a conflict;
    - ``cleanup_on_failure``: delete the container when the workflow fails (or is
      canceled) before a processing of it was started (the error's ``cleaned_up`` says
      whether it was);
    - ``key``: ``True`` to know the job again by a key derived from its configuration
      and files (names, sizes, contents), or a key of your own (``str``): a rerun with
      the same key follows the earlier run's processing and downloads its outputs
      (``outcome.reused``) instead of starting and paying for another, and deletes
      containers an interrupted run left under the key;
    - ``progress``: ``True`` for progress bars (``tqdm.auto`` when installed; the default of
      ``run``), ``False``/``None`` for none (the default of ``start``), or a callable given
      each report (a dict with a ``stage``).
    """

    resources: Files
    name: Optional[str]
    metadata: Optional[Mapping[str, str]]
    out: Optional[PathLike]
    region: Optional[str]
    follow: bool
    follow_timeout: Optional[float]
    wait_for_organization: bool
    cleanup_on_failure: bool
    key: Union[bool, str, None]
    progress: Union[bool, ProgressCallback, None]


#: The defaults of :class:`WorkflowSettings` (``progress``: :meth:`Workflow.start`'s).
_SETTINGS_DEFAULTS: dict[str, Any] = {
    "resources": (),
    "follow": True,
    "wait_for_organization": False,
    "cleanup_on_failure": False,
    "key": None,
    "progress": False,
}

F = TypeVar("F", bound=Callable[..., Any])


def _settings_signature(**defaults: Any) -> Callable[[F], F]:
    """Shows the settings of :class:`WorkflowSettings` as keyword parameters in the
    signature ``help()`` and ``inspect.signature`` give (the one list of settings stays
    the ``TypedDict``, which type checkers read through ``Unpack``)."""

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        kept = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        settings = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default={**_SETTINGS_DEFAULTS, **defaults}.get(name),
                # As written (`Optional[str]`), not as a forward reference.
                annotation=getattr(annotation, "__forward_arg__", annotation),
            )
            for name, annotation in WorkflowSettings.__annotations__.items()
        ]
        function.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*kept, *settings]
        )
        return function

    return decorate


class Workflow:
    """Runs processing workflows with one :class:`~svc_sdk.CloudClient`."""

    def __init__(self, client: CloudClient) -> None:
        self.client = client
        self._n = _native.Workflow(client._n)

    @_settings_signature()
    def start(
        self,
        inputs: Files,
        config: Union[Mapping[str, Any], PathLike],
        **settings: Unpack[WorkflowSettings],
    ) -> WorkflowTask:
        """Starts a workflow and returns at once. ``inputs`` is a list of files, or one
        file (a ``str`` or ``os.PathLike``). ``config`` is the processing configuration: a
        dict, or the path of a JSON file (a missing one raises ``LocalFileError``, also a
        ``FileNotFoundError``; invalid JSON an ``InvalidInputError`` naming its line and
        column). The other settings are those of :class:`WorkflowSettings`."""
        unknown = set(settings) - set(WorkflowSettings.__annotations__)
        if unknown:
            raise TypeError(f"Workflow.start() got unknown settings: {', '.join(sorted(unknown))}")
        metadata = settings.get("metadata")
        out = settings.get("out")
        native = self._n.start(
            _paths(inputs),
            _config(config),
            resources=_paths(settings.get("resources", ())),
            name=settings.get("name"),
            metadata=None if metadata is None else dict(metadata),
            out=None if out is None else os.fspath(out),
            region=settings.get("region"),
            follow=settings.get("follow", True),
            follow_timeout=settings.get("follow_timeout"),
            wait_for_organization=settings.get("wait_for_organization", False),
            cleanup_on_failure=settings.get("cleanup_on_failure", False),
            key=_given_key(settings.get("key")),
            derived_key=settings.get("key") is True,
        )
        return WorkflowTask(native, _progress(settings.get("progress", False)))

    @_settings_signature(progress=True)
    def run(
        self,
        inputs: Files,
        config: Union[Mapping[str, Any], PathLike],
        **settings: Unpack[WorkflowSettings],
    ) -> WorkflowOutcome:
        """Runs a whole workflow (see :meth:`start`; progress bars by default) and returns
        its outcome. Ctrl-C stops it and says what goes on in the cloud."""
        settings.setdefault("progress", True)
        return _finish(self.start(inputs, config, **settings))

    def start_many(
        self,
        missions: Missions,
        config: Union[Mapping[str, Any], PathLike],
        *,
        ahead: int = 2,
        resources: Files = (),
        metadata: Optional[Mapping[str, str]] = None,
        out: Optional[PathLike] = None,
        region: Optional[str] = None,
        follow_timeout: Optional[float] = None,
        cleanup_on_failure: bool = False,
        key: Union[bool, str, None] = None,
        journal: Optional[PathLike] = None,
    ) -> dict[str, WorkflowTask]:
        """Starts a batch of missions and returns at once a task per mission, by name.

        ``missions`` maps each mission's name to its inputs (a folder, a file or a list
        of them), or lists the missions' folders (or files), each named after its last
        component. Every mission gets ``config`` and the other settings; its outputs go
        to ``out/<name>/`` when ``out`` is given, and its processing is named after it.
        The service runs one processing at a time per organization: the missions begin
        in the order given, ``ahead`` at a time, and take their turns in the order their
        uploads end, so the next mission uploads while one processes. ``key`` (see
        :class:`WorkflowSettings`): ``True`` derives each mission's own; a ``str`` is
        the batch's, each mission's key being ``key/<name>``. ``journal``: a file (JSON
        Lines) where the batch notes what each mission created as it happens; the same
        batch started again with it (after a crash, a restarted kernel) follows the
        processings already started instead of starting them again, and deletes the
        containers left without one."""
        named = _missions(missions)
        given = _given_key(key)
        base = None if out is None else Path(os.fspath(out))
        native = self._n.start_many(
            [
                (
                    inputs,
                    name,
                    None if base is None else os.fspath(base / name),
                    None if given is None else f"{given}/{name}",
                )
                for name, inputs in named.items()
            ],
            _config(config),
            resources=_paths(resources),
            metadata=None if metadata is None else dict(metadata),
            region=region,
            follow_timeout=follow_timeout,
            cleanup_on_failure=cleanup_on_failure,
            ahead=ahead,
            derived_key=key is True,
            journal=None if journal is None else os.fspath(journal),
        )
        return {name: WorkflowTask(task) for name, task in zip(named, native)}

    def run_many(
        self,
        missions: Missions,
        config: Union[Mapping[str, Any], PathLike],
        *,
        progress: Union[bool, Callable[[str, dict[str, Any]], None], None] = True,
        **settings: Any,
    ) -> dict[str, Union[WorkflowOutcome, _errors.SvcError]]:
        """Runs a batch of missions (see :meth:`start_many`, which takes the same
        settings) and returns each mission's outcome, or the error that stopped it,
        by name: one mission failing does not stop the others. ``progress``: ``True``
        prints a line per mission and stage on stderr, labelled with the mission's
        name; a callable is given ``(name, report)``. Ctrl-C stops the missions not done
        (processings already started go on in the cloud)."""
        tasks = self.start_many(missions, config, **settings)
        report = _batch_progress(progress, list(tasks))
        results: dict[str, Union[WorkflowOutcome, _errors.SvcError]] = {}
        try:
            while len(results) < len(tasks):
                for name, task in tasks.items():
                    if name in results:
                        continue
                    callback = None if report is None else _labelled(report, name)
                    try:
                        results[name] = WorkflowOutcome(task._n.wait(0.05, callback))
                    except WaitTimeoutError:
                        continue
                    except _errors.SvcError as error:
                        results[name] = error
        except KeyboardInterrupt:
            _stop(tasks.values())
            said = "; ".join(f"{name}: {task._n.left_in_the_cloud()}" for name, task in tasks.items())
            raise KeyboardInterrupt(said) from None
        except BaseException:
            for task in tasks.values():
                task.cancel()
            raise
        return {name: results[name] for name in tasks}

    def resume(
        self,
        processing_id: Id,
        *,
        out: Optional[PathLike] = None,
        follow_timeout: Optional[float] = None,
        progress: Union[bool, ProgressCallback, None] = True,
    ) -> WorkflowOutcome:
        """Picks up a processing started earlier by its id: follows it to its end,
        collects its errors and outputs and downloads them to ``out``."""
        return _finish(self.start_resume(processing_id, out=out, follow_timeout=follow_timeout, progress=progress))

    def start_resume(
        self,
        processing_id: Id,
        *,
        out: Optional[PathLike] = None,
        follow_timeout: Optional[float] = None,
        progress: Union[bool, ProgressCallback, None] = False,
    ) -> WorkflowTask:
        """As :meth:`resume`, returning a :class:`WorkflowTask` at once."""
        native = self._n.resume(
            str(processing_id),
            out=None if out is None else os.fspath(out),
            follow_timeout=follow_timeout,
        )
        return WorkflowTask(native, _progress(progress))


def _given_key(key: Union[bool, str, None]) -> Optional[str]:
    """A key of the caller's (``True`` and ``None`` give none: derived, or no key)."""
    if key is None or isinstance(key, bool):
        return None
    if not isinstance(key, str):
        raise TypeError(f"key: True or a str, not {type(key).__name__}")
    return key


#: The missions of a batch: names to inputs, or the missions' folders or files.
Missions = Union[Mapping[str, Files], Iterable[PathLike]]


def _missions(missions: Missions) -> dict[str, list[str]]:
    """Each mission's name and inputs; two missions of one name are refused."""
    if isinstance(missions, Mapping):
        named = {str(name): _paths(inputs) for name, inputs in missions.items()}
    else:
        if isinstance(missions, (str, os.PathLike, bytes)):
            raise TypeError("missions: give a list of mission folders (or a dict of name to inputs), not one path")
        named = {}
        for mission in missions:
            path = Path(os.fspath(mission))
            name = path.resolve().name
            if name in named:
                raise _errors.InvalidInputError(f"two missions are named {name!r}: each writes its outputs to a folder of its name")
            named[name] = [os.fspath(path)]
    if not named:
        raise _errors.InvalidInputError("missions: no mission given")
    return named


def _batch_progress(
    progress: Union[bool, Callable[[str, dict[str, Any]], None], None], names: list[str]
) -> Optional[Callable[[str, dict[str, Any]], None]]:
    if callable(progress):
        return progress
    if not progress:
        return None
    width = max(len(n) for n in names)
    last: dict[str, str] = {}

    def show(name: str, report: dict[str, Any]) -> None:
        stage = str(report.get("stage", ""))
        if stage == "waiting_for_organization":
            behind = report.get("behind")
            stage = (
                f"in line behind {behind} ({report.get('ahead')} ahead)"
                if behind is not None
                else "waiting for a processing started elsewhere"
            )
        if last.get(name) != stage:
            last[name] = stage
            print(f"{name:<{width}}  {stage}", file=sys.stderr)

    return show


def _labelled(
    report: Callable[[str, dict[str, Any]], None], name: str
) -> Callable[[dict[str, Any]], None]:
    return lambda progress: report(name, progress)


def _finish(task: WorkflowTask) -> WorkflowOutcome:
    try:
        return task.wait()
    except BaseException:
        # Nobody will wait for it any more (Ctrl-C, a progress callback raised):
        # stopped. A workflow that ended is not changed by this.
        task.cancel()
        raise


#: How long an interrupted :meth:`WorkflowTask.wait` waits for its cancel to settle.
_SETTLE_SECONDS = 5.0


def _stop(tasks: Iterable[WorkflowTask]) -> None:
    """Cancels ``tasks`` whose wait was interrupted, except those detached (the rule
    for work handles), and waits (at most :data:`_SETTLE_SECONDS` in all) for each
    cancel to settle what was in flight (a start whose answer had not come), so that
    ``left_in_the_cloud`` then says exactly what each leaves. A second Ctrl-C stops
    waiting."""
    tasks = [task for task in tasks if task._n.cancel_unless_detached()]
    settle = time.monotonic() + _SETTLE_SECONDS
    for task in tasks:
        try:
            task._n.wait(max(0.0, settle - time.monotonic()), None)
        except _errors.SvcError:
            pass