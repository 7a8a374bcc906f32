"""CloudClient against the in-process emulator: every kind of record and error
crossing into Python, lists over pages, secrets kept out of reprs, one client shared
by many threads."""

from __future__ import annotations

import contextlib
import datetime
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import svc_sdk
from svc_sdk import (
    AuthenticationError,
    CloudClient,
    ConflictError,
    Emulator,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    SvcError,
    UnreachableError,
)
from svc_sdk.records import Container, OutputFile, Processing, WebhookEndpoint


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.5, device=False) as emulator:
        yield emulator


@pytest.fixture()
def client(emulator: Emulator) -> CloudClient:
    return emulator.cloud(page_size=2)


def test_server_info_and_a_container_round_trip(client: CloudClient) -> None:
    info = client.server_info()
    assert info["version"]
    container = client.create_container(
        files=[client.file("rover.nmea", size=12)], metadata={"project": "py"}
    )
    assert isinstance(container, Container)
    assert container.metadata == {"project": "py"}
    [file] = container.files
    assert file.path == "rover.nmea" and file.size == 12 and file.status == "pending"
    assert file.upload_info is not None and "url" in file.upload_info
    # Wire names in the mapping, Python names as properties.
    assert container["id"] == container.id
    assert container.created_at is not None and container.created_at.tzinfo is not None

    same = client.get_container(uuid.UUID(container.id))
    assert same.id == container.id and same.metadata == container.metadata
    assert [f.path for f in same.files] == ["rover.nmea"]
    updated = client.update_container(container.id, metadata={"project": "renamed"})
    assert updated.metadata == {"project": "renamed"}

    client.delete_container(container.id)
    with pytest.raises(NotFoundError) as caught:
        client.get_container(container.id)
    assert caught.value.status == 404
    assert caught.value.kind == "not_found"
    assert caught.value.title
    # A 404 is never retryable, whatever answered it (the cloud here, a unit below).
    assert caught.value.retryable is False


def test_a_404_is_not_retryable_from_any_source(client: CloudClient) -> None:
    with svc_sdk.Emulator(processing_time=0.5) as emulator:
        unit = emulator.unit()
        with pytest.raises(NotFoundError) as from_unit:
            unit.get("aiding/gnss9")
    with pytest.raises(NotFoundError) as from_cloud:
        client.get_processing(uuid.uuid4())
    for caught in (from_unit, from_cloud):
        assert caught.value.status == 404
        assert caught.value.retryable is False, caught.value


def test_lists_go_over_every_page(client: CloudClient) -> None:
    created = [client.create_container().id for _ in range(5)]
    try:
        listed = [c.id for c in client.list_containers()]  # page_size 2: several pages
        assert set(created) <= set(listed)
        assert len(listed) == len(set(listed))
        page, total = client.list_containers_page(0, 2)
        assert len(page) == 2
        assert total is None or total >= 5
    finally:
        for container_id in created:
            client.delete_container(container_id)


def test_refused_input_is_refused_before_sending(client: CloudClient) -> None:
    too_many = {f"k{i}": "v" for i in range(51)}
    with pytest.raises(InvalidInputError) as caught:
        client.create_container(metadata=too_many)
    assert caught.value.kind == "invalid_input"
    assert caught.value.retryable is False
    with pytest.raises(InvalidInputError):
        client.get_container("not-a-uuid")
    with pytest.raises(InvalidInputError):
        client.list_containers_page(0, 0)
    with pytest.raises(InvalidInputError):
        client.create_container(files=[{"path": "a", "size": "not a number"}])


def test_a_conflict_is_a_conflict_error(client: CloudClient) -> None:
    container = client.create_container(files=[client.file("rover.nmea", size=10)])
    try:
        # The registered file was never uploaded: 409.
        with pytest.raises(ConflictError) as caught:
            client.start_processing(container.id, {"type": "gnss"})
        assert caught.value.status == 409
        assert caught.value.details
    finally:
        client.delete_container(container.id)


def test_credentials_errors_and_no_secret_in_them(emulator: Emulator) -> None:
    info = emulator.info
    wrong = "wrong-secret-Zq81x"
    client = CloudClient(
        info["base_url"],
        info["auth_url"],
        info["notification_url"],
        info["api_key"],
        wrong,
        info["organization_id"],
    )
    assert wrong not in repr(client)
    assert repr(client).startswith(f"CloudClient(base_url='{info['base_url'].rstrip('/')}")
    # Credentials written into an address are not shown either.
    proxied = CloudClient(info["base_url"].replace("://", "://proxy:hunter2@"), info["auth_url"],
                          info["notification_url"], info["api_key"], wrong, info["organization_id"])
    assert "hunter2" not in repr(proxied) and "proxy" not in repr(proxied)
    with pytest.raises(AuthenticationError) as caught:
        client.server_info()
    for text in (str(caught.value), repr(caught.value)):
        assert wrong not in text
    with pytest.raises(PermissionDeniedError) as denied:
        emulator.cloud(member=True).server_info()
    assert denied.value.status == 403


def test_an_unreachable_identity_provider_is_unreachable_not_authentication(
    emulator: Emulator,
) -> None:
    info = emulator.info
    client = CloudClient(
        info["base_url"],
        "http://127.0.0.1:1",
        info["notification_url"],
        info["api_key"],
        info["api_secret"],
        info["organization_id"],
        max_attempts=1,
    )
    with pytest.raises(UnreachableError) as caught:
        client.server_info()
    assert not isinstance(caught.value, AuthenticationError)
    assert caught.value.retryable


def test_webhook_endpoints_keep_their_secret_out_of_reprs(client: CloudClient) -> None:
    endpoint = client.create_webhook_endpoint("http://127.0.0.1:9/hook")
    try:
        assert endpoint.secret is not None and endpoint.secret.startswith("whsec_")
        assert endpoint.secret not in repr(endpoint)
        assert endpoint.secret not in endpoint._repr_html_()
        assert endpoint.id in [e.id for e in client.list_webhook_endpoints()]
        updated = client.update_webhook_endpoint(endpoint.id, enabled=False)
        assert updated["enabled"] is False
        assert list(client.list_missed_webhooks(endpoint.id)) == []
    finally:
        client.delete_webhook_endpoint(endpoint.id)


def test_config_from_the_environment(monkeypatch: pytest.MonkeyPatch, emulator: Emulator) -> None:
    for name, value in emulator.env.items():
        monkeypatch.setenv(name, value)
    client = CloudClient.from_env()
    assert client.organization_id == emulator.info["organization_id"]
    assert client.server_info()["version"]
    monkeypatch.delenv("SVC_BASE_URL")
    with pytest.raises(InvalidInputError) as caught:
        CloudClient.from_env()
    assert "SVC_BASE_URL" in str(caught.value)


def test_one_client_from_eight_threads(client: CloudClient) -> None:
    errors: list[BaseException] = []
    made: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        try:
            for _ in range(3):
                container = client.create_container(metadata={"thread": "yes"})
                with lock:
                    made.append(container.id)
                assert client.get_container(container.id).id == container.id
                client.delete_container(container.id)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(made)) == 24


def test_records_render_in_notebooks(client: CloudClient) -> None:
    processing = Processing(
        {"id": str(uuid.uuid4()), "status": "processed", "processingResult": "succeeded",
         "createdAt": "2026-11-25T10:00:00.123Z", "somethingNew": 1}
    )
    assert processing.succeeded and processing.ended
    assert processing.created_at is not None and processing.created_at.microsecond == 123000
    assert processing["somethingNew"] == 1  # fields unknown to the SDK are kept
    assert "<table>" in processing._repr_html_()
    assert "processed" in repr(processing)


def test_webhook_endpoint_addresses_are_shown_without_credentials() -> None:
    endpoint = WebhookEndpoint({"id": "e", "url": "https://me:pw-7@hooks.example.com:8443/in?token=t-9#x",
                                "secret": "whsec-1"})
    for shown in (repr(endpoint), endpoint._repr_html_()):
        for secret in ("pw-7", "t-9", "whsec-1", "me:"):
            assert secret not in shown, (secret, shown)
        assert "https://hooks.example.com:8443/in" in shown
    assert endpoint.url == "https://me:pw-7@hooks.example.com:8443/in?token=t-9#x"


def test_views_hide_signed_addresses_and_upload_forms(client: CloudClient) -> None:
    container = client.create_container(files=[client.file("rover.nmea", size=10)])
    form = container.files[0].upload_info
    assert form is not None and form["fields"]["X-Amz-Signature"]
    secrets = [form["fields"][name] for name in
               ("X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "Policy")]
    for view in (container, container.files[0]):
        for shown in (repr(view), view._repr_html_(), str(view)):
            for secret in secrets:
                # The policy is base64 JSON repeating the credential and the token.
                assert secret not in shown, shown
            assert "[redacted]" in view._repr_html_()
    assert container.to_dict()["files"][0]["uploadInfo"] == form  # still readable
    output = OutputFile({"path": "results/report.json",
                         "url": "https://storage/x?X-Amz-Signature=0123abcd"})
    assert "0123abcd" not in repr(output) and "0123abcd" not in output._repr_html_()
    assert "results/report.json" in output._repr_html_() and output.url.endswith("0123abcd")


@pytest.mark.parametrize(
    ("wire", "utc"),
    [
        ("2026-11-25T10:00:00.123Z", datetime.datetime(2026, 11, 25, 10, 0, 0, 123000)),
        ("2026-11-25T10:00:00Z", datetime.datetime(2026, 11, 25, 10, 0, 0)),
        ("2026-11-25T12:00:00.5+02:00", datetime.datetime(2026, 11, 25, 10, 0, 0, 500000)),
        ("2026-11-25t05:00:00.1234567-05:00", datetime.datetime(2026, 11, 25, 10, 0, 0, 123456)),
        ("2016-12-31T23:59:60Z", datetime.datetime(2016, 12, 31, 23, 59, 59, 999999)),
    ],
)
def test_timestamps_read_as_utc_whatever_the_local_zone(wire: str, utc: datetime.datetime) -> None:
    # The zone of the machine must not matter: read in a child with a zone far from UTC.
    code = (
        "import sys; from svc_sdk.records import Processing; "
        "print(Processing({'id': 'p', 'createdAt': sys.argv[1]}).created_at.isoformat())"
    )
    for zone in ("UTC", "America/New_York", "Asia/Tokyo"):
        shown = subprocess.run(
            [sys.executable, "-c", code, wire], env={**os.environ, "TZ": zone},
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        assert shown == utc.replace(tzinfo=datetime.timezone.utc).isoformat(), zone


@pytest.mark.parametrize(
    "wire",
    ["2026-11-25T10:00:00", "2026-02-30T10:00:00Z", "2026-11-25T10:00:00+24:00", "yesterday", 17,
     "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "\u0662\u0660\u0662\u0666-01-01T00:00:00Z"],
)
def test_timestamps_not_rfc3339_read_as_none(wire: object) -> None:
    assert Processing({"id": "p", "createdAt": wire}).created_at is None


def test_every_error_is_an_svc_error() -> None:
    assert issubclass(svc_sdk.ConflictError, SvcError)


def test_upload_then_process_then_download(client: CloudClient, tmp_path: Path) -> None:
    samples = Path(__file__).resolve().parents[3] / "samples"
    rover = samples / "rover.nmea"
    container = client.create_container(
        files=[client.file("rover.nmea", size=rover.stat().st_size)]
    )
    report = client.upload(container, [rover])
    assert report["bytes"] == rover.stat().st_size
    assert [f["state"] for f in report["files"]] == ["done"]
    assert client.get_container(container.id).files[0].status == "ready"
    # A file of the wrong size is refused before anything is sent.
    wrong = tmp_path / "rover.nmea"
    wrong.write_bytes(b"short")
    other = client.create_container(files=[client.file("rover.nmea", size=10)])
    with pytest.raises(svc_sdk.TransferError) as caught:
        client.upload(other.id, {"rover.nmea": wrong})
    assert caught.value.kind == "invalid_input"
    with pytest.raises(svc_sdk.TransferError):
        client.upload(other.id, {"not-registered.csv": wrong})
    # A container the service does not know: its 404, as a transfer that sent nothing.
    with pytest.raises(svc_sdk.NotFoundError) as unknown:
        client.upload(uuid.uuid4(), {"rover.nmea": rover})
    assert isinstance(unknown.value, svc_sdk.TransferError)
    assert unknown.value.status == 404
    assert unknown.value.operation == "getContainer"
    assert "nothing was transferred" in str(unknown.value)

    processing = client.start_processing(container.id, {"type": "gnss"})
    deadline = time.monotonic() + 30
    while not client.get_processing(processing.id).ended and time.monotonic() < deadline:
        time.sleep(0.1)
    downloaded = client.download_outputs(processing.id, tmp_path / "out")
    names = sorted(Path(f["local_path"]).name for f in downloaded["files"])
    assert "trajectory.csv" in names
    assert (tmp_path / "out" / "trajectory.csv").stat().st_size > 0


class _Answer(http.server.BaseHTTPRequestHandler):
    """An identity provider that fails in a chosen way."""

    status = 503
    body = b"upstream down"

    def _answer(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = _answer
    do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (503, b"upstream down", svc_sdk.TransientError),
        (200, b"not an OpenID configuration", svc_sdk.InvalidResponseError),
    ],
)
def test_a_failing_or_garbled_identity_provider(
    emulator: Emulator, status: int, body: bytes, error: type[SvcError]
) -> None:
    handler = type("Handler", (_Answer,), {"status": status, "body": body})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        info = emulator.info
        client = CloudClient(
            info["base_url"],
            f"http://127.0.0.1:{server.server_address[1]}",
            info["notification_url"],
            info["api_key"],
            info["api_secret"],
            info["organization_id"],
            max_attempts=1,
        )
        with pytest.raises(error) as caught:
            client.server_info()
        assert not isinstance(caught.value, AuthenticationError)
        assert caught.value.retryable == (status >= 500)
        assert info["api_secret"] not in str(caught.value)
    finally:
        server.shutdown()
        server.server_close()


def test_timeouts_and_retries_are_set_on_every_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect

    from svc_sdk import InvalidInputError, Unit

    with svc_sdk.Emulator(processing_time=0.5) as emulator:
        for name, value in emulator.env.items():
            monkeypatch.setenv(name, value)
        settings: dict[str, Any] = dict(request_timeout=5.0, connect_timeout=2.0, max_attempts=2,
                                        page_size=7, outage_tolerance=3.0)
        built = [emulator.cloud(**settings), svc_sdk.CloudClient.from_env(**settings)]
        for client in built:
            assert client.server_info() is not None
        # Refused with the setting named, before anything is sent.
        refused: list[dict[str, Any]] = [
            dict(max_attempts=0), dict(request_timeout=0.0), dict(connect_timeout=-1.0),
            dict(request_timeout=float("nan")), dict(page_size=0),
            dict(outage_tolerance=float("inf"))]
        for bad in refused:
            for make in (emulator.cloud, svc_sdk.CloudClient.from_env):
                with pytest.raises(InvalidInputError) as caught:
                    make(**bad)
                assert next(iter(bad)) in str(caught.value), caught.value
        # The unit's links take a timeout too.
        url = emulator.info["device_url"]
        assert Unit.http(url, timeout=2.5).info()["serialNumber"]
        assert Unit.serial_tcp(emulator.info["device_serial_tcp"], timeout=1.5).info()
        with pytest.raises(InvalidInputError):
            Unit.http(url, timeout=0)
    # help() shows every keyword with its default.
    for function in (svc_sdk.CloudClient.__init__, svc_sdk.CloudClient.from_env):
        parameters = inspect.signature(function).parameters
        for keyword in ("request_timeout", "connect_timeout", "max_attempts", "page_size",
                        "outage_tolerance"):
            assert parameters[keyword].default is not inspect.Parameter.empty, keyword
    assert inspect.signature(Unit.http).parameters["timeout"].default == 10.0


@contextlib.contextmanager
def _silent_server() -> Iterator[str]:
    """`host:port` of a server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        host, port = server.getsockname()
        yield f"{host}:{port}"
    finally:
        stop.set()
        thread.join()
        for connection in accepted:
            connection.close()
        server.close()


def test_a_request_without_an_answer_in_time_is_one_class_whichever_side(
    emulator: Emulator,
) -> None:
    info = emulator.info
    with _silent_server() as silent:
        url = f"http://{silent}"

        def cloud(base_url: str, auth_url: str) -> CloudClient:
            return CloudClient(
                base_url,
                auth_url,
                info["notification_url"],
                info["api_key"],
                info["api_secret"],
                info["organization_id"],
                request_timeout=0.3,
                max_attempts=1,
            )

        calls: list[tuple[str, Callable[[], object]]] = [
            ("service", cloud(url, info["auth_url"]).server_info),
            ("identity_provider", cloud(info["base_url"], url).server_info),
            ("unit", svc_sdk.Unit.http(url, timeout=0.3).info),
            ("unit", svc_sdk.Unit.serial_tcp(silent, timeout=0.3).info),
        ]
        for side, call in calls:
            with pytest.raises(svc_sdk.WaitTimeoutError) as caught:
                call()
            error = caught.value
            assert isinstance(error, TimeoutError)
            assert (error.kind, error.side, error.retryable) == ("timeout", side, True), repr(error)
            assert f"side={side!r}" in repr(error)
            assert f"<td style='text-align:left'>{side}</td>" in error._repr_html_()
    # A connection refused stays unreachable, with its side.
    with pytest.raises(UnreachableError) as refused:
        svc_sdk.Unit.http("http://127.0.0.1:1").info()
    assert refused.value.side == "unit"
