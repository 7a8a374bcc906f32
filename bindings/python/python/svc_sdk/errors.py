"""The exceptions of the SDK.

Every failure is an :class:`SvcError`. Its class says two things, each catchable on its
own:

- the *kind* of failure, the same few cases whatever the subsystem (the strings of
  ``svc_core::ErrorKind::as_str()``): :class:`AuthenticationError`,
  :class:`PermissionDeniedError`, :class:`NotFoundError`, :class:`ConflictError`,
  :class:`InvalidInputError`, :class:`UnreachableError`, :class:`TransientError`,
  :class:`CanceledError`, :class:`WaitTimeoutError`, :class:`InvalidResponseError`
  (the kinds ``verification``, ``io`` and ``internal`` have no class of their own:
  test :attr:`SvcError.kind`);
- the *subsystem* that failed, when it has details of its own:
  :class:`TransferError`, :class:`WorkflowError`, :class:`WebhookVerificationError`
  (with :attr:`~WebhookVerificationError.code`), :class:`SettingsError` (with
  :attr:`~SettingsError.paths`).

A failure that is both is raised as a class inheriting from both, so that a workflow
conflict is caught by ``except WorkflowError`` and by ``except ConflictError``::

    try:
        ...
    except ConflictError as error:     # whatever the subsystem
        print(error.kind, error.status, error.title)

Messages, ``str()`` and ``repr()`` never contain a secret (keys, tokens, passwords,
webhook secrets, setting values of password nodes).

This module is pure Python (the native module raises these classes; a stable-ABI
extension cannot subclass exceptions itself) and imports nothing but the standard
library.
"""

from __future__ import annotations

import builtins
import errno as _errno
from typing import Any, ClassVar, NamedTuple

from . import _native

__all__ = [
    "AuthenticationError",
    "CanceledError",
    "ConflictError",
    "InvalidInputError",
    "InvalidResponseError",
    "LocalFileError",
    "NodeError",
    "NotFoundError",
    "PermissionDeniedError",
    "SettingsError",
    "SvcError",
    "TransferError",
    "TransientError",
    "UnreachableError",
    "WaitTimeoutError",
    "WebhookVerificationError",
    "WorkflowError",
    "ProcessingFailedError",
]

#: Every kind, as ``svc_core::ErrorKind::as_str()`` names them.
KINDS = (
    "authentication",
    "permission_denied",
    "not_found",
    "conflict",
    "invalid_input",
    "unreachable",
    "transient",
    "canceled",
    "timeout",
    "invalid_response",
    "verification",
    "io",
    "internal",
)

#: The kinds for which repeating the same request later, unchanged, may succeed
#: (svc-core's one rule, whatever the error's source).
_RETRYABLE_KINDS = frozenset(_native.RETRYABLE_KINDS)


class NodeError(NamedTuple):
    """A node of a settings tree that the unit (or the SDK) refused, and why."""

    path: str
    message: str


class SvcError(Exception):
    """Any failure of the SDK.

    Attributes:
        kind: what kind of failure it is (one of :data:`KINDS`).
        retryable: whether repeating the same request later, unchanged, may succeed.
        status: the HTTP status of the answer that failed, if any (for the unit's
            logger files: the FTP reply code of the refused command, 530 or 550).
        title: the service's or unit's short description of the problem, if any.
        details: the service's or unit's longer explanation, if any.
        side: which side failed: ``"service"``, ``"identity_provider"``, ``"storage"``
            or ``"unit"``; ``None`` for a local failure (the SDK's checks before
            sending, a local file, a cancellation). A request without an answer in
            time raises :class:`WaitTimeoutError` whichever side was silent; ``side``
            tells them apart.
        operation: the service's operation that failed (its ``operationId``, e.g.
            ``"getContainer"``), if any.
    """

    #: The kind of an error of this class built without ``kind=``.
    default_kind: ClassVar[str] = "internal"
    _extra_defaults: ClassVar[dict[str, Any]] = {"operation": lambda: None}

    kind: str
    operation: str | None
    retryable: bool
    status: int | None
    title: str | None
    details: str | None
    side: str | None

    def __init__(
        self,
        message: str = "",
        *,
        kind: str | None = None,
        retryable: bool | None = None,
        status: int | None = None,
        title: str | None = None,
        details: str | None = None,
        side: str | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.kind = kind if kind is not None else type(self).default_kind
        self.retryable = retryable if retryable is not None else self.kind in _RETRYABLE_KINDS
        self.status = status
        self.title = title
        self.details = details
        self.side = side
        for klass in reversed(type(self).__mro__):
            for name, default in vars(klass).get("_extra_defaults", {}).items():
                setattr(self, name, default())
        for name, value in extra.items():
            setattr(self, name, value)

    @property
    def message(self) -> str:
        """The message (what ``str()`` gives)."""
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        shown = [repr(self.message), f"kind={self.kind!r}"]
        if self.status is not None:
            shown.append(f"status={self.status}")
        if self.title is not None:
            shown.append(f"title={self.title!r}")
        if self.side is not None:
            shown.append(f"side={self.side!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def _repr_html_(self) -> str:
        """The notebook view: the class, the message and what the error says of itself
        (kind, side, status, title, details, retryable); never a secret."""
        import html

        shown = [
            ("kind", self.kind),
            ("side", self.side),
            ("status", self.status),
            ("title", self.title),
            ("details", self.details),
            ("retryable", self.retryable),
        ]
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(label)}</th>"
            f"<td style='text-align:left'>{html.escape(str(value))}</td></tr>"
            for label, value in shown
            if value is not None
        )
        return (
            f"<p><b>{html.escape(type(self).__name__)}</b>: {html.escape(self.message)}</p>"
            f"<table>{rows}</table>"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments and dynamically made classes: rebuilt by name.
        state = dict(vars(self))
        return (_rebuild, (type(self).__name__, self.message, state))


def _rebuild(class_name: str, message: str, state: dict[str, Any]) -> SvcError:
    klass = globals().get(class_name) or __getattr__(class_name)
    error: SvcError = klass(message)
    for name, value in state.items():
        setattr(error, name, value)
    return error


# --- Kinds -------------------------------------------------------------------------


class AuthenticationError(SvcError):
    """The credentials were refused (API key and secret, a 401, a unit user or password)."""

    default_kind = "authentication"


class PermissionDeniedError(SvcError):
    """Known credentials without the right (a 403: role, scope, credits, unit rights)."""

    default_kind = "permission_denied"


class NotFoundError(SvcError):
    """The resource does not exist (a 404)."""

    default_kind = "not_found"


class ConflictError(SvcError):
    """The request conflicts with the current state (a 409: a processing running, the
    unit's settings locked by someone else, a path taken)."""

    default_kind = "conflict"


class InvalidInputError(SvcError, ValueError):
    """The request is invalid (refused by the SDK's checks or by the other side: 400,
    413, 422); change it before repeating it.

    Attributes:
        node_errors: the settings nodes refused, each with its reason (empty when the
            failure is not about settings nodes).
    """

    default_kind = "invalid_input"
    _extra_defaults: ClassVar[dict[str, Any]] = {"node_errors": list}
    node_errors: list[NodeError]


class UnreachableError(SvcError):
    """The service, identity provider, storage or unit could not be reached, or the
    connection broke. Repeating later may help."""

    default_kind = "unreachable"


class TransientError(SvcError):
    """A transient failure of the other side (5xx, 429, retries used up). Repeating
    later may help."""

    default_kind = "transient"


class CanceledError(SvcError):
    """The operation was canceled by the caller."""

    default_kind = "canceled"


class WaitTimeoutError(SvcError, builtins.TimeoutError):
    """A wait ran out: a request of the service, its identity provider or the unit
    without an answer within its timeout (:attr:`~SvcError.side` says which was silent),
    a processing not ended, a unit not back after a reboot. Also a built-in
    :class:`TimeoutError`."""

    default_kind = "timeout"


class InvalidResponseError(SvcError):
    """The other side answered something the SDK cannot read, or did not do what it
    acknowledged."""

    default_kind = "invalid_response"


class LocalFileError(SvcError, OSError):
    """A local file could not be read or written (an input, a configuration, an
    output folder). Also a built-in :class:`OSError` with ``errno``, ``strerror`` and
    ``filename``; a missing file is also a :class:`FileNotFoundError`, a refused one a
    :class:`PermissionError` (and so on for the other OS errors with their own class),
    so ``except FileNotFoundError`` catches it as it catches ``open()``'s."""

    default_kind = "io"

    def __reduce__(self) -> tuple[Any, ...]:
        # OSError keeps these outside the instance's __dict__.
        state = dict(vars(self))
        state.update(errno=self.errno, strerror=self.strerror, filename=self.filename)
        return (_rebuild, (type(self).__name__, self.message, state))


# --- Subsystems --------------------------------------------------------------------


class TransferError(SvcError):
    """An upload or a download failed.

    Attributes:
        failures: the message of each failed file.
    """

    _extra_defaults: ClassVar[dict[str, Any]] = {"failures": list}
    failures: list[str]


class WorkflowError(SvcError):
    """The one-call workflow (container, uploads, processing, outputs) failed.

    Attributes:
        container_id: the container it had created, if any (it stays in the cloud
            unless ``cleaned_up``).
        processing_id: the processing it had started, if any (it goes on in the cloud).
        cleaned_up: whether the container was deleted (``cleanup_on_failure``).
    """

    _extra_defaults: ClassVar[dict[str, Any]] = {
        "container_id": lambda: None,
        "processing_id": lambda: None,
        "cleaned_up": lambda: False,
    }
    container_id: str | None
    processing_id: str | None
    cleaned_up: bool


class ProcessingFailedError(SvcError):
    """A processing ended without succeeding (:meth:`WorkflowOutcome.raise_for_status
    <svc_sdk.WorkflowOutcome.raise_for_status>`): its inputs or configuration could
    not be processed (``kind`` ``invalid_input``; also an :class:`InvalidInputError`).

    Attributes:
        processing_id: the processing.
        processing_status: how it ended (``processed``, ``canceled``, ``archived``).
        result: its result (``failed``), if any.
        errors: the messages of its errors of level ``error``.
    """

    default_kind: ClassVar[str] = "invalid_input"
    _extra_defaults: ClassVar[dict[str, Any]] = {
        "processing_id": lambda: None,
        "processing_status": lambda: None,
        "result": lambda: None,
        "errors": list,
    }
    processing_id: str | None
    processing_status: str | None
    result: str | None
    errors: list[str]


class WebhookVerificationError(SvcError):
    """A webhook delivery failed its verification.

    Attributes:
        code: which check failed: ``missing_header``, ``invalid_timestamp``,
            ``too_old``, ``too_new``, ``bad_signature``, ``invalid_payload``,
            ``untyped_event`` or ``no_secret`` (the same codes in every language of
            the SDK).
        raw: for ``untyped_event`` (the signature holds, the body is JSON but not an
            event this SDK can read: its ``id``, ``eventType`` or ``payload`` is missing
            or of another type), the body as it came; else None.
    """

    default_kind = "verification"
    _extra_defaults: ClassVar[dict[str, Any]] = {"code": str, "raw": lambda: None}
    code: str
    raw: dict[str, Any] | None


class SettingsError(SvcError):
    """A settings tree, node path or patch is refused.

    Attributes:
        paths: the nodes concerned, if any (for instance the removed nodes a write
            cannot express).
    """

    default_kind = "invalid_input"
    _extra_defaults: ClassVar[dict[str, Any]] = {"paths": list}
    paths: list[str]


_KIND_CLASSES: dict[str, type[SvcError]] = {
    "authentication": AuthenticationError,
    "permission_denied": PermissionDeniedError,
    "not_found": NotFoundError,
    "conflict": ConflictError,
    "invalid_input": InvalidInputError,
    "unreachable": UnreachableError,
    "transient": TransientError,
    "canceled": CanceledError,
    "timeout": WaitTimeoutError,
    "invalid_response": InvalidResponseError,
    "io": LocalFileError,
}

#: errno -> the built-in OS error class a :class:`LocalFileError` also is, and the end
#: of the combined class's name (``LocalFileNotFoundError``).
_OS_CLASSES: dict[int, tuple[type[OSError], str]] = {
    _errno.ENOENT: (FileNotFoundError, "NotFoundError"),
    _errno.EACCES: (PermissionError, "PermissionError"),
    _errno.EPERM: (PermissionError, "PermissionError"),
    _errno.EISDIR: (IsADirectoryError, "IsADirectoryError"),
    _errno.ENOTDIR: (NotADirectoryError, "NotADirectoryError"),
    _errno.EEXIST: (FileExistsError, "ExistsError"),
}

#: Subsystem name (as the native module gives it) -> class. Add an entry for a new
#: subsystem with details of its own.
_SUBSYSTEM_CLASSES: dict[str, type[SvcError]] = {
    "transfer": TransferError,
    "workflow": WorkflowError,
    "processing": ProcessingFailedError,
    "webhook": WebhookVerificationError,
    "settings": SettingsError,
}

_combined: dict[tuple[str, str], type[SvcError]] = {}


def _error_class(kind: str, subsystem: str | None = None) -> type[SvcError]:
    """The class of a failure of `kind` in `subsystem`: the subsystem's class and the
    kind's class when both exist (a class inheriting from both, made once), else the
    one that exists, else :class:`SvcError`. Unknown kinds and subsystems are no error
    (a newer native module may report more): they fall back the same way."""
    kind_class = _KIND_CLASSES.get(kind)
    sub_class = _SUBSYSTEM_CLASSES.get(subsystem) if subsystem is not None else None
    if sub_class is None:
        return kind_class or SvcError
    if kind_class is None or issubclass(sub_class, kind_class):
        return sub_class
    key = (sub_class.__name__, kind_class.__name__)
    combined = _combined.get(key)
    if combined is None:
        name = sub_class.__name__.removesuffix("Error") + kind_class.__name__
        combined = type(
            name,
            (sub_class, kind_class),
            {
                "__module__": __name__,
                "__qualname__": name,
                "__doc__": f"A {sub_class.__name__} that is also a {kind_class.__name__}.",
                "default_kind": kind,
            },
        )
        _combined[key] = combined
    return combined


def _os_error_class(klass: type[SvcError], errno: int) -> type[SvcError]:
    """`klass` (a :class:`LocalFileError`) combined with the built-in OS error class of
    `errno` (``FileNotFoundError`` for ``ENOENT``...), made once; `klass` itself when
    errno has no class of its own."""
    found = _OS_CLASSES.get(errno)
    if found is None:
        return klass
    os_class, suffix = found
    name = klass.__name__.removesuffix("Error") + suffix
    key = (klass.__name__, name)
    combined = _combined.get(key)
    if combined is None:
        combined = type(
            name,
            (klass, os_class),
            {
                "__module__": __name__,
                "__qualname__": name,
                "__doc__": f"A {klass.__name__} that is also a {os_class.__name__}.",
            },
        )
        _combined[key] = combined
    return combined


def __getattr__(name: str) -> type[SvcError]:
    """The combined classes by name (``WorkflowConflictError``,
    ``LocalFileNotFoundError``), for pickling and for
    ``except svc_sdk.errors.WorkflowConflictError``."""
    bases: list[type[SvcError]] = [LocalFileError]
    for subsystem, sub_class in _SUBSYSTEM_CLASSES.items():
        prefix = sub_class.__name__.removesuffix("Error")
        for kind, kind_class in _KIND_CLASSES.items():
            if name == prefix + kind_class.__name__:
                return _error_class(kind, subsystem)
        bases.append(_error_class("io", subsystem))
    for base in bases:
        for errno, (_, suffix) in _OS_CLASSES.items():
            if name == base.__name__.removesuffix("Error") + suffix:
                return _os_error_class(base, errno)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _new_error(
    message: str,
    *,
    kind: str,
    subsystem: str | None = None,
    **attributes: Any,
) -> SvcError:
    """The exception for a failure, as the native module builds it (keyword arguments:
    ``retryable``, ``status``, ``title``, ``details``, the subsystem's own, and for a
    local file ``errno``, ``strerror`` and ``filename``)."""
    klass = _error_class(kind, subsystem)
    errno = attributes.get("errno")
    if isinstance(errno, int) and issubclass(klass, OSError):
        klass = _os_error_class(klass, errno)
    return klass(message, kind=kind, **attributes)
