"""A unit's recordings: the sbgECom binary logs its data logger records (the files of a
session, downloaded with ``svc device logger download``), decoded into tables, one per
message type, named as the unit's settings name them (``ekfNav``, ``imuData``, ...).

    >>> rec = svc_sdk.logs.read("session/mission.001")      # doctest: +SKIP
    >>> rec.names()                                         # doctest: +SKIP
    ['ekfEuler', 'ekfNav', 'imuShort', 'utcTime']
    >>> rec.table("ekfNav")      # a pyarrow.Table            # doctest: +SKIP
    >>> rec.frame("ekfNav")      # a pandas DataFrame         # doctest: +SKIP
    >>> rec.stats                # {'frames': ..., 'bad_crc': 0, ...}  # doctest: +SKIP

Columns: ``timestamp`` (µs, the unit's time) first, then the columns the vendor's
``sbgBasicLogger`` writes for that message, with its titles (units in each field's
metadata, ``b"unit"``), every value in full precision; ``utcTime`` where the log's
``utcTime`` records make UTC known. Tables cross from the native decoder through the
Arrow C stream interface, without a copy.

Decoding releases the GIL, and a :class:`Recording` pickles as its source (a path, or
the bytes it was read from), so it runs unchanged on Dask workers.
"""

from __future__ import annotations

import os
from typing import IO, Any, Mapping, Sequence, Union

from svc_sdk import _native

__all__ = ["Recording", "read"]

#: What :func:`read` reads: a path, the paths of a session's files in order (a list or
#: a tuple), the bytes of a log, or a binary file object.
Source = Union[
    str,
    "os.PathLike[str]",
    list[Union[str, "os.PathLike[str]"]],
    tuple[Union[str, "os.PathLike[str]"], ...],
    bytes,
    bytearray,
    memoryview,
    IO[bytes],
]

#: What a :class:`Recording` was read from (and pickles as).
_Read = Union[str, bytes, list[str]]


class Recording:
    """A decoded recording: its tables by message type, and the decoder's counters."""

    def __init__(self, native: _native.Recording, source: _Read) -> None:
        self._native = native
        self._source = source

    def names(self) -> list[str]:
        """The message types recorded (the unit's names), sorted."""
        return self._native.names()

    def table(self, name: str) -> Any:
        """The records of message type ``name`` as a ``pyarrow.Table`` (the ``arrow``
        extra: pyarrow 14 or later); ``NotFoundError`` when the recording holds none."""
        try:
            import pyarrow  # type: ignore[import-untyped, unused-ignore]
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("table() needs pyarrow: pip install 'svc-sdk[arrow]'") from e
        return pyarrow.table(self._native.table(name))

    def frame(self, name: str) -> Any:
        """The records of message type ``name`` as a pandas ``DataFrame`` (the
        ``arrow`` and ``pandas`` extras)."""
        return self.table(name).to_pandas()

    @property
    def stats(self) -> Mapping[str, int]:
        """The decoder's counters: ``bytes``, ``frames``, ``records``, ``bad_crc``,
        ``unknown``, ``truncated``, ``skipped_bytes``, ``invalid_payload``."""
        return dict(self._native.stats())

    def __reduce__(self) -> tuple[Any, tuple[_Read]]:
        return (read, (self._source,))

    def __repr__(self) -> str:
        shown: Any = self._source
        if isinstance(self._source, bytes):
            shown = f"<{len(self._source)} bytes>"
        return f"Recording({shown!r}, names={self.names()!r})"


def read(source: Source) -> Recording:
    """Decodes a recording: a path, the paths of a session's files in order
    (``mission.001``, ``mission.002``, … read as one stream, as the unit wrote them: the
    unit's clock and UTC carry over from file to file), the bytes of a log, or a binary
    file object (read whole). Garbage between frames, bad CRCs, unknown messages and a
    truncated end are skipped and counted (:attr:`Recording.stats`).
    ``InvalidInputError`` for data that holds no sbgECom frame at all; ``NotFoundError``
    for a missing file."""
    data: _Read
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, os.PathLike)):
        data = os.fspath(source)
    elif isinstance(source, (list, tuple)):
        paths: Sequence[Union[str, os.PathLike[str]]] = source
        data = [os.fspath(path) for path in paths]
    else:
        data = source.read()
        if not isinstance(data, bytes):
            raise TypeError("read() needs a binary file object (opened with 'rb')")
    return Recording(_native.read_recording(data), data)
