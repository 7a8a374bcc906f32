"""More CloudClient against the emulator: archiving processings, the files of a
container, a processing's outputs and errors, and lists read page by page (the page
calls and the iterators over every page)."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, TypeVar

import pytest

from svc_sdk import (
    CloudClient,
    ConflictError,
    Emulator,
    InvalidInputError,
    NotFoundError,
)
from svc_sdk.records import ContainerFile, OutputFile, Processing, ProcessingError

ROOT = Path(__file__).resolve().parents[3]
ROVER = ROOT / "samples" / "rover.nmea"
GNSS = {"type": "gnss"}
MISSING = "00000000-0000-4000-8000-000000000000"

T = TypeVar("T")


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.5, device=False) as emulator:
        yield emulator


@pytest.fixture()
def client(emulator: Emulator) -> CloudClient:
    return emulator.cloud(page_size=2)


@pytest.fixture()
def fresh() -> Iterator[CloudClient]:
    """A client of an emulator of its own: lists hold only what the test made."""
    with Emulator(processing_time=0.5, device=False) as emulator:
        yield emulator.cloud(page_size=2)


def wait_until_ended(client: CloudClient, processing_id: str, timeout: float = 30) -> Processing:
    deadline = time.monotonic() + timeout
    processing = client.get_processing(processing_id)
    while not processing.ended and time.monotonic() < deadline:
        time.sleep(0.05)
        processing = client.get_processing(processing_id)
    assert processing.ended, processing
    return processing


def uploaded_container(client: CloudClient, name: str, data: bytes, tmp_path: Path) -> str:
    local = tmp_path / name
    local.write_bytes(data)
    container = client.create_container(files=[client.file(name, size=len(data))])
    client.upload(container, [local])
    return container.id


def all_pages(read: Callable[[int], list[T]]) -> list[list[T]]:
    """Every page from 0 to the first empty one (which is left out)."""
    pages: list[list[T]] = []
    for page in range(100):
        items = read(page)
        if not items:
            return pages
        pages.append(items)
    raise AssertionError("more than 100 pages")


# -------------------------------------------------------------------- archiving


def test_archive_a_processed_processing(client: CloudClient, tmp_path: Path) -> None:
    container_id = uploaded_container(client, "rover.nmea", ROVER.read_bytes(), tmp_path)
    processing = client.start_processing(container_id, GNSS)
    done = wait_until_ended(client, processing.id)
    assert done.succeeded
    assert client.list_processing_outputs(processing.id)

    archived = client.archive_processing(processing.id)
    assert isinstance(archived, Processing)
    assert archived.id == processing.id
    assert archived.status == "archived" and archived.ended
    # The result is kept; the status is read back as archived.
    assert archived.processing_result == "succeeded"
    assert client.get_processing(processing.id).status == "archived"
    listed = {p.id: p.status for p in client.list_processings()}
    assert listed[processing.id] == "archived"
    # Its result files are gone: listing them is a conflict.
    with pytest.raises(ConflictError) as caught:
        client.list_processing_outputs(processing.id)
    assert caught.value.status == 409
    # Archiving again changes nothing; an archived processing cannot be canceled.
    assert client.archive_processing(processing.id).status == "archived"
    with pytest.raises(ConflictError):
        client.cancel_processing(processing.id)
    client.delete_container(container_id)


def test_archive_a_running_processing(client: CloudClient) -> None:
    container = client.create_container()
    running = client.start_processing(container.id, GNSS)
    assert running.status in ("pending", "processing")
    # Only one processing runs at a time in an organization.
    with pytest.raises(ConflictError):
        client.start_processing(container.id, GNSS)

    # The service archives from any status: the running one stops being running...
    archived = client.archive_processing(running.id)
    assert archived.status == "archived"
    assert archived.processing_result is None
    # ...so another may start, and its container may be deleted once that one ends.
    following = client.start_processing(container.id, GNSS)
    wait_until_ended(client, following.id)
    # The engine never overwrote the archive meanwhile.
    again = client.get_processing(running.id)
    assert again.status == "archived"
    assert again.processing_result is None
    with pytest.raises(ConflictError):
        client.cancel_processing(running.id)
    client.delete_container(container.id)


def test_archive_refuses_a_missing_or_invalid_id(client: CloudClient) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.archive_processing(MISSING)
    assert caught.value.status == 404 and caught.value.kind == "not_found"
    with pytest.raises(InvalidInputError) as local:
        client.archive_processing("not-a-uuid")
    assert local.value.status is None


# -------------------------------------------------------------- container files


def test_add_update_and_delete_container_files(client: CloudClient) -> None:
    container = client.create_container(files=[client.file("rover.nmea", size=12)])
    try:
        added = client.add_container_files(
            container.id,
            [
                client.file("imu.csv", size=5, metadata={"sensor": "imu"}),
                client.file("base.obs", type="resources", size=7),
            ],
        )
        assert all(isinstance(f, ContainerFile) for f in added)
        assert [(f.path, f.type, f.size, f.status) for f in added] == [
            ("imu.csv", "input", 5, "pending"),
            ("base.obs", "resources", 7, "pending"),
        ]
        assert added[0]["metadata"] == {"sensor": "imu"}
        assert all(f.upload_info is not None and "url" in f.upload_info for f in added)
        imu, base = added
        files = {f.id: f for f in client.get_container(container.id).files}
        assert set(files) >= {imu.id, base.id}
        assert [f.path for f in client.get_container(container.id).files] == [
            "rover.nmea",
            "imu.csv",
            "base.obs",
        ]

        # All or nothing: a path already held refuses the whole request.
        with pytest.raises(ConflictError) as taken:
            client.add_container_files(
                container.id, [client.file("other.csv", size=1), client.file("imu.csv", size=1)]
            )
        assert taken.value.status == 409
        assert [f.path for f in client.get_container(container.id).files] == [
            "rover.nmea",
            "imu.csv",
            "base.obs",
        ]

        updated = client.update_container_file(
            imu.id, path="imu-renamed.csv", type="resources", metadata={"sensor": "imu2"}
        )
        assert updated.id == imu.id
        assert (updated.path, updated.type) == ("imu-renamed.csv", "resources")
        assert updated["metadata"] == {"sensor": "imu2"}
        read_back = {f.id: f for f in client.get_container(container.id).files}[imu.id]
        assert (read_back.path, read_back.type, read_back.size) == (
            "imu-renamed.csv",
            "resources",
            5,
        )
        assert read_back["metadata"] == {"sensor": "imu2"}
        # Fields not given are kept.
        kept = client.update_container_file(imu.id, metadata={"sensor": "imu3"})
        assert (kept.path, kept.type) == ("imu-renamed.csv", "resources")
        # Another file's path is refused; an invalid type too; nothing changes.
        with pytest.raises(ConflictError):
            client.update_container_file(imu.id, path="base.obs")
        with pytest.raises(InvalidInputError) as bad_type:
            client.update_container_file(imu.id, type="bogus")
        assert bad_type.value.status == 422
        assert {f.id: f.path for f in client.get_container(container.id).files}[imu.id] == (
            "imu-renamed.csv"
        )

        client.delete_container_file(imu.id)
        remaining = client.get_container(container.id).files
        assert [f.path for f in remaining] == ["rover.nmea", "base.obs"]
        assert imu.id not in {f.id for f in remaining}
        with pytest.raises(NotFoundError) as gone:
            client.delete_container_file(imu.id)
        assert gone.value.status == 404 and gone.value.kind == "not_found"
        with pytest.raises(NotFoundError):
            client.update_container_file(imu.id, path="back.csv")
        with pytest.raises(NotFoundError):
            client.delete_container_file(MISSING)
        with pytest.raises(InvalidInputError):
            client.delete_container_file("not-a-uuid")
        # The freed path can be registered again.
        [again] = client.add_container_files(container.id, [client.file("imu.csv", size=3)])
        assert again.id != imu.id
    finally:
        client.delete_container(container.id)


def test_files_of_a_missing_container(client: CloudClient) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.add_container_files(MISSING, [client.file("a.csv", size=1)])
    assert caught.value.status == 404


# ----------------------------------------------------------- outputs and errors


def test_outputs_and_errors_of_a_processing(client: CloudClient, tmp_path: Path) -> None:
    # GGA sentences only: the processing succeeds with a warning (no RMC date).
    gga = b"".join(
        line
        for line in ROVER.read_bytes().splitlines(keepends=True)
        if line.startswith(b"$GNGGA")
    )
    container_id = uploaded_container(client, "rover.nmea", gga, tmp_path)
    processing = client.start_processing(container_id, GNSS)
    # Outputs are listed only once processed.
    with pytest.raises(ConflictError) as early:
        client.list_processing_outputs(processing.id)
    assert early.value.status == 409
    done = wait_until_ended(client, processing.id)
    assert done.succeeded

    outputs = client.list_processing_outputs(processing.id)
    assert all(isinstance(o, OutputFile) for o in outputs)
    assert sorted(o.path for o in outputs) == [
        "report.json",
        "trajectory.csv",
        "trajectory.geojson",
    ]
    csv = next(o for o in outputs if o.path == "trajectory.csv")
    assert csv.url.startswith("http")
    assert csv.url not in repr(csv)  # a signed address
    # Downloaded with a plain GET.
    with urllib.request.urlopen(csv.url, timeout=10) as answer:
        assert answer.read().startswith(b"time,latitude,longitude")

    errors = client.list_processing_errors(processing.id)
    assert all(isinstance(e, ProcessingError) for e in errors)
    assert [e.level for e in errors] == ["warning"]
    assert errors[0].message and "RMC" in errors[0].message
    assert done["errorCount"] == {"errors": 0, "warnings": 1}
    client.delete_container(container_id)


def test_errors_of_a_failed_processing(client: CloudClient) -> None:
    # A container without any file: nothing to process, the processing fails.
    container = client.create_container()
    processing = client.start_processing(container.id, GNSS)
    done = wait_until_ended(client, processing.id)
    assert done.status == "processed" and done.processing_result == "failed"
    assert not done.succeeded

    errors = client.list_processing_errors(processing.id)
    assert [e.level for e in errors] == ["error"]
    assert errors[0].message and "no usable GNSS input" in errors[0].message
    assert done["errorCount"] == {"errors": 1, "warnings": 0}
    assert client.list_processing_outputs(processing.id) == []
    # The errors are kept once archived.
    client.archive_processing(processing.id)
    assert [e.message for e in client.list_processing_errors(processing.id)] == [
        errors[0].message
    ]
    client.delete_container(container.id)


def test_outputs_and_errors_of_a_missing_processing(client: CloudClient) -> None:
    with pytest.raises(NotFoundError):
        client.list_processing_outputs(MISSING)
    with pytest.raises(NotFoundError):
        client.list_processing_errors(MISSING)
    with pytest.raises(InvalidInputError):
        client.list_processing_errors("not-a-uuid")


# ---------------------------------------------------------------------- lists


def start_and_cancel(client: CloudClient, count: int) -> list[str]:
    """`count` processings, each canceled at once (one runs at a time)."""
    container = client.create_container()
    ids = []
    for i in range(count):
        processing = client.start_processing(container.id, GNSS, name=f"p{i}")
        client.cancel_processing(processing.id)
        ids.append(processing.id)
    return ids


def test_list_processings_goes_over_every_page(fresh: CloudClient) -> None:
    created = start_and_cancel(fresh, 7)  # page_size 2: four pages
    listed = list(fresh.list_processings())
    assert all(isinstance(p, Processing) for p in listed)
    assert [p.id for p in listed] == created
    assert {p.status for p in listed} == {"canceled"}
    assert [p.name for p in listed] == [f"p{i}" for i in range(7)]

    pages = all_pages(lambda page: fresh.list_processings_page(page, 2)[0])
    assert [len(p) for p in pages] == [2, 2, 2, 1]
    assert [p.id for page in pages for p in page] == created
    items, total = fresh.list_processings_page(1, 3)
    assert [p.id for p in items] == created[3:6]
    assert total == 7
    assert fresh.list_processings_page(7, 1) == ([], 7)
    with pytest.raises(InvalidInputError):
        fresh.list_processings_page(-1, 2)
    with pytest.raises(InvalidInputError):
        fresh.list_processings_page(0, 0)


def test_list_webhook_endpoints_page(fresh: CloudClient) -> None:
    created = [
        fresh.create_webhook_endpoint(f"http://127.0.0.1:9/hook{i}", metadata={"i": str(i)}).id
        for i in range(5)
    ]
    iterated = [e.id for e in fresh.list_webhook_endpoints()]
    assert iterated == created
    pages = all_pages(lambda page: fresh.list_webhook_endpoints_page(page, 2))
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [e.id for page in pages for e in page] == iterated
    assert [e.url for e in fresh.list_webhook_endpoints_page(1, 2)] == [
        "http://127.0.0.1:9/hook2",
        "http://127.0.0.1:9/hook3",
    ]
    assert [e.id for e in fresh.list_webhook_endpoints_page(0, 100)] == created
    # A deleted endpoint leaves the pages.
    fresh.delete_webhook_endpoint(created[0])
    assert [e.id for e in fresh.list_webhook_endpoints_page(0, 2)] == created[1:3]
    assert [e.id for e in fresh.list_webhook_endpoints()] == created[1:]
    with pytest.raises(InvalidInputError):
        fresh.list_webhook_endpoints_page(0, 101)


# ---------------------------------------------------------------- missed webhooks


@pytest.fixture()
def quick_retries(svc_bin: Path) -> Iterator[dict[str, Any]]:
    """An emulator whose webhook retries come after 1, 2, 4... ms (the in-process one
    retries after 1 s, doubling, ten times: a missed webhook takes 17 minutes). Its
    addresses and credentials."""
    child = subprocess.Popen(
        [str(svc_bin), "emulator", "--no-device", "--processing-seconds", "0.5",
         "--webhook-retry-base-ms", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line, "the emulator printed nothing"
        yield json.loads(line)
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def test_missed_webhooks_page_by_page(quick_retries: dict[str, Any]) -> None:
    info = quick_retries
    client = CloudClient(
        info["base_url"], info["auth_url"], info["notification_url"],
        info["api_key"], info["api_secret"], info["organization_id"], page_size=2,
    )
    # Nothing listens there: every delivery fails, and after its last retry is missed.
    endpoint = client.create_webhook_endpoint(
        "http://127.0.0.1:9/hook", event_types=["cloud:processing-ended"]
    )
    assert list(client.list_missed_webhooks(endpoint.id)) == []
    # Each cancel ends a processing: one `cloud:processing-ended` event each.
    ended = start_and_cancel(client, 5)

    deadline = time.monotonic() + 30
    missed = client.list_missed_webhooks_page(endpoint.id, 0, 100)
    while len(missed) < len(ended) and time.monotonic() < deadline:
        time.sleep(0.1)
        missed = client.list_missed_webhooks_page(endpoint.id, 0, 100)
    assert len(missed) == len(ended)
    assert {m["eventType"] for m in missed} == {"cloud:processing-ended"}
    assert sorted(m["payload"]["id"] for m in missed) == sorted(ended)
    assert {m["payload"]["status"] for m in missed} == {"canceled"}

    iterated = [m["id"] for m in client.list_missed_webhooks(endpoint.id)]
    assert iterated == [m["id"] for m in missed]
    assert len(set(iterated)) == 5
    pages = all_pages(lambda page: client.list_missed_webhooks_page(endpoint.id, page, 2))
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [m["id"] for page in pages for m in page] == iterated
    assert client.list_missed_webhooks_page(endpoint.id, 5, 1) == []

    with pytest.raises(NotFoundError):
        client.list_missed_webhooks_page(MISSING, 0, 2)
    with pytest.raises(InvalidInputError):
        client.list_missed_webhooks_page(endpoint.id, -1, 2)
    client.delete_webhook_endpoint(endpoint.id)
    with pytest.raises(NotFoundError):
        list(client.list_missed_webhooks(endpoint.id))
