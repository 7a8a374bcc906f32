"""The cloud client, the workflow and the unit as awaitables, for asyncio services
(a FastAPI webhook receiver, an aiohttp app).

>>> client = AsyncCloudClient.from_env()                       # doctest: +SKIP
>>> processing = await client.get_processing(pid)              # doctest: +SKIP
>>> async for container in client.list_containers(): ...       # doctest: +SKIP

The work runs on the SDK's own threads; the event loop never blocks. Cancelling the
awaiting task (a timeout, a client that went away) cancels the operation itself: its
requests are abandoned and its transfers stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Callable,
    Iterable,
    Mapping,
    Optional,
    TypeVar,
    Union,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

from svc_sdk import _native
from svc_sdk._calls import awaitable, wait
from svc_sdk.cloud import CloudClient, Id, _Cloud, _ops
from svc_sdk.errors import SvcError, WaitTimeoutError, WorkflowError
from svc_sdk.live import DEFAULT_CAPACITY, Batch, LiveStream, _item
from svc_sdk.unit import LoggerFiles, Unit, _Logger, _logger_ops, _Session
from svc_sdk.unit import _ops as _unit_ops
from svc_sdk.workflow import (
    Files,
    PathLike,
    WorkflowSettings,
    ProgressCallback,
    Workflow,
    WorkflowOutcome,
    WorkflowTask,
    Missions,
    _Bars,
    _batch_progress,
    _labelled,
    _progress,
    _settings_signature,
)

__all__ = [
    "AsyncCloudClient",
    "AsyncLoggerFiles",
    "AsyncUnit",
    "AsyncLiveStream",
    "AsyncWorkflow",
    "AsyncWorkflowTask",
    "wait",
]

T = TypeVar("T")

_wait = wait  # for the methods with a `wait` argument


class AsyncCloudClient(_Cloud):
    """:class:`~svc_sdk.CloudClient` with awaitable operations. Build it like a
    ``CloudClient`` (same arguments), with :meth:`from_env`, or from one. Lists are
    iterated with ``async for``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sync = CloudClient(*args, **kwargs)
        self._n = self.sync._n

    @classmethod
    def from_env(cls, **settings: Any) -> AsyncCloudClient:
        """As :meth:`CloudClient.from_env` (same settings)."""
        return cls.of(CloudClient.from_env(**settings))

    @classmethod
    def of(cls, client: CloudClient) -> AsyncCloudClient:
        """The same client (its token shared), awaitable."""
        self = cls.__new__(cls)
        self.sync = client
        self._n = client._n
        return self

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"

    server_info = awaitable(_ops.server_info)
    create_container = awaitable(_ops.create_container)
    get_container = awaitable(_ops.get_container)
    update_container = awaitable(_ops.update_container)
    delete_container = awaitable(_ops.delete_container)
    add_container_files = awaitable(_ops.add_container_files)
    update_container_file = awaitable(_ops.update_container_file)
    delete_container_file = awaitable(_ops.delete_container_file)
    list_containers_page = awaitable(_ops.list_containers_page)
    start_processing = awaitable(_ops.start_processing)
    get_processing = awaitable(_ops.get_processing)
    cancel_processing = awaitable(_ops.cancel_processing)
    archive_processing = awaitable(_ops.archive_processing)
    list_processing_outputs = awaitable(_ops.list_processing_outputs)
    list_processing_errors = awaitable(_ops.list_processing_errors)
    list_processings_page = awaitable(_ops.list_processings_page)
    upload = awaitable(_ops.upload)
    download_outputs = awaitable(_ops.download_outputs)
    create_webhook_endpoint = awaitable(_ops.create_webhook_endpoint)
    update_webhook_endpoint = awaitable(_ops.update_webhook_endpoint)
    delete_webhook_endpoint = awaitable(_ops.delete_webhook_endpoint)
    list_webhook_endpoints_page = awaitable(_ops.list_webhook_endpoints_page)
    list_missed_webhooks_page = awaitable(_ops.list_missed_webhooks_page)


#: How often an awaited workflow is looked at (its progress reports delivered, its end
#: noticed) without holding a thread.
_WORKFLOW_POLL = 0.05


class AsyncWorkflowTask:
    """A workflow under way (:meth:`AsyncWorkflow.start`), awaitable. Waiting holds no
    thread: the workflow is looked at every 50 ms from the event loop, which also
    calls the progress callback. Cancelling the task awaiting :meth:`wait` stops the
    workflow, unless it is detached (:meth:`detach`); a timeout leaves it running."""

    def __init__(self, task: WorkflowTask, progress: Union[bool, ProgressCallback, None]) -> None:
        self.sync = task
        self._progress = _progress(progress)

    @property
    def processing_id(self) -> Optional[str]:
        """The processing, once started (it goes on in the cloud after a cancel)."""
        return self.sync.processing_id

    @property
    def container_id(self) -> Optional[str]:
        return self.sync.container_id

    def done(self) -> bool:
        return self.sync.done()

    def cancel(self) -> None:
        """Stops the workflow (transfers aborted); a started processing goes on in the
        cloud. :meth:`wait` then raises ``CanceledError``."""
        self.sync.cancel()

    def detach(self) -> None:
        """Lets the workflow run to its end even when this task is dropped or the
        task awaiting :meth:`wait` is cancelled; :meth:`cancel` still stops it."""
        self.sync.detach()

    async def wait(self, timeout: Optional[float] = None) -> WorkflowOutcome:
        """The outcome, once the workflow ends (at most ``timeout`` seconds: then
        ``WaitTimeoutError``, the workflow still running)."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            try:
                # Delivers the reports queued so far and returns at once.
                return WorkflowOutcome(self.sync._n.wait(0.0, self._progress))
            except WaitTimeoutError as error:
                if isinstance(error, WorkflowError):
                    self._close_bars()
                    raise  # the workflow's own (`follow_timeout`), not this poll's
            except BaseException:
                self._close_bars()
                raise
            if deadline is not None and loop.time() >= deadline:
                raise WaitTimeoutError(
                    f"the workflow had not ended after {timeout} s; it goes on (wait again, or cancel it)",
                    kind="timeout",
                    retryable=True,
                )
            try:
                await asyncio.sleep(_WORKFLOW_POLL)
            except asyncio.CancelledError:
                # The caller's scope was cancelled: so is the work, unless detached.
                self.sync._n.cancel_unless_detached()
                self._close_bars()
                raise

    def _close_bars(self) -> None:
        if isinstance(self._progress, _Bars):
            self._progress.close(full=False)

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"


class AsyncWorkflow:
    """:class:`~svc_sdk.Workflow` as awaitables. Cancelling the task awaiting
    :meth:`run` or :meth:`resume` cancels the workflow (a started processing goes on in
    the cloud)."""

    def __init__(self, client: Union[AsyncCloudClient, CloudClient]) -> None:
        sync = client.sync if isinstance(client, AsyncCloudClient) else client
        self._workflow = Workflow(sync)

    @_settings_signature(progress=None)
    def start(
        self,
        inputs: Files,
        config: Union[Mapping[str, Any], PathLike],
        **settings: Unpack[WorkflowSettings],
    ) -> AsyncWorkflowTask:
        """Starts a workflow (as :meth:`Workflow.start`, the same settings) and returns at
        once; reports reach ``progress`` on the event loop while the task is awaited."""
        progress = settings.pop("progress", None)
        task = self._workflow.start(inputs, config, **settings)
        return AsyncWorkflowTask(task, progress)

    def start_resume(
        self,
        processing_id: Id,
        *,
        out: Optional[PathLike] = None,
        follow_timeout: Optional[float] = None,
        progress: Union[bool, ProgressCallback, None] = None,
    ) -> AsyncWorkflowTask:
        """As :meth:`resume`, returning an :class:`AsyncWorkflowTask` at once."""
        task = self._workflow.start_resume(processing_id, out=out, follow_timeout=follow_timeout)
        return AsyncWorkflowTask(task, progress)

    async def run(
        self,
        inputs: Files,
        config: Union[Mapping[str, Any], PathLike],
        **settings: Unpack[WorkflowSettings],
    ) -> WorkflowOutcome:
        """Runs a whole workflow (as :meth:`Workflow.run`, the same settings)."""
        return await self._to_the_end(self.start(inputs, config, **settings))

    async def resume(
        self,
        processing_id: Id,
        *,
        out: Optional[PathLike] = None,
        follow_timeout: Optional[float] = None,
        progress: Union[bool, ProgressCallback, None] = None,
    ) -> WorkflowOutcome:
        task = self.start_resume(processing_id, out=out, follow_timeout=follow_timeout, progress=progress)
        return await self._to_the_end(task)

    def start_many(
        self,
        missions: Missions,
        config: Union[Mapping[str, Any], PathLike],
        **settings: Any,
    ) -> dict[str, AsyncWorkflowTask]:
        """Starts a batch of missions (as :meth:`Workflow.start_many`, the same
        settings) and returns at once an awaitable task per mission, by name."""
        tasks = self._workflow.start_many(missions, config, **settings)
        return {name: AsyncWorkflowTask(task, None) for name, task in tasks.items()}

    async def run_many(
        self,
        missions: Missions,
        config: Union[Mapping[str, Any], PathLike],
        *,
        progress: Union[bool, Callable[[str, dict[str, Any]], None], None] = None,
        **settings: Any,
    ) -> dict[str, Union[WorkflowOutcome, SvcError]]:
        """Runs a batch of missions (as :meth:`Workflow.run_many`): each mission's
        outcome, or the error that stopped it, by name. Cancelling the awaiting task
        stops the missions not done (processings already started go on in the
        cloud)."""
        tasks = self.start_many(missions, config, **settings)
        report = _batch_progress(progress, list(tasks))
        if report is not None:
            for name, task in tasks.items():
                task._progress = _labelled(report, name)
        try:
            ended = await asyncio.gather(
                *(task.wait() for task in tasks.values()), return_exceptions=True
            )
        except BaseException:
            for task in tasks.values():
                task.cancel()
            raise
        results: dict[str, Union[WorkflowOutcome, SvcError]] = {}
        for name, result in zip(tasks, ended):
            if isinstance(result, (WorkflowOutcome, SvcError)):
                results[name] = result
            else:
                for task in tasks.values():
                    task.cancel()
                raise result
        return results

    @staticmethod
    async def _to_the_end(task: AsyncWorkflowTask) -> WorkflowOutcome:
        try:
            return await task.wait()
        except BaseException:
            # Cancelled, or a progress callback raised: nobody will wait for it any
            # more. A workflow that ended is not changed by this.
            task.cancel()
            raise


class AsyncLoggerFiles(_Logger):
    """:class:`~svc_sdk.unit.LoggerFiles` with awaitable operations; cancelling the
    awaiting task stops the transfer (a partial file stays as ``.part``, resumed by the
    next download)."""

    def __init__(self, files: LoggerFiles) -> None:
        self.sync = files
        self._n = files._n

    sessions = awaitable(_logger_ops.sessions)
    download = awaitable(_logger_ops.download)
    delete = awaitable(_logger_ops.delete)


class AsyncUnit(_Session):
    """:class:`~svc_sdk.Unit` with awaitable operations."""

    def __init__(self, unit: Unit) -> None:
        self.sync = unit
        self._n = unit._n

    @classmethod
    def http(cls, url: str, *, timeout: float = _native.DEFAULT_UNIT_TIMEOUT) -> AsyncUnit:
        return cls(Unit.http(url, timeout=timeout))

    @classmethod
    async def serial(
        cls, path: str, baud: int = 115_200, *, timeout: float = _native.DEFAULT_SERIAL_TIMEOUT
    ) -> AsyncUnit:
        """The unit on a local serial port (e.g. ``/dev/ttyUSB0``) at ``baud``."""
        loop = asyncio.get_running_loop()
        return cls(
            await loop.run_in_executor(None, lambda: Unit.serial(path, baud, timeout=timeout))
        )

    @classmethod
    async def serial_tcp(
        cls, address: str, *, timeout: float = _native.DEFAULT_SERIAL_TIMEOUT
    ) -> AsyncUnit:
        loop = asyncio.get_running_loop()
        return cls(await loop.run_in_executor(None, lambda: Unit.serial_tcp(address, timeout=timeout)))

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"

    login = awaitable(_unit_ops.login)
    logout = awaitable(_unit_ops.logout)
    change_password = awaitable(_unit_ops.change_password)
    info = awaitable(_unit_ops.info)
    settings = awaitable(_unit_ops.settings)
    settings_delta = awaitable(_unit_ops.settings_delta)
    get = awaitable(_unit_ops.get)
    set = awaitable(_unit_ops.set)
    write = awaitable(_unit_ops.write)
    apply = awaitable(_unit_ops.apply)
    save = awaitable(_unit_ops.save)
    export_settings = awaitable(_unit_ops.export_settings)
    import_settings = awaitable(_unit_ops.import_settings)
    restore_defaults = awaitable(_unit_ops.restore_defaults)
    lock = awaitable(_unit_ops.lock)
    unlock = awaitable(_unit_ops.unlock)
    reboot = awaitable(_unit_ops.reboot)
    wait_until_back = awaitable(_unit_ops.wait_until_back)
    logger_status = awaitable(_unit_ops.logger_status)
    logger_start = awaitable(_unit_ops.logger_start)
    logger_stop = awaitable(_unit_ops.logger_stop)
    wait_ready = awaitable(_unit_ops.wait_ready)

    @contextlib.asynccontextmanager
    async def locked(self) -> AsyncIterator[AsyncUnit]:
        """Holds the settings lock for the ``async with`` block, released also on
        failure or cancellation."""
        # The lock request runs to its end even if this task is cancelled meanwhile
        # (aborted, it could still reach the unit after the release); then what it
        # took is released.
        taking = asyncio.ensure_future(self.lock())
        try:
            await asyncio.shield(taking)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                await taking
                await asyncio.shield(self._release_quietly())
            raise
        try:
            yield self
        finally:
            # Released even when the block was cancelled (the release is not).
            await asyncio.shield(wait(self._n.unlock()))

    async def _release_quietly(self) -> None:
        with contextlib.suppress(SvcError):
            await wait(self._n.unlock())

    def logger_files(
        self,
        ftp: Optional[str] = None,
        *,
        user: Optional[str] = None,
        password: Optional[str] = None,
    ) -> AsyncLoggerFiles:
        """:meth:`Unit.logger_files <svc_sdk.Unit.logger_files>`, awaitable."""
        return AsyncLoggerFiles(self.sync.logger_files(ftp, user=user, password=password))

    def subscribe(
        self, messages: Optional[Iterable[str]] = None, *, capacity: int = DEFAULT_CAPACITY
    ) -> AsyncLiveStream:
        """:meth:`Unit.subscribe <svc_sdk.Unit.subscribe>`, as an async iterator."""
        return AsyncLiveStream(self.sync.subscribe(messages, capacity=capacity))


class AsyncLiveStream:
    """:class:`~svc_sdk.live.LiveStream` as an async iterator of records, with
    awaitable batches; cancelling the awaiting task takes nothing from the stream. Wraps
    any stream: ``AsyncLiveStream(svc_sdk.live.udp(...))``."""

    def __init__(self, stream: LiveStream) -> None:
        self.sync = stream
        self._n = stream._n

    @property
    def stats(self) -> Mapping[str, int]:
        return self.sync.stats

    def __aiter__(self) -> AsyncLiveStream:
        return self

    async def __anext__(self) -> dict[str, Any]:
        while True:
            kind, value = await wait(self._n.next(None))
            try:
                record = _item(kind, value)
            except StopIteration:
                raise StopAsyncIteration from None
            if record is not None:
                return record

    async def batch(self, max_records: int = 65_536, *, timeout: float = 1.0) -> Batch:
        return Batch(await wait(self._n.batch(max_records, timeout)))

    async def batches(
        self, max_records: int = 65_536, *, timeout: float = 1.0
    ) -> AsyncIterator[Batch]:
        while True:
            batch = await self.batch(max_records, timeout=timeout)
            if batch.records or batch.dropped:
                yield batch
            if batch.ended:
                return

    def close(self) -> None:
        self.sync.close()

    async def __aenter__(self) -> AsyncLiveStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"


# `help()` shows the settings as keywords (a decorator would hide the coroutine from
# type checkers).
_settings_signature(progress=None)(AsyncWorkflow.run)
