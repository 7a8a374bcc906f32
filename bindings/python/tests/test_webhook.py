from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import svc_sdk
from svc_sdk import Webhook, WebhookVerificationError, webhook
from svc_sdk.errors import InvalidInputError, InvalidResponseError

SECRET = "whsec_aab6a590258a5b3139d376712eb404735b935cb603305120ddf5cc06f3858f94"
OTHER = "whsec_2ee631f4da41d7508067a2fbe518a0eda2d8e5906bf9a9099362eb343bc720d3"
NOW = 1_719_911_825
ROOT = Path(__file__).resolve().parents[3]


def headers_of(vector: dict[str, Any]) -> dict[str, str]:
    headers = {}
    if vector["timestamp"] is not None:
        headers["Svc-Timestamp"] = vector["timestamp"]
    if vector["signature"] is not None:
        headers["Svc-Signature"] = vector["signature"]
    return headers


def outcome(call: Any) -> str:
    try:
        call()
    except WebhookVerificationError as error:
        return error.code
    return "valid"


def test_shared_vectors(webhook_vectors: list[dict[str, Any]]) -> None:
    assert len(webhook_vectors) > 50
    for vector in webhook_vectors:
        verifier = Webhook(vector["secrets"], tolerance=vector["tolerance_seconds"])
        headers, body = headers_of(vector), vector["body"].encode()
        got = outcome(lambda: verifier.verify(headers, body, now=vector["now"]))
        assert got == vector["expected"], vector["name"]
        got = outcome(lambda: verifier.verify_ignoring_timestamp(headers, body))
        assert got == vector["ignoring_timestamp"], vector["name"]


def test_valid_event_is_the_body_as_sent(webhook_vectors: list[dict[str, Any]]) -> None:
    vector = next(v for v in webhook_vectors if v["name"] == "unknown_fields_ignored")
    event = Webhook(vector["secrets"]).verify(headers_of(vector), vector["body"].encode(), now=vector["now"])
    assert event == json.loads(vector["body"])
    assert list(event) == list(json.loads(vector["body"]))


def signed(body: bytes, secret: str = SECRET, timestamp: int = NOW) -> dict[str, str]:
    return {"svc-timestamp": str(timestamp), "svc-signature": webhook.signature(secret, timestamp, body)}


def event_body() -> bytes:
    """The body of the first shared vector (a progress event)."""
    data = json.loads((ROOT / "tests/data/webhook_vectors.json").read_text(encoding="utf-8"))
    body: str = data["vectors"][0]["body"]
    return body.encode()


def test_sign_matches_the_vectors(webhook_vectors: list[dict[str, Any]]) -> None:
    vector = webhook_vectors[0]
    assert webhook.signature(SECRET, int(vector["timestamp"]), vector["body"].encode()) == vector["signature"]


def test_rotation_accepts_either_secret() -> None:
    body = event_body()
    verifier = Webhook([OTHER, SECRET])
    assert verifier.verify(signed(body, SECRET), body, now=NOW)["eventType"]
    assert verifier.verify(signed(body, OTHER), body, now=NOW)["eventType"]
    with pytest.raises(WebhookVerificationError) as caught:
        Webhook(OTHER).verify(signed(body, SECRET), body, now=NOW)
    assert caught.value.code == "bad_signature"
    assert caught.value.kind == "verification"


def test_tolerance() -> None:
    body = event_body()
    verifier = Webhook(SECRET, tolerance=60)
    assert verifier.tolerance == 60.0
    verifier.verify(signed(body, timestamp=NOW - 60), body, now=NOW)
    with pytest.raises(WebhookVerificationError) as caught:
        verifier.verify(signed(body, timestamp=NOW - 61), body, now=NOW)
    assert caught.value.code == "too_old"
    with pytest.raises(WebhookVerificationError) as caught:
        verifier.verify(signed(body, timestamp=NOW + 61), body, now=NOW)
    assert caught.value.code == "too_new"
    # The system clock by default: a delivery signed now verifies.
    import time

    verifier.verify(signed(body, timestamp=int(time.time())), body)


def test_tampered_body() -> None:
    body = event_body()
    headers = signed(body)
    tampered = body.replace(b"0.42", b"0.43")
    assert tampered != body
    with pytest.raises(WebhookVerificationError) as caught:
        Webhook(SECRET).verify(headers, tampered, now=NOW)
    assert caught.value.code == "bad_signature"
    assert "whsec" not in str(caught.value) and "whsec" not in repr(caught.value)


class CaseInsensitiveHeaders(Mapping[str, str]):
    """Like Django's `request.headers` or `requests`' headers."""

    def __init__(self, headers: dict[str, str]) -> None:
        self._headers = {k.lower(): (k, v) for k, v in headers.items()}

    def __getitem__(self, key: str) -> str:
        return self._headers[key.lower()][1]

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._headers.values())

    def __len__(self) -> int:
        return len(self._headers)


class MultiHeaders:
    """Like Werkzeug's `Headers` or Starlette's `Headers`: `getlist`, any case."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    def getlist(self, key: str) -> list[str]:
        return [v for k, v in self.pairs if k.lower() == key.lower()]


@pytest.mark.parametrize("case", [str.lower, str.upper, str.title, lambda s: s])
def test_header_names_in_any_case(case: Any) -> None:
    body = event_body()
    sent = {case("Svc-Timestamp"): str(NOW), case("Svc-Signature"): webhook.signature(SECRET, NOW, body)}
    verifier = Webhook(SECRET)
    for headers in [
        sent,
        CaseInsensitiveHeaders(sent),
        MultiHeaders(list(sent.items())),
        [(k.encode(), v.encode()) for k, v in sent.items()],  # an ASGI scope's headers
    ]:
        assert verifier.verify(headers, body, now=NOW)["id"]


def test_duplicated_headers_are_refused() -> None:
    body = event_body()
    headers = signed(body)
    pairs = [("Svc-Timestamp", headers["svc-timestamp"])] * 2 + [("Svc-Signature", headers["svc-signature"])]
    with pytest.raises(WebhookVerificationError) as caught:
        Webhook(SECRET).verify(MultiHeaders(pairs), body, now=NOW)
    assert caught.value.code == "invalid_timestamp"
    both_cases = {"svc-signature": headers["svc-signature"], "SVC-SIGNATURE": headers["svc-signature"],
                  "svc-timestamp": str(NOW)}
    with pytest.raises(WebhookVerificationError) as caught:
        Webhook(SECRET).verify(both_cases, body, now=NOW)
    assert caught.value.code == "bad_signature"


def test_email_message_headers() -> None:
    from email.message import Message

    body = event_body()
    message = Message()
    for name, value in signed(body).items():
        message[name.upper()] = value
    assert Webhook(SECRET).verify(message, body, now=NOW)["eventType"] == "cloud:processing-progress"


def test_invalid_payload_and_no_secret_kinds() -> None:
    body = b"not JSON"
    with pytest.raises(InvalidResponseError) as caught:
        Webhook(SECRET).verify(signed(body), body, now=NOW)
    assert isinstance(caught.value, WebhookVerificationError)
    assert caught.value.code == "invalid_payload"
    assert caught.value.raw is None
    # Authentic JSON this SDK cannot type: reported as such, its JSON handed over.
    body = b'{"not": "an event"}'
    with pytest.raises(InvalidResponseError) as untyped:
        Webhook(SECRET).verify(signed(body), body, now=NOW)
    assert isinstance(untyped.value, WebhookVerificationError)
    assert untyped.value.code == "untyped_event"
    assert untyped.value.raw == {"not": "an event"}
    with pytest.raises(InvalidInputError) as no_secret:
        Webhook([])
    assert isinstance(no_secret.value, WebhookVerificationError)
    assert no_secret.value.code == "no_secret"
    with pytest.raises(WebhookVerificationError):
        Webhook("")


def test_argument_types() -> None:
    body = event_body()
    with pytest.raises(TypeError):
        Webhook(SECRET).verify(signed(body), body.decode(), now=NOW)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Webhook(b"whsec_x")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Webhook(SECRET, tolerance=-1)
    assert Webhook(SECRET).verify(signed(body), bytearray(body), now=NOW)["id"]
    assert Webhook(SECRET).verify(signed(body), memoryview(body), now=NOW)["id"]
    assert "whsec" not in repr(Webhook(SECRET))
    assert svc_sdk.Webhook is webhook.Webhook


def test_fastapi_dependency() -> None:
    pytest.importorskip("fastapi")
    from fastapi import Depends, FastAPI
    from fastapi.testclient import TestClient

    app = FastAPI()
    verified = webhook.fastapi_dependency(Webhook(SECRET, tolerance=10**12))

    @app.post("/hook")
    async def receive(event: dict[str, Any] = Depends(verified)) -> dict[str, Any]:
        return {"type": event["eventType"]}

    body = event_body()
    client = TestClient(app)
    answer = client.post("/hook", content=body, headers=signed(body))
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"type": "cloud:processing-progress"}
    answer = client.post("/hook", content=body + b" ", headers=signed(body))
    assert answer.status_code == 400
    assert answer.json() == {"detail": "bad_signature"}


def test_flask_helper() -> None:
    pytest.importorskip("flask")
    from flask import Flask

    app = Flask(__name__)
    verifier = Webhook(SECRET, tolerance=10**12)

    @app.post("/hook")
    def receive() -> dict[str, Any]:
        event = webhook.verify_flask_request(verifier)
        return {"type": event["eventType"]}

    body = event_body()
    client = app.test_client()
    answer = client.post("/hook", data=body, headers=signed(body))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json() == {"type": "cloud:processing-progress"}
    answer = client.post("/hook", data=body, headers={"Svc-Timestamp": str(NOW)})
    assert answer.status_code == 400
    assert b"missing_header" in answer.get_data()


def test_sign_makes_a_delivery_for_your_own_tests() -> None:
    event = {
        "id": "2e4f6a8c-1b3d-4e5f-9a7b-c8d9e0f1a2b3",
        "eventType": "cloud:processing-ended",
        "createdAt": "2024-07-02T09:17:02.500Z",
        "payload": {"id": "6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90", "status": "processed"},
    }
    headers, body = webhook.sign(SECRET, event)
    assert set(headers) == {"Svc-Timestamp", "Svc-Signature", "Content-Type"}
    verified = webhook.Webhook(SECRET).verify(headers, body)
    assert verified["id"] == event["id"]
    # A fixed timestamp: the same delivery every time.
    assert webhook.sign(SECRET, body, timestamp=NOW) == webhook.sign(SECRET, body.decode(), timestamp=NOW)
    old_headers, _ = webhook.sign(SECRET, event, timestamp=NOW - 3600)
    with pytest.raises(webhook.WebhookVerificationError) as caught:
        webhook.Webhook(SECRET).verify(old_headers, body)
    assert caught.value.code == "too_old"


def test_a_refused_event_names_the_fields_path() -> None:
    event = {"id": "2e4f6a8c-1b3d-4e5f-9a7b-c8d9e0f1a2b3", "eventType": "cloud:processing-ended",
             "createdAt": "2024-07-02T09:17:02Z", "payload": {"status": "processed"}}
    headers, body = webhook.sign(SECRET, event)
    with pytest.raises(webhook.WebhookVerificationError) as caught:
        webhook.Webhook(SECRET).verify(headers, body)
    assert caught.value.code == "untyped_event"
    assert "payload.id" in str(caught.value), caught.value
