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
import os
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
from svc_sdk.cloud import (
    EVENT_TYPES,
    CloudClient,
    Id,
    _container_request,
    _endpoint_request,
    _endpoint_update,
    _file_update,
    _processing_request,
    _upload_args,
)
from svc_sdk.records import (
    Container,
    ContainerFile,
    MissedWebhook,
    OutputFile,
    Processing,
    ProcessingError,
    ServerInfo,
    WebhookEndpoint,
)
from svc_sdk.errors import SvcError, WaitTimeoutError, WorkflowError
from svc_sdk.live import DEFAULT_CAPACITY, Batch, LiveStream, _item
from svc_sdk.unit import (
    ApplyReport,
    Downloaded,
    LoggerFiles,
    LoggerSession,
    Readiness,
    Unit,
    WriteOutcome,
)
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


def _settle(future: asyncio.Future[Any], call: _native.Call) -> None:
    if future.done():  # cancelled meanwhile
        return
    try:
        future.set_result(call.result())
    except BaseException as e:  # the operation's error, raised in the awaiting task
        future.set_exception(e)


async def wait(call: _native.Call) -> Any:
    """Awaits a native call; cancelling the awaiting task cancels the call."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    call.add_done_callback(lambda done: loop.call_soon_threadsafe(_settle, future, done))
    try:
        return await future
    except asyncio.CancelledError:
        call.cancel()
        raise


_wait = wait  # for the methods with a `wait` argument


async def _as(kind: Callable[[Any], T], call: _native.Call) -> T:
    return kind(await wait(call))


async def _pages(pager: _native.Pager, kind: Callable[[Any], T]) -> AsyncIterator[T]:
    while True:
        item = await wait(pager.next_call())
        if item is None:
            return
        yield kind(item)


class AsyncCloudClient:
    """:class:`~svc_sdk.CloudClient` with awaitable operations. Build it like a
    ``CloudClient`` (same arguments), with :meth:`from_env`, or from one."""

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

    @property
    def organization_id(self) -> str:
        return self.sync.organization_id

    @property
    def base_url(self) -> str:
        return self.sync.base_url

    @staticmethod
    def file(
        path: str, *, type: str = "input", size: int, metadata: Optional[Mapping[str, str]] = None
    ) -> dict[str, Any]:
        """A file to register (as :meth:`CloudClient.file`)."""
        return CloudClient.file(path, type=type, size=size, metadata=metadata)

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"

    async def server_info(self) -> ServerInfo:
        return await _as(ServerInfo, self._n.server_info())

    async def create_container(
        self,
        *,
        region: str = "eu-west-3",
        files: Iterable[Mapping[str, Any]] = (),
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Container:
        request = _container_request(region, files, metadata)
        return await _as(Container, self._n.create_container(request))

    async def get_container(self, container_id: Id) -> Container:
        return await _as(Container, self._n.get_container(str(container_id)))

    async def update_container(self, container_id: Id, *, metadata: Mapping[str, str]) -> Container:
        call = self._n.update_container(str(container_id), {"metadata": dict(metadata)})
        return await _as(Container, call)

    async def delete_container(self, container_id: Id) -> None:
        await wait(self._n.delete_container(str(container_id)))

    async def add_container_files(
        self, container_id: Id, files: Iterable[Mapping[str, Any]]
    ) -> list[ContainerFile]:
        answer = await wait(self._n.add_container_files(str(container_id), [dict(f) for f in files]))
        return [ContainerFile(f) for f in answer]

    async def update_container_file(
        self,
        container_file_id: Id,
        *,
        path: Optional[str] = None,
        type: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> ContainerFile:
        request = _file_update(path, type, metadata)
        return await _as(ContainerFile, self._n.update_container_file(str(container_file_id), request))

    async def delete_container_file(self, container_file_id: Id) -> None:
        await wait(self._n.delete_container_file(str(container_file_id)))

    async def list_containers_page(
        self, page: int, per_page: int
    ) -> tuple[list[Container], Optional[int]]:
        answer = await wait(self._n.list_containers_page(page, per_page))
        return [Container(c) for c in answer.get("containers") or []], answer.get("numItems")

    def list_containers(
        self, *, metadata: Optional[Mapping[str, str]] = None
    ) -> AsyncIterator[Container]:
        return _pages(
            self._n.list_containers(None if metadata is None else dict(metadata)), Container
        )

    async def upload(
        self,
        container: Union[Id, Container],
        files: Union[Mapping[str, PathLike], Iterable[PathLike]],
        *,
        parallelism: int = 4,
    ) -> dict[str, Any]:
        """As :meth:`svc_sdk.CloudClient.upload`; cancelling stops the transfers."""
        container_id, pairs = _upload_args(container, files)
        report: dict[str, Any] = await wait(self._n.upload(container_id, pairs, parallelism))
        return report

    async def download_outputs(
        self, processing_id: Id, folder: PathLike, *, parallelism: int = 4
    ) -> dict[str, Any]:
        """As :meth:`svc_sdk.CloudClient.download_outputs`; cancelling stops the
        transfers and leaves no partial file."""
        report: dict[str, Any] = await wait(
            self._n.download_outputs(str(processing_id), os.fspath(folder), parallelism)
        )
        return report

    async def start_processing(
        self,
        container_id: Id,
        processing_json: Mapping[str, Any],
        *,
        name: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Processing:
        request = _processing_request(container_id, processing_json, name, metadata)
        return await _as(Processing, self._n.start_processing(request))

    async def get_processing(self, processing_id: Id) -> Processing:
        return await _as(Processing, self._n.get_processing(str(processing_id)))

    async def cancel_processing(self, processing_id: Id) -> None:
        await wait(self._n.cancel_processing(str(processing_id)))

    async def archive_processing(self, processing_id: Id) -> Processing:
        return await _as(Processing, self._n.archive_processing(str(processing_id)))

    async def list_processing_outputs(self, processing_id: Id) -> list[OutputFile]:
        answer = await wait(self._n.list_processing_outputs(str(processing_id)))
        return [OutputFile(o) for o in answer]

    async def list_processing_errors(self, processing_id: Id) -> list[ProcessingError]:
        answer = await wait(self._n.list_processing_errors(str(processing_id)))
        return [ProcessingError(e) for e in answer]

    async def list_processings_page(
        self, page: int, per_page: int
    ) -> tuple[list[Processing], Optional[int]]:
        answer = await wait(self._n.list_processings_page(page, per_page))
        return [Processing(p) for p in answer.get("processings") or []], answer.get("numItems")

    def list_processings(
        self, *, name: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None
    ) -> AsyncIterator[Processing]:
        return _pages(
            self._n.list_processings(name, None if metadata is None else dict(metadata)),
            Processing,
        )

    async def create_webhook_endpoint(
        self,
        url: str,
        *,
        event_types: Iterable[str] = EVENT_TYPES,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> WebhookEndpoint:
        request = _endpoint_request(url, event_types, metadata)
        return await _as(WebhookEndpoint, self._n.create_webhook_endpoint(request))

    async def update_webhook_endpoint(
        self,
        webhook_endpoint_id: Id,
        *,
        url: Optional[str] = None,
        event_types: Optional[Iterable[str]] = None,
        enabled: Optional[bool] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> WebhookEndpoint:
        request = _endpoint_update(url, event_types, enabled, metadata)
        call = self._n.update_webhook_endpoint(str(webhook_endpoint_id), request)
        return await _as(WebhookEndpoint, call)

    async def delete_webhook_endpoint(self, webhook_endpoint_id: Id) -> None:
        await wait(self._n.delete_webhook_endpoint(str(webhook_endpoint_id)))

    async def list_webhook_endpoints_page(self, page: int, per_page: int) -> list[WebhookEndpoint]:
        answer = await wait(self._n.list_webhook_endpoints_page(page, per_page))
        return [WebhookEndpoint(e) for e in answer]

    def list_webhook_endpoints(self) -> AsyncIterator[WebhookEndpoint]:
        return _pages(self._n.list_webhook_endpoints(), WebhookEndpoint)

    async def list_missed_webhooks_page(
        self, webhook_endpoint_id: Id, page: int, per_page: int
    ) -> list[MissedWebhook]:
        answer = await wait(
            self._n.list_missed_webhooks_page(str(webhook_endpoint_id), page, per_page)
        )
        return [MissedWebhook(m) for m in answer]

    def list_missed_webhooks(self, webhook_endpoint_id: Id) -> AsyncIterator[MissedWebhook]:
        return _pages(self._n.list_missed_webhooks(str(webhook_endpoint_id)), MissedWebhook)


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


class AsyncLoggerFiles:
    """:class:`~svc_sdk.unit.LoggerFiles` with awaitable operations; cancelling the
    awaiting task stops a download (its ``.part`` files are resumed by the next)."""

    def __init__(self, files: LoggerFiles) -> None:
        self.sync = files
        self._n = files._n

    @property
    def address(self) -> str:
        return self.sync.address

    @property
    def user(self) -> str:
        return self.sync.user

    async def sessions(self) -> list[LoggerSession]:
        sessions: list[LoggerSession] = await wait(self._n.sessions())
        return sessions

    async def download(
        self, name: str, dest: str | os.PathLike[str], *, delete_after: bool = False
    ) -> Downloaded:
        done: Downloaded = await wait(self._n.download(name, os.fspath(dest), delete_after))
        return done

    async def delete(self, session: str) -> None:
        await wait(self._n.delete(session))

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"


class AsyncUnit:
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

    @property
    def link(self) -> str:
        return self.sync.link

    @property
    def user(self) -> Optional[str]:
        return self.sync.user

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"

    async def login(self, user: str, password: str = "") -> None:
        await wait(self._n.login(user, password))

    async def logout(self) -> None:
        await wait(self._n.logout())

    async def info(self) -> dict[str, str]:
        info: dict[str, str] = await wait(self._n.info())
        return info

    async def settings(self) -> dict[str, Any]:
        tree: dict[str, Any] = await wait(self._n.settings())
        return tree

    async def get(self, path: str) -> Any:
        return await wait(self._n.node(path))

    async def set(self, path: str, value: Any, *, check_only: bool = False) -> WriteOutcome:
        outcome: WriteOutcome = await wait(self._n.write_node(path, value, check_only))
        return outcome

    async def write(self, patch: Mapping[str, Any], *, check_only: bool = False) -> WriteOutcome:
        outcome: WriteOutcome = await wait(self._n.write(dict(patch), check_only))
        return outcome

    async def apply(
        self,
        wanted: Mapping[str, Any],
        *,
        check_only: bool = False,
        lock: bool = False,
        reboot: bool = False,
        wait: bool = False,
        timeout: float = 60.0,
    ) -> ApplyReport:
        """:meth:`Unit.apply <svc_sdk.Unit.apply>`, awaitable."""
        report: ApplyReport = await _wait(
            self._n.apply(dict(wanted), check_only, lock, reboot, timeout if wait else None)
        )
        return report

    async def save(self) -> None:
        await wait(self._n.save())

    async def export_settings(self) -> dict[str, Any]:
        tree: dict[str, Any] = await wait(self._n.export())
        return tree

    async def lock(self) -> None:
        await wait(self._n.lock())

    async def unlock(self) -> None:
        await wait(self._n.unlock())

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

    async def change_password(self, password: str, *, user: Optional[str] = None) -> None:
        await wait(self._n.change_password(password, user))

    async def settings_delta(self) -> dict[str, Any]:
        tree: dict[str, Any] = await wait(self._n.settings_delta())
        return tree

    async def import_settings(
        self, tree: Mapping[str, Any], *, check_only: bool = False
    ) -> WriteOutcome:
        outcome: WriteOutcome = await wait(self._n.import_settings(dict(tree), check_only))
        return outcome

    async def restore_defaults(self, *, check_only: bool = False) -> WriteOutcome:
        outcome: WriteOutcome = await wait(self._n.restore_defaults(check_only))
        return outcome

    async def reboot(self, *, wait: bool = False, timeout: float = 60.0) -> Optional[dict[str, str]]:
        """Reboots the unit (every token and the lock end); with ``wait``, returns its
        info once it answers again."""
        await _wait(self._n.reboot())
        if wait:
            return await self.wait_until_back(timeout)
        return None

    async def logger_status(self) -> dict[str, Any]:
        status: dict[str, Any] = await wait(self._n.logger_status())
        return status

    async def logger_start(self) -> None:
        await wait(self._n.logger_start())

    async def logger_stop(self) -> None:
        await wait(self._n.logger_stop())

    def logger_files(
        self,
        ftp: Optional[str] = None,
        *,
        user: Optional[str] = None,
        password: Optional[str] = None,
    ) -> AsyncLoggerFiles:
        """:meth:`Unit.logger_files <svc_sdk.Unit.logger_files>`, awaitable."""
        return AsyncLoggerFiles(self.sync.logger_files(ftp, user=user, password=password))

    async def wait_until_back(self, timeout: float = 60.0) -> dict[str, str]:
        info: dict[str, str] = await wait(self._n.wait_until_back(timeout))
        return info

    def subscribe(
        self, messages: Optional[Iterable[str]] = None, *, capacity: int = DEFAULT_CAPACITY
    ) -> AsyncLiveStream:
        """:meth:`Unit.subscribe <svc_sdk.Unit.subscribe>`, as an async iterator."""
        return AsyncLiveStream(self.sync.subscribe(messages, capacity=capacity))

    async def wait_ready(
        self,
        *,
        fix: Optional[str] = "single",
        aligned: bool = True,
        utc: bool = True,
        timeout: float = 300.0,
    ) -> Readiness:
        """:meth:`Unit.wait_ready <svc_sdk.Unit.wait_ready>`, awaitable; cancelling the
        task stops the wait."""
        ready: Readiness = await wait(self._n.wait_ready(fix, aligned, utc, timeout))
        return ready


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
