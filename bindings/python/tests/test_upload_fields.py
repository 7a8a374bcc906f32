"""The fields of an upload form as the service hands them out: the SDK sends every one,
unchanged and in order, those it does not know included. `svc emulator
--upload-extra-field NAME=VALUE` adds a field to every form, signed into its policy like
the others: the upload succeeds only if the field is sent unchanged."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_sdk import CloudClient

# The fields every form carries, in the order the service hands them out.
STANDARD = [
    "bucket",
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "key",
    "Policy",
    "X-Amz-Signature",
    "X-Amz-Security-Token",
]
# A field this SDK knows nothing of, with a value a careless form encoder would change.
EXTRA_NAME = "x-amz-meta-uploaded-by"
EXTRA_VALUE = "svc sdk python/1+2=3 é"


@pytest.fixture(scope="module")
def info(svc_bin: Path) -> Iterator[dict[str, Any]]:
    """An emulator whose forms carry the extra field: its addresses and credentials."""
    child = subprocess.Popen(
        [str(svc_bin), "emulator", "--no-device", "--processing-seconds", "0.5",
         "--upload-extra-field", f"{EXTRA_NAME}={EXTRA_VALUE}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
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


@pytest.fixture()
def client(info: dict[str, Any]) -> CloudClient:
    return CloudClient(
        info["base_url"], info["auth_url"], info["notification_url"],
        info["api_key"], info["api_secret"], info["organization_id"],
    )


def post_form(url: str, fields: list[tuple[str, str]], content: bytes) -> int:
    """A multipart POST of `fields` in order, then `file`: the storage's status."""
    boundary = uuid.uuid4().hex
    body = b""
    for name, value in fields:
        body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n"
                 f"{value}\r\n").encode()
    body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
             f"filename=\"upload.bin\"\r\n\r\n").encode() + content + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    request = urllib.request.Request(
        url, data=body, method="POST",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            status: int = answer.status
            return status
    except urllib.error.HTTPError as refused:
        return refused.code


def test_an_unknown_field_handed_out_is_sent_and_the_upload_succeeds(
    client: CloudClient, tmp_path: Path
) -> None:
    content = b"$GPGGA,103000.00,4851.000000,N,00221.000000,E,1,12,0.8,35.000,M,47.000,M,,*00\r\n"
    local = tmp_path / "rover.nmea"
    local.write_bytes(content)
    container = client.create_container(files=[client.file("rover.nmea", size=len(content))])
    form = container.files[0].upload_info
    assert form is not None
    # The standard fields in the service's order, then the one the SDK does not know.
    assert list(form["fields"]) == [*STANDARD, EXTRA_NAME]
    assert form["fields"][EXTRA_NAME] == EXTRA_VALUE

    # Without it storage refuses the form: the success below is the SDK sending it.
    without = [(k, v) for k, v in form["fields"].items() if k != EXTRA_NAME]
    assert post_form(form["url"], without, content) == 403
    assert client.get_container(container.id).files[0].status == "pending"

    report = client.upload(container, [local])
    assert [f["state"] for f in report["files"]] == ["done"]
    assert report["bytes"] == len(content)
    assert client.get_container(container.id).files[0].status == "ready"
