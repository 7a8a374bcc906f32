"""The records of the cloud service: read-only mappings with the wire's field names
(``record["processingProgress"]``), typed properties in Python's names
(``record.processing_progress``), ``to_dict()`` for a plain ``dict``, and an HTML view
in notebooks (``_repr_html_``).

A field the service did not send reads as ``None`` through its property (and is
absent from the mapping); fields this SDK does not know are kept in the mapping. Record
``repr``\\s never show a secret (a webhook endpoint's ``secret`` is ``[redacted]``).
"""

from __future__ import annotations

import datetime as _dt
import html
from typing import Any, Iterator, Mapping, Optional

__all__ = [
    "Container",
    "ContainerFile",
    "MissedWebhook",
    "OutputFile",
    "Processing",
    "ProcessingError",
    "Record",
    "ServerInfo",
    "WebhookEndpoint",
]

#: Field names whose values are never shown.
_SECRET_FIELDS = frozenset({"secret"})


def _timestamp(value: Any) -> Optional[_dt.datetime]:
    """An RFC 3339 timestamp of the wire as an aware ``datetime`` (UTC)."""
    if not isinstance(value, str):
        return None
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    # Python 3.9/3.10 read at most 6 fraction digits.
    if "." in text:
        head, _, rest = text.partition(".")
        digits = "".join(c for c in rest if c.isdigit())
        zone = rest[len(digits):]
        text = f"{head}.{digits[:6].ljust(6, '0')}{zone}"
    try:
        return _dt.datetime.fromisoformat(text).astimezone(_dt.timezone.utc)
    except ValueError:
        return None


class Record(Mapping[str, Any]):
    """A record of the service, as it was sent (see the module documentation)."""

    __slots__ = ("_data",)

    #: The fields shown first by ``repr`` and the HTML view.
    _SUMMARY: tuple[str, ...] = ("id",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """The record as a plain ``dict`` (a copy; secrets included)."""
        return dict(self._data)

    def _shown(self, key: str) -> Any:
        return "[redacted]" if key in _SECRET_FIELDS else self._data.get(key)

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{key}={self._shown(key)!r}" for key in self._SUMMARY if key in self._data
        )
        return f"{type(self).__name__}({fields})"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(key)}</th>"
            f"<td style='text-align:left'>{html.escape(repr(self._shown(key)))}</td></tr>"
            for key in self._data
        )
        return f"<table><caption>{type(self).__name__}</caption>{rows}</table>"


class Processing(Record):
    """A processing (``getProcessing``)."""

    __slots__ = ()
    _SUMMARY = ("id", "name", "status", "processingResult", "processingStep", "processingProgress")

    @property
    def id(self) -> str:
        return str(self._data["id"])

    @property
    def name(self) -> Optional[str]:
        return self._data.get("name")

    @property
    def status(self) -> str:
        """``pending``, ``processing``, ``processed``, ``canceled``, ``archived`` (or a
        newer value)."""
        return str(self._data.get("status"))

    @property
    def processing_result(self) -> Optional[str]:
        """``succeeded``, ``failed``, or ``None`` until the processing ends."""
        return self._data.get("processingResult")

    @property
    def processing_step(self) -> Optional[str]:
        return self._data.get("processingStep")

    @property
    def processing_progress(self) -> Optional[float]:
        return self._data.get("processingProgress")

    @property
    def container_id(self) -> Optional[str]:
        return self._data.get("containerId")

    @property
    def created_at(self) -> Optional[_dt.datetime]:
        return _timestamp(self._data.get("createdAt"))

    @property
    def updated_at(self) -> Optional[_dt.datetime]:
        return _timestamp(self._data.get("updatedAt"))

    @property
    def ended(self) -> bool:
        """Whether it has reached its end (``processed``, ``canceled``, ``archived``)."""
        return self.status in ("processed", "canceled", "archived")

    @property
    def succeeded(self) -> bool:
        return self.status == "processed" and self.processing_result == "succeeded"


class ContainerFile(Record):
    """A file of a container."""

    __slots__ = ()
    _SUMMARY = ("id", "path", "type", "size", "status")

    @property
    def id(self) -> str:
        return str(self._data["id"])

    @property
    def path(self) -> str:
        return str(self._data.get("path"))

    @property
    def type(self) -> Optional[str]:
        return self._data.get("type")

    @property
    def size(self) -> Optional[int]:
        return self._data.get("size")

    @property
    def status(self) -> Optional[str]:
        return self._data.get("status")

    @property
    def upload_info(self) -> Optional[dict[str, Any]]:
        return self._data.get("uploadInfo")


class Container(Record):
    """A container of files."""

    __slots__ = ()
    _SUMMARY = ("id", "status", "region")

    @property
    def id(self) -> str:
        return str(self._data["id"])

    @property
    def status(self) -> Optional[str]:
        return self._data.get("status")

    @property
    def region(self) -> Optional[str]:
        return self._data.get("region")

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self._data.get("metadata") or {})

    @property
    def files(self) -> list[ContainerFile]:
        return [ContainerFile(f) for f in self._data.get("files") or []]

    @property
    def created_at(self) -> Optional[_dt.datetime]:
        return _timestamp(self._data.get("createdAt"))

    @property
    def expiration_date(self) -> Optional[_dt.datetime]:
        return _timestamp(self._data.get("expirationDate"))


class OutputFile(Record):
    """An output of a processing: its path and a pre-signed download address."""

    __slots__ = ()
    _SUMMARY = ("path",)

    @property
    def path(self) -> str:
        return str(self._data.get("path"))

    @property
    def url(self) -> str:
        return str(self._data.get("url"))

    def __repr__(self) -> str:
        # The address is signed: not shown.
        return f"OutputFile(path={self.path!r})"


class ProcessingError(Record):
    """An error or warning recorded by a processing."""

    __slots__ = ()
    _SUMMARY = ("level", "message")

    @property
    def level(self) -> Optional[str]:
        return self._data.get("level")

    @property
    def message(self) -> Optional[str]:
        return self._data.get("message")


class WebhookEndpoint(Record):
    """A webhook endpoint. Its ``secret`` is readable (``endpoint.secret``) but never
    shown by ``repr`` or the HTML view."""

    __slots__ = ()
    _SUMMARY = ("id", "url", "enabled", "enabledEventTypes", "secret")

    @property
    def id(self) -> str:
        return str(self._data["id"])

    @property
    def url(self) -> Optional[str]:
        return self._data.get("url")

    @property
    def secret(self) -> Optional[str]:
        return self._data.get("secret")


class MissedWebhook(Record):
    """A delivery that failed after every retry."""

    __slots__ = ()
    _SUMMARY = ("id", "eventType")


class ServerInfo(Record):
    """The service's versions and the status of each region."""

    __slots__ = ()
    _SUMMARY = ("version",)
