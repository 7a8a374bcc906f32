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
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, TypeVar, Union

from svc_sdk import _native
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


class _Pages(Iterator[R]):
    """An iterator over every item of a list, page after page."""

    def __init__(self, pager: _native.Pager, kind: Callable[[Mapping[str, Any]], R]) -> None:
        self._pager = pager
        self._kind = kind

    def __iter__(self) -> _Pages[R]:
        return self

    def __next__(self) -> R:
        item = self._pager.next_call().result()
        if item is None:
            raise StopIteration
        return self._kind(item)


class CloudClient:
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

    @property
    def organization_id(self) -> str:
        return self._n.organization_id

    @property
    def base_url(self) -> str:
        return self._n.base_url

    def __repr__(self) -> str:
        return repr(self._n)

    # -------------------------------------------------------------------- service

    def server_info(self) -> ServerInfo:
        """The service's versions and the status of each region."""
        return ServerInfo(self._n.server_info().result())

    # ----------------------------------------------------------------- containers

    def create_container(
        self,
        *,
        region: str = "eu-west-3",
        files: Iterable[Mapping[str, Any]] = (),
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Container:
        """Creates a container, registering ``files`` (each ``{"path", "type",
        "size"[, "metadata"]}``; :meth:`file` builds one). Each file comes back with
        its ``uploadInfo``."""
        request = _container_request(region, files, metadata)
        return Container(self._n.create_container(request).result())

    @staticmethod
    def file(
        path: str, *, type: str = "input", size: int, metadata: Optional[Mapping[str, str]] = None
    ) -> dict[str, Any]:
        """A file to register: its container path, type (``input`` or ``resources``),
        size in bytes and metadata."""
        return _file(path, type=type, size=size, metadata=metadata)

    def get_container(self, container_id: Id) -> Container:
        return Container(self._n.get_container(_id(container_id)).result())

    def update_container(self, container_id: Id, *, metadata: Mapping[str, str]) -> Container:
        return Container(
            self._n.update_container(_id(container_id), {"metadata": dict(metadata)}).result()
        )

    def delete_container(self, container_id: Id) -> None:
        self._n.delete_container(_id(container_id)).result()

    def add_container_files(
        self, container_id: Id, files: Iterable[Mapping[str, Any]]
    ) -> list[ContainerFile]:
        files_list = [dict(f) for f in files]
        return _records(
            ContainerFile, self._n.add_container_files(_id(container_id), files_list).result()
        )

    def update_container_file(
        self,
        container_file_id: Id,
        *,
        path: Optional[str] = None,
        type: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> ContainerFile:
        request = _file_update(path, type, metadata)
        return ContainerFile(
            self._n.update_container_file(_id(container_file_id), request).result()
        )

    def delete_container_file(self, container_file_id: Id) -> None:
        self._n.delete_container_file(_id(container_file_id)).result()

    def list_containers_page(self, page: int, per_page: int) -> tuple[list[Container], Optional[int]]:
        """One page: its containers and the total the service gives (``numItems``)."""
        answer = self._n.list_containers_page(page, per_page).result()
        return _records(Container, answer.get("containers") or []), answer.get("numItems")

    def list_containers(self, *, metadata: Optional[Mapping[str, str]] = None) -> Iterator[Container]:
        """Every container of the organization, page after page; with ``metadata``,
        those that carry each of its entries."""
        return _Pages(
            self._n.list_containers(None if metadata is None else dict(metadata)), Container
        )

    # ---------------------------------------------------------------- processings

    def start_processing(
        self,
        container_id: Id,
        processing_json: Mapping[str, Any],
        *,
        name: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Processing:
        """Starts a processing of a container whose files are uploaded; uses one
        credit. ``ConflictError`` while the organization has another one ongoing."""
        request = _processing_request(container_id, processing_json, name, metadata)
        return Processing(self._n.start_processing(request).result())

    def get_processing(self, processing_id: Id) -> Processing:
        return Processing(self._n.get_processing(_id(processing_id)).result())

    def cancel_processing(self, processing_id: Id) -> None:
        self._n.cancel_processing(_id(processing_id)).result()

    def archive_processing(self, processing_id: Id) -> Processing:
        return Processing(self._n.archive_processing(_id(processing_id)).result())

    def list_processing_outputs(self, processing_id: Id) -> list[OutputFile]:
        return _records(OutputFile, self._n.list_processing_outputs(_id(processing_id)).result())

    def list_processing_errors(self, processing_id: Id) -> list[ProcessingError]:
        return _records(
            ProcessingError, self._n.list_processing_errors(_id(processing_id)).result()
        )

    def list_processings_page(
        self, page: int, per_page: int
    ) -> tuple[list[Processing], Optional[int]]:
        answer = self._n.list_processings_page(page, per_page).result()
        return _records(Processing, answer.get("processings") or []), answer.get("numItems")

    def list_processings(
        self, *, name: Optional[str] = None, metadata: Optional[Mapping[str, str]] = None
    ) -> Iterator[Processing]:
        """Every processing of the organization, page after page; with ``name`` or
        ``metadata``, those of that name that carry each of its entries."""
        return _Pages(
            self._n.list_processings(name, None if metadata is None else dict(metadata)),
            Processing,
        )

    # ------------------------------------------------------------------ transfers

    def upload(
        self,
        container: Union[Id, Container],
        files: Union[Mapping[str, PathLike], Iterable[PathLike]],
        *,
        parallelism: int = 4,
    ) -> dict[str, Any]:
        """Uploads local files to the registered files of a container (streamed, in
        parallel, retried; each file must have its registered size). ``files`` maps
        each container path to its local file, or lists local files registered at
        their names. Returns the report: ``{"files": [...], "bytes", "elapsed"}``."""
        container_id, pairs = _upload_args(container, files)
        report: dict[str, Any] = self._n.upload(container_id, pairs, parallelism).result()
        return report

    def download_outputs(
        self, processing_id: Id, folder: PathLike, *, parallelism: int = 4
    ) -> dict[str, Any]:
        """Downloads every output of a processed processing into ``folder`` (no output
        path can escape it; no partial file is left on failure)."""
        report: dict[str, Any] = self._n.download_outputs(
            _id(processing_id), os.fspath(folder), parallelism
        ).result()
        return report

    # ----------------------------------------------------------- webhook endpoints

    def create_webhook_endpoint(
        self,
        url: str,
        *,
        event_types: Iterable[str] = EVENT_TYPES,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> WebhookEndpoint:
        """Registers an endpoint; the answer holds its ``secret`` (give it to
        :class:`~svc_sdk.Webhook`)."""
        request = _endpoint_request(url, event_types, metadata)
        return WebhookEndpoint(self._n.create_webhook_endpoint(request).result())

    def update_webhook_endpoint(
        self,
        webhook_endpoint_id: Id,
        *,
        url: Optional[str] = None,
        event_types: Optional[Iterable[str]] = None,
        enabled: Optional[bool] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> WebhookEndpoint:
        request = _endpoint_update(url, event_types, enabled, metadata)
        return WebhookEndpoint(
            self._n.update_webhook_endpoint(_id(webhook_endpoint_id), request).result()
        )

    def delete_webhook_endpoint(self, webhook_endpoint_id: Id) -> None:
        self._n.delete_webhook_endpoint(_id(webhook_endpoint_id)).result()

    def list_webhook_endpoints_page(self, page: int, per_page: int) -> list[WebhookEndpoint]:
        return _records(
            WebhookEndpoint, self._n.list_webhook_endpoints_page(page, per_page).result()
        )

    def list_webhook_endpoints(self) -> Iterator[WebhookEndpoint]:
        return _Pages(self._n.list_webhook_endpoints(), WebhookEndpoint)

    def list_missed_webhooks_page(
        self, webhook_endpoint_id: Id, page: int, per_page: int
    ) -> list[MissedWebhook]:
        answer = self._n.list_missed_webhooks_page(
            _id(webhook_endpoint_id), page, per_page
        ).result()
        return _records(MissedWebhook, answer)

    def list_missed_webhooks(self, webhook_endpoint_id: Id) -> Iterator[MissedWebhook]:
        return _Pages(self._n.list_missed_webhooks(_id(webhook_endpoint_id)), MissedWebhook)
