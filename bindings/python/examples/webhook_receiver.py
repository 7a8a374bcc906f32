"""A FastAPI service receiving the cloud service's webhook deliveries.

    SVC_WEBHOOK_SECRET=whsec_... uvicorn webhook_receiver:app --port 8080
"""

from __future__ import annotations

import os
from typing import Any

from fastapi import Depends, FastAPI

from svc_sdk import Webhook
from svc_sdk.webhook import fastapi_dependency

app = FastAPI()
# Several secrets during a rotation: the new one and the one it replaces.
webhook = Webhook(os.environ.get("SVC_WEBHOOK_SECRET", "whsec_unset").split(","))
verified_event = fastapi_dependency(webhook)


@app.post("/webhooks/svc")
async def receive(event: dict[str, Any] = Depends(verified_event)) -> dict[str, str]:
    """Answers 400 (with the failure's code) for a delivery that does not verify."""
    if event["eventType"] == "cloud:processing-ended":
        processing = event["payload"]
        print(f"processing {processing['id']} ended: {processing['status']}")
    return {"received": event["id"]}
