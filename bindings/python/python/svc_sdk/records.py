"""The records of the cloud service: read-only mappings with the wire's field names
(``record["processingProgress"]``), typed properties in Python's names
(``record.processing_progress``), ``to_dict()`` for a plain ``dict``, and an HTML view
in notebooks (``_repr_html_``).

A field the service did not send reads as ``None`` through its property (and is
absent from the mapping); fields this SDK does not know are kept in the mapping. Neither
``repr`` nor the HTML view shows a secret: a webhook endpoint's ``secret``, the signed
address of an output file (``url``) and a file's signed upload form (``uploadInfo``) read
``[redacted]`` there (their properties and ``to_dict()`` give them).
"""

from __future__ import annotations

import datetime as _dt
import html
import re
import urllib.parse
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

#: The text shown in place of a secret.
_REDACTED = "[redacted]"


def _shown_address(address: Any) -> Any:
    """An address as it may be shown: without user information, query or fragment
    (credentials or a token may be written into it)."""
    if not isinstance(address, str):
        return address
    parts = urllib.parse.urlsplit(address)
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def _without(value: Any, hidden: frozenset[str]) -> Any:
    """`value` with the values of the fields named in `hidden` replaced, at any depth."""
    if isinstance(value, Mapping):
        return {k: _REDACTED if k in hidden else _without(v, hidden) for k, v in value.items()}
    if isinstance(value, list):
        return [_without(item, hidden) for item in value]
    return value


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))",
    re.ASCII,
)


def _timestamp(value: Any) -> Optional[_dt.datetime]:
    """An RFC 3339 timestamp of the wire (``2026-11-25T10:00:00.123Z``,
    ``...+02:00``) as an aware ``datetime`` in UTC; ``None`` for anything else.

    Parsed here rather than by ``datetime.fromisoformat``, which before Python 3.11
    reads neither ``Z`` nor fractions of other than 3 or 6 digits. Fractions beyond the
    microsecond are cut; a leap second (``:60``) reads as the last microsecond before.
    """
    if not isinstance(value, str):
        return None
    match = _RFC3339.fullmatch(value)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    micro = int((match.group(7) or "").ljust(6, "0")[:6])
    if second == 60:
        second, micro = 59, 999_999
    if match.group(8):
        zone = _dt.timezone.utc
    else:
        hours, minutes = int(match.group(10)), int(match.group(11))
        if hours > 23 or minutes > 59:
            return None
        sign = -1 if match.group(9) == "-" else 1
        zone = _dt.timezone(sign * _dt.timedelta(hours=hours, minutes=minutes))
    try:
        stamp = _dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
        return stamp.astimezone(_dt.timezone.utc)
    except (ValueError, OverflowError):  # no such day, or out of datetime's years in UTC
        return None


class Record(Mapping[str, Any]):
    """A record of the service, as it was sent (see the module documentation)."""

    __slots__ = ("_data",)

    #: The fields shown first by ``repr`` and the HTML view.
    _SUMMARY: tuple[str, ...] = ("id",)
    #: The fields never shown, at any depth: secrets, and signed storage addresses and
    #: upload forms (anyone holding them can read or write the file until they expire).
    _HIDDEN: frozenset[str] = frozenset({"secret"})

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

    #: The fields holding an address shown without its credentials nor query.
    _ADDRESSES: frozenset[str] = frozenset()

    def _shown(self, key: str) -> Any:
        if key in self._HIDDEN:
            return _REDACTED
        if key in self._ADDRESSES:
            return _shown_address(self._data.get(key))
        return _without(self._data.get(key), self._HIDDEN)

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
    _HIDDEN = Record._HIDDEN | {"uploadInfo"}

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
    _HIDDEN = Record._HIDDEN | {"uploadInfo"}

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
    _HIDDEN = Record._HIDDEN | {"url"}

    @property
    def path(self) -> str:
        return str(self._data.get("path"))

    @property
    def url(self) -> str:
        return str(self._data.get("url"))


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
    _ADDRESSES = frozenset({"url"})

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
