"""A session with an inertial navigation unit: over its HTTP interface
(:meth:`Unit.http`), a local serial port (:meth:`Unit.serial`) or a serial-over-IP
bridge (:meth:`Unit.serial_tcp`) — the same operations on every link.

>>> unit = Unit.http("http://192.168.1.1")                    # doctest: +SKIP
>>> unit.login("setup", "secret")                             # doctest: +SKIP
>>> with unit.locked():                                       # doctest: +SKIP
...     unit.apply({"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}}})

Settings trees are dicts (key order kept; ``True`` is not ``1``; NaN is refused).
Failures raise :class:`~svc_sdk.errors.SvcError` subclasses: a refused write is an
``InvalidInputError`` whose ``node_errors`` name every invalid node, a write while
another session holds the lock a ``ConflictError``, a missing right a
``PermissionDeniedError``. Passwords never appear in ``repr`` or messages.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterable, Iterator, Mapping, Optional, TypedDict

from svc_sdk import _native
from svc_sdk._calls import Pending, blocking
from svc_sdk.errors import SvcError
from svc_sdk.live import DEFAULT_CAPACITY, LiveStream, _names

__all__ = [
    "Unit",
    "WriteOutcome",
    "ApplyReport",
    "USERS",
    "LoggerFiles",
    "LoggerSession",
    "LoggerFile",
    "Downloaded",
    "Readiness",
]

#: The unit's users, lowest role first.
USERS = ("viewer", "operator", "powerUser", "setup", "factory")


class WriteOutcome(TypedDict):
    """The answer of a settings write."""

    need_reboot: bool


class ApplyReport(TypedDict):
    """What :meth:`Unit.apply` did."""

    changed: list[str]
    need_reboot: bool
    written: bool
    rebooted: bool
    #: A reboot was asked for and needed, and its answer was lost without the unit
    #: being seen to reboot: the change is written and saved; reboot it again.
    reboot_pending: bool
    #: The unlock's answer was lost (the change is written and confirmed); the unit
    #: ends the lock after 60 s without a request, or at a reboot.
    unlock_unconfirmed: bool


class LoggerFile(TypedDict):
    """One file of a logger session."""

    #: ``<session>.NNN``.
    name: str
    #: Its size now, in bytes.
    size: int


class LoggerSession(TypedDict):
    """One session of the unit's data logger."""

    #: The session's folder name.
    name: str
    #: The bytes of all its files.
    size: int
    #: Whether the data logger is writing it now.
    recording: Optional[bool]
    #: Its files, in order.
    files: list[LoggerFile]


class Downloaded(TypedDict):
    """What :meth:`LoggerFiles.download` wrote."""

    #: The files written (``dest/<session>/<file>``), in order.
    files: list[str]
    #: Their bytes.
    bytes: int
    #: How many times a dropped transfer was resumed.
    resumed: int
    #: Whether what was downloaded was then deleted from the unit.
    deleted: bool


class _Logger:
    """What :class:`LoggerFiles` and :class:`~svc_sdk.aio.AsyncLoggerFiles` share."""

    _n: _native.LoggerFiles

    @property
    def address(self) -> str:
        """The FTP server, ``host:port``."""
        return self._n.address

    @property
    def user(self) -> str:
        """The FTP user."""
        return self._n.user

    def __repr__(self) -> str:
        return repr(self._n)


class _logger_ops:
    """The logger files' operations, each written once: the methods of
    :class:`LoggerFiles` and of :class:`~svc_sdk.aio.AsyncLoggerFiles`."""

    @staticmethod
    def sessions(f: _Logger) -> Pending[list[LoggerSession]]:
        """The sessions and their files (names in order, sizes now), ``recording`` said
        by the data logger's status (read over the unit's session)."""
        return Pending(f._n.sessions())

    @staticmethod
    def download(
        f: _Logger, name: str, dest: str | os.PathLike[str], *, delete_after: bool = False
    ) -> Pending[Downloaded]:
        """Downloads a session (``NAME``: every file) or one file (``NAME/FILE``) into
        ``dest/<session>/``. Each file is written to ``<file>.part``, resumed after a
        dropped connection, its size checked, then renamed (a ``.part`` left by an
        interrupted download is resumed). With ``delete_after``, what was downloaded
        is then deleted from the unit, and only if the unit still lists it as it was
        downloaded (else ``ConflictError``, nothing deleted)."""
        return Pending(f._n.download(name, os.fspath(dest), delete_after))

    @staticmethod
    def delete(f: _Logger, session: str) -> Pending[None]:
        """Deletes a session from the unit (needs the ``FTP`` ``WRITE`` right: operator
        and above; the session being recorded is refused)."""
        return Pending(f._n.delete(session))


class LoggerFiles(_Logger):
    """The unit's data logger sessions over FTP (its ``FTP`` right: ``READ`` lists and
    downloads, ``WRITE`` also deletes), from :meth:`Unit.logger_files`. Each call opens
    its own connection; thread-safe.

    >>> files = unit.logger_files()                          # doctest: +SKIP
    >>> [s["name"] for s in files.sessions()]                # doctest: +SKIP
    ['20261129_081500']
    >>> files.download("20261129_081500", "sessions")        # doctest: +SKIP
    {'files': ['sessions/20261129_081500/20261129_081500.001'], 'bytes': 1048321, ...}

    Failures raise :class:`~svc_sdk.errors.SvcError` subclasses: a refused login an
    ``AuthenticationError`` (``status`` 530), a missing right a
    ``PermissionDeniedError`` (550), a session not listed a ``NotFoundError``.
    """

    def __init__(self, native: _native.LoggerFiles) -> None:
        self._n = native

    sessions = blocking(_logger_ops.sessions)
    download = blocking(_logger_ops.download)
    delete = blocking(_logger_ops.delete)


class Readiness(TypedDict):
    """What a unit's output logs last said of its readiness to log
    (:meth:`Unit.wait_ready`)."""

    #: The best GNSS position of ``gps1Pos``/``gps2Pos``: ``"single"``,
    #: ``"differential"``, ``"rtkFloat"``, ``"rtkFixed"``, ``"none"`` (no solution), or
    #: ``None`` when none was received.
    fix: Optional[str]
    #: The filter's mode (``"NavPosition"`` once aligned, ``"Ahrs"``,
    #: ``"VerticalGyro"``...), ``None`` when none was received.
    filter: Optional[str]
    #: Whether UTC was valid in the last ``utcTime`` (``None``: none received).
    utc_valid: Optional[bool]


class _Session:
    """What :class:`Unit` and :class:`~svc_sdk.aio.AsyncUnit` share."""

    _n: _native.Unit

    @property
    def link(self) -> str:
        return self._n.link

    @property
    def user(self) -> Optional[str]:
        """The logged-in user, or ``None`` (requests act as the default user)."""
        return self._n.user


class _ops:
    """The unit's operations, each written once: the methods of :class:`Unit` and of
    :class:`~svc_sdk.aio.AsyncUnit`."""

    # --------------------------------------------------------------- session

    @staticmethod
    def login(u: _Session, user: str, password: str = "") -> Pending[None]:
        """Logs in; after a reboot the session logs in again by itself."""
        return Pending(u._n.login(user, password))

    @staticmethod
    def logout(u: _Session) -> Pending[None]:
        return Pending(u._n.logout())

    @staticmethod
    def change_password(u: _Session, password: str, *, user: Optional[str] = None) -> Pending[None]:
        """Changes your password, or ``user``'s when logged in as ``setup``."""
        return Pending(u._n.change_password(password, user))

    @staticmethod
    def info(u: _Session) -> Pending[dict[str, str]]:
        """Product code, serial number, firmware and API versions."""
        return Pending(u._n.info())

    # -------------------------------------------------------------- settings

    @staticmethod
    def settings(u: _Session) -> Pending[dict[str, Any]]:
        """The whole settings tree."""
        return Pending(u._n.settings())

    @staticmethod
    def settings_delta(u: _Session) -> Pending[dict[str, Any]]:
        """Only the settings changed from the defaults."""
        return Pending(u._n.settings_delta())

    @staticmethod
    def get(u: _Session, path: str) -> Pending[Any]:
        """One node, e.g. ``aiding/gnss1/leverArmPrimary``. A path that names no node
        (empty, ``..``, or an action such as ``default``) raises ``InvalidInputError``
        before anything is sent."""
        return Pending(u._n.node(path))

    @staticmethod
    def set(u: _Session, path: str, value: Any, *, check_only: bool = False) -> Pending[WriteOutcome]:
        """Writes one node. A path that names no node (empty, ``..``, or an action such
        as ``default``, which would restore every default) raises ``InvalidInputError``
        before anything is sent."""
        return Pending(u._n.write_node(path, value, check_only))

    @staticmethod
    def write(
        u: _Session, patch: Mapping[str, Any], *, check_only: bool = False
    ) -> Pending[WriteOutcome]:
        """Writes a partial tree (merged into the unit's tree; all or nothing)."""
        return Pending(u._n.write(dict(patch), check_only))

    @staticmethod
    def apply(
        u: _Session,
        wanted: Mapping[str, Any],
        *,
        check_only: bool = False,
        lock: bool = False,
        reboot: bool = False,
        wait: bool = False,
        timeout: float = 60.0,
    ) -> Pending[ApplyReport]:
        """Brings the unit to the wanted (whole or partial) tree: reads it, writes only
        what differs (checked first with ``checkOnly``), reads it back and compares.
        ``lock`` holds the settings lock meanwhile (needs a login). With ``reboot``, a
        change that takes effect only after a reboot is saved and the unit rebooted
        (``rebooted`` in the report); with ``wait`` too, this returns once the unit
        answers again (``WaitTimeoutError`` after ``timeout`` seconds), so that the
        next call finds it up. A reboot whose answer is lost counts only once the unit
        is seen to have rebooted; otherwise ``reboot_pending`` is true."""
        return Pending(
            u._n.apply(dict(wanted), check_only, lock, reboot, timeout if wait else None)
        )

    @staticmethod
    def save(u: _Session) -> Pending[None]:
        """Saves the settings to the unit's permanent memory (the vendor client's
        ``/settings/save``; ``NotFoundError`` from a unit without that route, which
        keeps applied settings anyway)."""
        return Pending(u._n.save())

    @staticmethod
    def export_settings(u: _Session) -> Pending[dict[str, Any]]:
        """The whole tree, as a file to keep (lossless)."""
        return Pending(u._n.export())

    @staticmethod
    def import_settings(
        u: _Session, tree: Mapping[str, Any], *, check_only: bool = False
    ) -> Pending[WriteOutcome]:
        """Loads a whole tree."""
        return Pending(u._n.import_settings(dict(tree), check_only))

    @staticmethod
    def restore_defaults(u: _Session, *, check_only: bool = False) -> Pending[WriteOutcome]:
        return Pending(u._n.restore_defaults(check_only))

    @staticmethod
    def lock(u: _Session) -> Pending[None]:
        """Takes the settings lock (others' writes then get ``ConflictError``)."""
        return Pending(u._n.lock())

    @staticmethod
    def unlock(u: _Session) -> Pending[None]:
        return Pending(u._n.unlock())

    # --------------------------------------------------------------- actions

    @staticmethod
    def reboot(
        u: _Session, *, wait: bool = False, timeout: float = 60.0
    ) -> Pending[Optional[dict[str, str]]]:
        """Reboots the unit (every token and the lock end); with ``wait``, returns its
        info once it answers again (as :meth:`wait_until_back`). ``/reboot`` is tried
        first, then the vendor client's ``/system/reboot`` when the unit has no such
        route."""
        return Pending(u._n.reboot(timeout if wait else None))

    @staticmethod
    def wait_until_back(u: _Session, timeout: float = 60.0) -> Pending[dict[str, str]]:
        """Waits until the unit answers again after a reboot (and logs in again if the
        session was logged in); its info. ``WaitTimeoutError`` (naming the last
        failure) when it is still not back after ``timeout`` seconds."""
        return Pending(u._n.wait_until_back(timeout))

    @staticmethod
    def logger_status(u: _Session) -> Pending[dict[str, Any]]:
        return Pending(u._n.logger_status())

    @staticmethod
    def logger_start(u: _Session) -> Pending[None]:
        return Pending(u._n.logger_start())

    @staticmethod
    def logger_stop(u: _Session) -> Pending[None]:
        return Pending(u._n.logger_stop())

    # ------------------------------------------------------------- live logs

    @staticmethod
    def wait_ready(
        u: _Session,
        *,
        fix: Optional[str] = "single",
        aligned: bool = True,
        utc: bool = True,
        timeout: float = 300.0,
    ) -> Pending[Readiness]:
        """Waits until the unit's output logs on its serial link say it is ready to log:
        a GNSS fix of at least ``fix`` (``"single"``, ``"differential"``,
        ``"rtkFloat"``, ``"rtkFixed"``; ``None``: no GNSS condition), the filter
        ``aligned``, ``utc`` valid. The messages that tell (``gps1Pos``, ``ekfNav``,
        ``utcTime``) must be enabled on the port. ``WaitTimeoutError`` after
        ``timeout`` seconds, its ``missing`` listing what was missing. Cancelling
        stops the wait."""
        return Pending(u._n.wait_ready(fix, aligned, utc, timeout))


class Unit(_Session):
    """A session with one unit. Thread-safe."""

    def __init__(self, native: _native.Unit) -> None:
        self._n = native

    @classmethod
    def http(cls, url: str, *, timeout: float = _native.DEFAULT_UNIT_TIMEOUT) -> Unit:
        """The unit at ``url`` (e.g. ``http://192.168.1.1``; plain HTTP only). Each
        request may take ``timeout`` seconds, answer included (``InvalidInputError``
        for a timeout that is not a number of seconds > 0)."""
        return cls(_native.Unit.http(url, timeout=timeout))

    @classmethod
    def serial(
        cls, path: str, baud: int = 115_200, *, timeout: float = _native.DEFAULT_SERIAL_TIMEOUT
    ) -> Unit:
        """The unit on a local serial port (e.g. ``/dev/ttyUSB0``) at ``baud``. An answer
        is given up after ``timeout`` seconds of silence on the line (reads and other
        requests that are safe to repeat are then sent again)."""
        return cls(_native.Unit.serial(path, baud, timeout=timeout))

    @classmethod
    def serial_tcp(cls, address: str, *, timeout: float = _native.DEFAULT_SERIAL_TIMEOUT) -> Unit:
        """The unit behind a serial-over-IP bridge at ``host:port``; ``timeout`` as for
        :meth:`serial`."""
        return cls(_native.Unit.serial_tcp(address, timeout=timeout))

    def __repr__(self) -> str:
        return repr(self._n)

    login = blocking(_ops.login)
    logout = blocking(_ops.logout)
    change_password = blocking(_ops.change_password)
    info = blocking(_ops.info)
    settings = blocking(_ops.settings)
    settings_delta = blocking(_ops.settings_delta)
    get = blocking(_ops.get)
    set = blocking(_ops.set)
    write = blocking(_ops.write)
    apply = blocking(_ops.apply)
    save = blocking(_ops.save)
    export_settings = blocking(_ops.export_settings)
    import_settings = blocking(_ops.import_settings)
    restore_defaults = blocking(_ops.restore_defaults)
    lock = blocking(_ops.lock)
    unlock = blocking(_ops.unlock)
    reboot = blocking(_ops.reboot)
    wait_until_back = blocking(_ops.wait_until_back)
    logger_status = blocking(_ops.logger_status)
    logger_start = blocking(_ops.logger_start)
    logger_stop = blocking(_ops.logger_stop)
    wait_ready = blocking(_ops.wait_ready)

    @contextlib.contextmanager
    def locked(self) -> Iterator[Unit]:
        """Holds the settings lock for the ``with`` block, released also on failure."""
        try:
            self.lock()
        except KeyboardInterrupt:
            # The lock may have been taken before Ctrl-C stopped the wait for the answer.
            with contextlib.suppress(SvcError):
                self.unlock()
            raise
        try:
            yield self
        finally:
            self.unlock()

    def subscribe(
        self, messages: Optional[Iterable[str]] = None, *, capacity: int = DEFAULT_CAPACITY
    ) -> LiveStream:
        """The output logs the unit streams on its serial link (the messages enabled in
        ``output.comA.messages``), as a :class:`~svc_sdk.live.LiveStream` of records;
        only ``messages`` (``["ekfNav", "utcTime"]`` or ``"ekfNav,utcTime"``; all by
        default). The session's other calls go on beside it. ``InvalidInputError`` over
        HTTP: a unit sends its Ethernet outputs as UDP datagrams
        (:func:`svc_sdk.live.udp`)."""
        return LiveStream(self._n.subscribe(_names(messages), capacity))

    def logger_files(
        self,
        ftp: Optional[str] = None,
        *,
        user: Optional[str] = None,
        password: Optional[str] = None,
    ) -> LoggerFiles:
        """The sessions the unit's data logger recorded, over its FTP server at ``ftp``
        (``host:port``; by default port 21 of the unit's host, which a unit over a
        serial link does not have: ``InvalidInputError``). As ``user`` with
        ``password``, or as this session's user and password (``viewer``, which may
        list and download, when the session is not logged in)."""
        return LoggerFiles(self._n.logger_files(ftp, user, password))
