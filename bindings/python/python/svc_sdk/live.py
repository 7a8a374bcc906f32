"""A unit's output logs as they stream: from its serial link (:meth:`Unit.subscribe
<svc_sdk.Unit.subscribe>`), from the UDP datagrams of an Ethernet output (:func:`udp`)
or from a log file as it grows (:func:`follow`): the same code reads live and recorded
data.

A :class:`LiveStream` is an iterator of records, one dict per record keyed as the
columns of its message's table (``message``, ``timestamp`` in µs, then the vendor's
column titles; the same values as :mod:`svc_sdk.logs`)::

    with unit.subscribe(["ekfNav"]) as stream:          # doctest: +SKIP
        for record in stream:
            print(record["latitude"], record["longitude"])

or of batches of Arrow tables, for plots and DataFrames (:meth:`LiveStream.batch`,
:meth:`LiveStream.batches`)::

    for batch in stream.batches(timeout=0.5):           # doctest: +SKIP
        if "ekfNav" in batch.names():
            df = batch.frame("ekfNav")

Each stream has a bounded buffer (``capacity`` frames): a consumer that falls behind
never slows the unit's other calls; the frames that find the buffer full are dropped,
counted in :attr:`LiveStream.stats` and reported, by a :class:`DroppedFramesWarning`
when iterating records and in :attr:`Batch.dropped`. A file source waits for room
instead (nothing is dropped). The asyncio form is :class:`svc_sdk.aio.AsyncLiveStream`.
"""

from __future__ import annotations

import os
import warnings
from types import TracebackType
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

from svc_sdk import _native

__all__ = [
    "DEFAULT_CAPACITY",
    "Batch",
    "DroppedFramesWarning",
    "LiveStream",
    "follow",
    "udp",
]

#: The default buffer of a stream, in frames (8 s of ``imuData`` at 1 kHz).
DEFAULT_CAPACITY: int = _native.DEFAULT_LIVE_CAPACITY


class DroppedFramesWarning(UserWarning):
    """Frames were dropped because the consumer did not keep up; ``frames`` says how
    many, at this place of the stream."""

    def __init__(self, frames: int) -> None:
        super().__init__(f"{frames} log frames dropped: the consumer did not keep up")
        self.frames = frames


class Batch:
    """The records a :meth:`LiveStream.batch` took, as one Arrow table per message."""

    def __init__(self, native: _native.Recording) -> None:
        self._native = native
        stats = native.stats()
        #: Rows added to the tables.
        self.records: int = stats["records"]
        #: Frames taken.
        self.frames: int = stats["frames"]
        #: Frames dropped before or among these (the consumer fell behind).
        self.dropped: int = stats["dropped"]
        #: The source ended cleanly (a followed file that stopped growing).
        self.ended: bool = bool(stats["ended"])

    def names(self) -> list[str]:
        """The messages in this batch, sorted."""
        return self._native.names()

    def table(self, name: str) -> Any:
        """The rows of message ``name`` as a ``pyarrow.Table`` (the ``arrow`` extra);
        ``NotFoundError`` when the batch has none."""
        try:
            import pyarrow  # type: ignore[import-untyped, unused-ignore]
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("table() needs pyarrow: pip install 'svc-sdk[arrow]'") from e
        return pyarrow.table(self._native.table(name))

    def frame(self, name: str) -> Any:
        """The rows of message ``name`` as a pandas ``DataFrame``."""
        return self.table(name).to_pandas()

    def __len__(self) -> int:
        return self.records

    def __repr__(self) -> str:
        return f"Batch(records={self.records}, dropped={self.dropped}, names={self.names()!r})"


def _item(kind: str, value: Any) -> Optional[dict[str, Any]]:
    """The record of an item of the native stream; ``None`` for a timeout; warns of
    dropped frames (and returns ``None``); raises ``StopIteration`` at the end."""
    if kind == "record":
        record: dict[str, Any] = value
        return record
    if kind == "dropped":
        warnings.warn(DroppedFramesWarning(int(value)), stacklevel=3)
        return None
    if kind == "end":
        raise StopIteration
    return None


class LiveStream:
    """A subscription to a unit's output logs: an iterator of records (dicts) and of
    batches; a context manager (``close()`` on exit). See the module documentation."""

    def __init__(self, native: _native.LiveStream) -> None:
        self._n = native

    @property
    def source(self) -> str:
        """Where the records come from (a serial link, ``udp 127.0.0.1:5600``, a file)."""
        return self._n.source

    @property
    def local_address(self) -> Optional[str]:
        """For a stream from :func:`udp`, the address it listens on (``host:port``)."""
        return self._n.local_address

    @property
    def messages(self) -> list[str]:
        """The messages subscribed to (empty: all)."""
        return self._n.messages

    @property
    def stats(self) -> Mapping[str, int]:
        """``frames`` and ``records`` received, ``dropped`` (the buffer was full),
        ``unknown`` and ``undecodable`` frames skipped."""
        return dict(self._n.stats())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        """The next record, waiting for it (Ctrl-C interrupts the wait)."""
        while True:
            kind, value = self._n.next(None).result()
            record = _item(kind, value)
            if record is not None:
                return record

    def next(self, timeout: float) -> Optional[dict[str, Any]]:
        """The next record, or ``None`` when none came within ``timeout`` seconds;
        ``StopIteration`` once the stream has ended."""
        kind, value = self._n.next(timeout).result()
        return _item(kind, value)

    def batch(self, max_records: int = 65_536, *, timeout: float = 1.0) -> Batch:
        """Waits at most ``timeout`` seconds for the first record, then takes what is
        waiting (at most ``max_records`` frames) as Arrow tables; an empty batch when
        nothing came."""
        return Batch(self._n.batch(max_records, timeout).result())

    def batches(self, max_records: int = 65_536, *, timeout: float = 1.0) -> Iterator[Batch]:
        """Batches until the stream ends (empty ones are skipped): for a plot that
        redraws as they come."""
        while True:
            batch = self.batch(max_records, timeout=timeout)
            if batch.records or batch.dropped:
                yield batch
            if batch.ended:
                return

    def close(self) -> None:
        """Ends the subscription; a wait under way ends the iteration."""
        self._n.close()

    def __enter__(self) -> LiveStream:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LiveStream(source={self.source!r}, messages={self.messages!r})"


def _names(messages: Optional[Iterable[str]]) -> Optional[list[str]]:
    if messages is None:
        return None
    if isinstance(messages, str):
        return [name.strip() for name in messages.split(",") if name.strip()]
    return list(messages)


def udp(
    address: str,
    messages: Optional[Iterable[str]] = None,
    *,
    capacity: int = DEFAULT_CAPACITY,
) -> LiveStream:
    """Listens on the UDP ``address`` (``"0.0.0.0:5600"``; port 0 for any) for the
    datagrams of a unit's Ethernet output (``ports.ethN`` in ``udp`` mode); only
    ``messages`` (names as the unit's settings have them; all by default)."""
    return LiveStream(_native.live_udp(address, _names(messages), capacity))


def follow(
    path: Union[str, "os.PathLike[str]"],
    messages: Optional[Iterable[str]] = None,
    *,
    capacity: int = DEFAULT_CAPACITY,
    idle_end: Optional[float] = None,
) -> LiveStream:
    """Reads the log file at ``path`` from its start, then as it grows (a session
    being recorded, ``svc device stream --record``). With ``idle_end``, the stream ends
    once the file has not grown for that many seconds; without, it waits until
    closed. ``NotFoundError`` for a missing file."""
    return LiveStream(_native.live_follow(os.fspath(path), _names(messages), capacity, idle_end))
