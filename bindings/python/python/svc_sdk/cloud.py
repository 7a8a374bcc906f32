"""The cloud post-processing service: :class:`CloudClient`, every operation of the
cloud service and of its notification service (webhook endpoints).

Each call blocks with the GIL released (other threads run; one client can be used
from many threads at once) and answers Ctrl-C. Access tokens are obtained, cached and
renewed by the client; transient failures are retried where that is safe. Failures
raise :class:`~svc_sdk.errors.SvcError` subclasses by kind (``NotFoundError``,
``ConflictError``...) with ``status``, ``title`` and ``details``.

Lists are iterators over every page (``for c in client.list_containers(): ...``);
``*_page(page, per_page)`` reads one page.
"""

from __future__ import annotations

import os
import uuid as _uuid
from pathlib import Path
from typing import (
    Any,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Optional,
    TypeVar,
    Union,
)

from svc_sdk import _native
from svc_sdk._calls import Pending, blocking, wait
from svc_sdk.records import (
    Container,
    ContainerFile,
    MissedWebhook,
    OutputFile,
    Processing,
    ProcessingError,
    Record,
    ServerInfo,
    WebhookEndpoint,
)

__all__ = ["CloudClient", "Id", "EVENT_TYPES"]

#: An identifier: a ``str`` or a :class:`uuid.UUID`.
Id = Union[str, _uuid.UUID]

#: A local file.
PathLike = Union[str, "os.PathLike[str]"]

#: The event types a webhook endpoint can subscribe to.
EVENT_TYPES = (
    "cloud:processing-progress",
    "cloud:processing-ended",
    "cloud:processing-error",
)

R = TypeVar("R", bound=Record)


def _id(value: Id) -> str:
    return str(value)


def _records(kind: Callable[[Mapping[str, Any]], R], items: Any) -> list[R]:
    return [kind(item) for item in items]


def _file(
    path: str, *, type: str = "input", size: int, metadata: Optional[Mapping[str, str]] = None
) -> dict[str, Any]:
    file: dict[str, Any] = {"path": path, "type": type, "size": size}
    if metadata is not None:
        file["metadata"] = dict(metadata)
    return file


def _drop_none(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def _container_request(
    region: str, files: Iterable[Mapping[str, Any]], metadata: Optional[Mapping[str, str]]
) -> dict[str, Any]:
    return _drop_none({"region": region, "files": [dict(f) for f in files], "metadata": metadata})


def _file_update(
    path: Optional[str], type: Optional[str], metadata: Optional[Mapping[str, str]]
) -> dict[str, Any]:
    return _drop_none({"path": path, "type": type, "metadata": metadata})


def _processing_request(
    container_id: Id,
    processing_json: Mapping[str, Any],
    name: Optional[str],
    metadata: Optional[Mapping[str, str]],
) -> dict[str, Any]:
    return _drop_none(
        {
            "containerId": _id(container_id),
            "processingJson": dict(processing_json),
            "name": name,
            "metadata": metadata,
        }
    )


def _endpoint_request(
    url: str, event_types: Iterable[str], metadata: Optional[Mapping[str, str]]
) -> dict[str, Any]:
    return _drop_none({"url": url, "enabledEventTypes": list(event_types), "metadata": metadata})


def _endpoint_update(
    url: Optional[str],
    event_types: Optional[Iterable[str]],
    enabled: Optional[bool],
    metadata: Optional[Mapping[str, str]],
) -> dict[str, Any]:
    return _drop_none(
        {
            "url": url,
            "enabledEventTypes": None if event_types is None else list(event_types),
            "enabled": enabled,
            "metadata": metadata,
        }
    )


def _upload_args(
    container: Union[Id, Container], files: Union[Mapping[str, PathLike], Iterable[PathLike]]
) -> tuple[str, list[tuple[str, str]]]:
    """The container's id and (container path, local file) pairs."""
    if isinstance(files, Mapping):
        pairs = [(str(path), os.fspath(local)) for path, local in files.items()]
    else:
        pairs = [(Path(local).name, os.fspath(local)) for local in files]
    return (container.id if isinstance(container, Container) else _id(container)), pairs


class Pages(Iterator[R], AsyncIterator[R]):
    """Every item of a list, page after page: ``for`` it from the blocking client,
    ``async for`` it from :class:`~svc_sdk.aio.AsyncCloudClient` (where cancelling the
    awaiting task cancels the page's request)."""

    def __init__(self, pager: _native.Pager, kind: Callable[[Mapping[str, Any]], R]) -> None:
        self._pager = pager
        self._kind = kind

    def __iter__(self) -> Pages[R]:
        return self

    def __next__(self) -> R:
        item = self._pager.next_call().result()
        if item is None:
            raise StopIteration
        return self._kind(item)

    def __aiter__(self) -> Pages[R]:
        return self

    async def __anext__(self) -> R:
        item = await wait(self._pager.next_call())
        if item is None:
            raise StopAsyncIteration
        return self._kind(item)


class _Cloud:
    """What the blocking client and the asyncio one share: the native client, what
    needs no waiting, the lists; their operations are :class:`_ops`'s."""

    _n: _native.CloudClient

    @property
    def organization_id(self) -> str:
        return self._n.organization_id

    @property
    def base_url(self) -> str:
        return self._n.base_url

    @staticmethod
    def file(
        path: str, *, type: str = "input", size: int, metadata: Optional[Mapping[str, str]] = None
    ) -> dict[str, Any]:
        """A file to register: its container path, type (``input`` or ``resources``),
        size in bytes and metadata."""
        return _file(path, type=type, size=size, metadata=metadata)

    def list_containers(self, *, metadata: Optional[Mapping[str, str]] = None) -> Pages[Container]:
        """Every container of the organization, page after page; with ``metadata``,
        those that carry each of its entries."""
        return Pages(
            self._n.list_containers(None if metadata is None else dict(metadata)), Container
        )

    def list_processings(
        self, *, name: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None
    ) -> Pages[Processing]:
        """Every processing of the organization, page after page; with ``name`` or
        ``metadata``, those of that name that carry each of its entries."""
        return Pages(
            self._n.list_processings(name, None if metadata is None else dict(metadata)),
            Processing,
        )

    def list_webhook_endpoints(self) -> Pages[WebhookEndpoint]:
        return Pages(self._n.list_webhook_endpoints(), WebhookEndpoint)

    def list_missed_webhooks(self, webhook_endpoint_id: Id) -> Pages[MissedWebhook]:
        return Pages(self._n.list_missed_webhooks(_id(webhook_endpoint_id)), MissedWebhook)


def _page_of(kind: Callable[[Mapping[str, Any]], R], key: str) -> Callable[[Any], tuple[list[R], Optional[int]]]:
    """One page's answer: its items under ``key`` and the total the service gives."""
    return lambda answer: (_records(kind, answer.get(key) or []), answer.get("numItems"))


def _list_of(kind: Callable[[Mapping[str, Any]], R]) -> Callable[[Any], list[R]]:
    return lambda answer: _records(kind, answer)


def _report(answer: Any) -> dict[str, Any]:
    report: dict[str, Any] = answer
    return report


class _ops:
    """The cloud service's operations, each written once: the methods of
    :class:`CloudClient` and of :class:`~svc_sdk.aio.AsyncCloudClient`."""

    # ---------------------------------------------------------------- service

    @staticmethod
    def server_info(c: _Cloud) -> Pending[ServerInfo]:
        """The service's versions and the status of each region."""
        return Pending(c._n.server_info(), ServerInfo)

    # ------------------------------------------------------------- containers

    @staticmethod
    def create_container(
        c: _Cloud,
        *,
        region: str = "eu-west-3",
        files: Iterable[Mapping[str, Any]] = (),
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Pending[Container]:
        """Creates a container, registering ``files`` (each ``{"path", "type",
        "size"[, "metadata"]}``; :meth:`file` builds one). Each file comes back with
        its ``uploadInfo``."""
        request = _container_request(region, files, metadata)
        return Pending(c._n.create_container(request), Container)

    @staticmethod
    def get_container(c: _Cloud, container_id: Id) -> Pending[Container]:
        return Pending(c._n.get_container(_id(container_id)), Container)

    @staticmethod
    def update_container(
        c: _Cloud, container_id: Id, *, metadata: Mapping[str, str]
    ) -> Pending[Container]:
        call = c._n.update_container(_id(container_id), {"metadata": dict(metadata)})
        return Pending(call, Container)

    @staticmethod
    def delete_container(c: _Cloud, container_id: Id) -> Pending[None]:
        return Pending(c._n.delete_container(_id(container_id)))

    @staticmethod
    def add_container_files(
        c: _Cloud, container_id: Id, files: Iterable[Mapping[str, Any]]
    ) -> Pending[list[ContainerFile]]:
        call = c._n.add_container_files(_id(container_id), [dict(f) for f in files])
        return Pending(call, _list_of(ContainerFile))

    @staticmethod
    def update_container_file(
        c: _Cloud,
        container_file_id: Id,
        *,
        path: Optional[str] = None,
        type: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Pending[ContainerFile]:
        request = _file_update(path, type, metadata)
        return Pending(c._n.update_container_file(_id(container_file_id), request), ContainerFile)

    @staticmethod
    def delete_container_file(c: _Cloud, container_file_id: Id) -> Pending[None]:
        return Pending(c._n.delete_container_file(_id(container_file_id)))

    @staticmethod
    def list_containers_page(
        c: _Cloud, page: int, per_page: int
    ) -> Pending[tuple[list[Container], Optional[int]]]:
        """One page: its containers and the total the service gives (``numItems``)."""
        return Pending(c._n.list_containers_page(page, per_page), _page_of(Container, "containers"))

    # ------------------------------------------------------------ processings

    @staticmethod
    def start_processing(
        c: _Cloud,
        container_id: Id,
        processing_json: Mapping[str, Any],
        *,
        name: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Pending[Processing]:
        """Starts a processing of a container whose files are uploaded; uses one
        credit. ``ConflictError`` while the organization has another one ongoing."""
        request = _processing_request(container_id, processing_json, name, metadata)
        return Pending(c._n.start_processing(request), Processing)

    @staticmethod
    def get_processing(c: _Cloud, processing_id: Id) -> Pending[Processing]:
        return Pending(c._n.get_processing(_id(processing_id)), Processing)

    @staticmethod
    def cancel_processing(c: _Cloud, processing_id: Id) -> Pending[None]:
        return Pending(c._n.cancel_processing(_id(processing_id)))

    @staticmethod
    def archive_processing(c: _Cloud, processing_id: Id) -> Pending[Processing]:
        return Pending(c._n.archive_processing(_id(processing_id)), Processing)

    @staticmethod
    def list_processing_outputs(c: _Cloud, processing_id: Id) -> Pending[list[OutputFile]]:
        return Pending(c._n.list_processing_outputs(_id(processing_id)), _list_of(OutputFile))

    @staticmethod
    def list_processing_errors(c: _Cloud, processing_id: Id) -> Pending[list[ProcessingError]]:
        call = c._n.list_processing_errors(_id(processing_id))
        return Pending(call, _list_of(ProcessingError))

    @staticmethod
    def list_processings_page(
        c: _Cloud, page: int, per_page: int
    ) -> Pending[tuple[list[Processing], Optional[int]]]:
        return Pending(
            c._n.list_processings_page(page, per_page), _page_of(Processing, "processings")
        )

    # -------------------------------------------------------------- transfers

    @staticmethod
    def upload(
        c: _Cloud,
        container: Union[Id, Container],
        files: Union[Mapping[str, PathLike], Iterable[PathLike]],
        *,
        parallelism: int = 4,
    ) -> Pending[dict[str, Any]]:
        """Uploads local files to the registered files of a container (streamed, in
        parallel, retried; each file must have its registered size). ``files`` maps
        each container path to its local file, or lists local files registered at
        their names. Returns the report: ``{"files": [...], "bytes", "elapsed"}``.
        A container the service does not know raises its error (a
        ``NotFoundError`` that is also a ``TransferError``), nothing sent; cancelling
        stops the transfers."""
        container_id, pairs = _upload_args(container, files)
        return Pending(c._n.upload(container_id, pairs, parallelism), _report)

    @staticmethod
    def download_outputs(
        c: _Cloud, processing_id: Id, folder: PathLike, *, parallelism: int = 4
    ) -> Pending[dict[str, Any]]:
        """Downloads every output of a processed processing into ``folder`` (no output
        path can escape it; no partial file is left on failure or cancel)."""
        call = c._n.download_outputs(_id(processing_id), os.fspath(folder), parallelism)
        return Pending(call, _report)

    # ------------------------------------------------------ webhook endpoints

    @staticmethod
    def create_webhook_endpoint(
        c: _Cloud,
        url: str,
        *,
        event_types: Iterable[str] = EVENT_TYPES,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Pending[WebhookEndpoint]:
        """Registers an endpoint; the answer holds its ``secret`` (give it to
        :class:`~svc_sdk.Webhook`)."""
        request = _endpoint_request(url, event_types, metadata)
        return Pending(c._n.create_webhook_endpoint(request), WebhookEndpoint)

    @staticmethod
    def update_webhook_endpoint(
        c: _Cloud,
        webhook_endpoint_id: Id,
        *,
        url: Optional[str] = None,
        event_types: Optional[Iterable[str]] = None,
        enabled: Optional[bool] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Pending[WebhookEndpoint]:
        request = _endpoint_update(url, event_types, enabled, metadata)
        call = c._n.update_webhook_endpoint(_id(webhook_endpoint_id), request)
        return Pending(call, WebhookEndpoint)

    @staticmethod
    def delete_webhook_endpoint(c: _Cloud, webhook_endpoint_id: Id) -> Pending[None]:
        return Pending(c._n.delete_webhook_endpoint(_id(webhook_endpoint_id)))

    @staticmethod
    def list_webhook_endpoints_page(
        c: _Cloud, page: int, per_page: int
    ) -> Pending[list[WebhookEndpoint]]:
        call = c._n.list_webhook_endpoints_page(page, per_page)
        return Pending(call, _list_of(WebhookEndpoint))

    @staticmethod
    def list_missed_webhooks_page(
        c: _Cloud, webhook_endpoint_id: Id, page: int, per_page: int
    ) -> Pending[list[MissedWebhook]]:
        call = c._n.list_missed_webhooks_page(_id(webhook_endpoint_id), page, per_page)
        return Pending(call, _list_of(MissedWebhook))


class CloudClient(_Cloud):
    """A client of the cloud service for one organization.

    >>> client = CloudClient.from_env()                        # doctest: +SKIP
    >>> for processing in client.list_processings():           # doctest: +SKIP
    ...     print(processing.id, processing.status)

    Settings (the same for :meth:`from_env`):

    - ``request_timeout``: seconds one request (one attempt) may take, answer included;
    - ``connect_timeout``: seconds to establish a connection;
    - ``max_attempts``: how many times a request is tried when it fails in a way a
      retry can mend (at least 1; creations whose answer was lost are never repeated
      blindly);
    - ``page_size``: items per page of the lists (1 to 100);
    - ``outage_tolerance``: seconds a workflow of this client waits out the service or
      its identity provider being away before it fails.

    A value out of range raises ``InvalidInputError`` naming it.
    """

    def __init__(
        self,
        base_url: str,
        auth_url: str,
        notification_url: str,
        api_key: str,
        api_secret: str,
        organization_id: Id,
        *,
        request_timeout: float = _native.DEFAULT_REQUEST_TIMEOUT,
        connect_timeout: float = _native.DEFAULT_CONNECT_TIMEOUT,
        max_attempts: int = _native.DEFAULT_MAX_ATTEMPTS,
        page_size: int = _native.DEFAULT_PAGE_SIZE,
        outage_tolerance: float = _native.DEFAULT_OUTAGE_TOLERANCE,
    ) -> None:
        self._n = _native.CloudClient(
            base_url,
            auth_url,
            notification_url,
            api_key,
            api_secret,
            _id(organization_id),
            request_timeout=request_timeout,
            connect_timeout=connect_timeout,
            max_attempts=max_attempts,
            page_size=page_size,
            outage_tolerance=outage_tolerance,
        )

    @classmethod
    def from_env(
        cls,
        *,
        request_timeout: float = _native.DEFAULT_REQUEST_TIMEOUT,
        connect_timeout: float = _native.DEFAULT_CONNECT_TIMEOUT,
        max_attempts: int = _native.DEFAULT_MAX_ATTEMPTS,
        page_size: int = _native.DEFAULT_PAGE_SIZE,
        outage_tolerance: float = _native.DEFAULT_OUTAGE_TOLERANCE,
    ) -> CloudClient:
        """A client from ``SVC_BASE_URL``, ``SVC_AUTH_URL``, ``SVC_NOTIFICATION_URL``,
        ``SVC_API_KEY``, ``SVC_API_SECRET`` and ``SVC_ORGANIZATION_ID``, with the
        settings of the constructor."""
        return cls._wrap(
            _native.CloudClient.from_env(
                request_timeout=request_timeout,
                connect_timeout=connect_timeout,
                max_attempts=max_attempts,
                page_size=page_size,
                outage_tolerance=outage_tolerance,
            )
        )

    @classmethod
    def _wrap(cls, native: _native.CloudClient) -> CloudClient:
        client = cls.__new__(cls)
        client._n = native
        return client

    def __repr__(self) -> str:
        return repr(self._n)

    server_info = blocking(_ops.server_info)
    create_container = blocking(_ops.create_container)
    get_container = blocking(_ops.get_container)
    update_container = blocking(_ops.update_container)
    delete_container = blocking(_ops.delete_container)
    add_container_files = blocking(_ops.add_container_files)
    update_container_file = blocking(_ops.update_container_file)
    delete_container_file = blocking(_ops.delete_container_file)
    list_containers_page = blocking(_ops.list_containers_page)
    start_processing = blocking(_ops.start_processing)
    get_processing = blocking(_ops.get_processing)
    cancel_processing = blocking(_ops.cancel_processing)
    archive_processing = blocking(_ops.archive_processing)
    list_processing_outputs = blocking(_ops.list_processing_outputs)
    list_processing_errors = blocking(_ops.list_processing_errors)
    list_processings_page = blocking(_ops.list_processings_page)
    upload = blocking(_ops.upload)
    download_outputs = blocking(_ops.download_outputs)
    create_webhook_endpoint = blocking(_ops.create_webhook_endpoint)
    update_webhook_endpoint = blocking(_ops.update_webhook_endpoint)
    delete_webhook_endpoint = blocking(_ops.delete_webhook_endpoint)
    list_webhook_endpoints_page = blocking(_ops.list_webhook_endpoints_page)
    list_missed_webhooks_page = blocking(_ops.list_missed_webhooks_page)
