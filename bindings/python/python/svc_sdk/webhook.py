"""Webhook deliveries of the cloud service: verify them, then read the event.

The notification service POSTs a JSON event with two headers: ``Svc-Timestamp`` (Unix
seconds) and ``Svc-Signature`` (the lowercase hex HMAC-SHA256 of
``"{timestamp}." + body`` keyed with the endpoint's secret). :class:`Webhook` checks
both (several secrets during a rotation; a timestamp at most ``tolerance`` seconds from
the clock; constant-time comparison), then decodes the body::

    from svc_sdk import Webhook, WebhookVerificationError

    webhook = Webhook(os.environ["SVC_WEBHOOK_SECRET"])
    try:
        event = webhook.verify(request.headers, request_body_bytes)
    except WebhookVerificationError as error:
        log.warning("refused webhook: %s", error.code)   # e.g. "bad_signature"
    else:
        if event["eventType"] == "cloud:processing-ended": ...

``headers`` can be any headers object (a ``dict``, Flask/Werkzeug ``request.headers``,
Starlette/FastAPI ``request.headers``, Django ``request.headers``, aiohttp, an ASGI
list of pairs); names match whatever their case. Give the body as the raw bytes
received: re-serialized JSON does not verify.

:func:`fastapi_dependency` and :func:`verify_flask_request` wire this into FastAPI and
Flask; neither framework is imported until they are called.
"""

import json
import time
from typing import Any, Awaitable, Callable, Dict, Mapping, Optional, Tuple, Union

from svc_sdk._native import SIGNATURE_HEADER, TIMESTAMP_HEADER, Webhook
from svc_sdk._native import sign as signature
from svc_sdk.errors import WebhookVerificationError

__all__ = [
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "Webhook",
    "WebhookVerificationError",
    "fastapi_dependency",
    "sign",
    "signature",
    "verify_flask_request",
]

def sign(
    secret: str,
    event: Union[Mapping[str, Any], bytes, str],
    timestamp: Optional[int] = None,
) -> Tuple[Dict[str, str], bytes]:
    """A delivery of ``event`` signed as the notification service signs it, for your
    own tests (as Stripe's and Svix's test helpers): the headers (``Svc-Timestamp``,
    ``Svc-Signature``, ``Content-Type``) and the body to send. ``event`` is a dict
    (written as compact JSON) or the body itself; ``timestamp`` (Unix seconds) defaults
    to now::

        headers, body = svc_sdk.webhook.sign(secret, {"id": ..., "eventType": ...})
        response = test_client.post("/webhooks/svc", content=body, headers=headers)
    """
    if isinstance(event, bytes):
        body = event
    elif isinstance(event, str):
        body = event.encode("utf-8")
    else:
        body = json.dumps(dict(event), separators=(",", ":")).encode("utf-8")
    sent_at = int(time.time()) if timestamp is None else int(timestamp)
    headers = {
        TIMESTAMP_HEADER: str(sent_at),
        SIGNATURE_HEADER: signature(secret, sent_at, body),
        "Content-Type": "application/json",
    }
    return headers, body

# The status a framework helper answers a refused delivery with.
_REFUSED_STATUS = 400


def fastapi_dependency(webhook: Webhook) -> Callable[..., Awaitable[Dict[str, Any]]]:
    """A FastAPI dependency giving the verified event of the request, or answering
    400 (with the failure's code as detail) when the delivery does not verify::

        verified = svc_sdk.webhook.fastapi_dependency(Webhook(secret))

        @app.post("/webhooks/svc")
        async def receive(event: dict = Depends(verified)) -> None: ...
    """
    from fastapi import HTTPException, Request  # Only when used.

    async def verified_webhook_event(request: Request) -> Dict[str, Any]:
        body = await request.body()
        try:
            return webhook.verify(request.headers, body)
        except WebhookVerificationError as error:
            raise HTTPException(status_code=_REFUSED_STATUS, detail=error.code) from error

    return verified_webhook_event


def verify_flask_request(webhook: Webhook, request: Optional[Any] = None) -> Dict[str, Any]:
    """The verified event of a Flask request (default: the current ``flask.request``);
    aborts with 400 (the failure's code as description) when it does not verify::

        @app.post("/webhooks/svc")
        def receive():
            event = svc_sdk.webhook.verify_flask_request(webhook)
    """
    from werkzeug.exceptions import BadRequest  # Only when used (Flask depends on it).

    if request is None:
        from flask import request as current

        request = current
    try:
        return webhook.verify(request.headers, request.get_data(cache=True))
    except WebhookVerificationError as error:
        raise BadRequest(description=error.code) from error
