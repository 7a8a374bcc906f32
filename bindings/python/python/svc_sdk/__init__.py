"""Python SDK for the cloud GNSS/INS post-processing service and for configuring
inertial navigation units.

- :class:`CloudClient`: every operation of the cloud service (containers,
  processings, webhook endpoints); :class:`Workflow`: files in, downloaded outputs
  out, in one call (``outcome.trajectory()`` as a pandas DataFrame);
- :class:`Unit`: a session with an inertial navigation unit over HTTP, a serial port
  or a serial-over-IP bridge;
- :class:`Emulator`: the local emulator of the service and of a unit, so notebooks
  and tests run offline;
- :mod:`svc_sdk.aio`: the client, workflow and unit as awaitables (asyncio);
- :mod:`svc_sdk.settings`: settings trees of a unit: minimal diff, apply, three-way
  merge, :class:`~svc_sdk.settings.SettingsTree` for fleets;
- :mod:`svc_sdk.webhook`: :class:`Webhook` verifies the service's webhook deliveries
  (helpers for FastAPI and Flask);
- :mod:`svc_sdk.rights`: the unit's rights matrix;
- :mod:`svc_sdk.logs`: a unit's recordings (sbgECom binary logs) as pyarrow tables and
  pandas DataFrames;
- :mod:`svc_sdk.live`: the output logs a unit streams (serial link, UDP, a growing
  file) as records and batches of tables (:meth:`Unit.subscribe`);
- :mod:`svc_sdk.trajectory`: processings' trajectories compared along and across the
  track, SBET exports read, a trajectory on an interactive map;
- :mod:`svc_sdk.errors`: the exceptions (every one an :class:`SvcError`);
- :mod:`svc_sdk.samples`: a sample survey (``samples.path("rover.nmea")``) for the
  examples.

The work is done by a native extension (Rust, ``svc_sdk._native``); importing the
package imports nothing heavy (no pandas, no web framework).

Logs go to :mod:`logging`, under the ``svc_sdk`` logger and loggers below it named after
the SDK's modules (``svc_sdk.cloud``, ``svc_sdk.unit``, ``svc_sdk.transfer``,
``svc_sdk.workflow``...): ``logging.basicConfig(level=logging.DEBUG)`` shows retries,
token requests and transfers; level 5 (``TRACE``) the serial frames. No secret is
logged. While the logger is disabled, the SDK formats nothing.
"""

from svc_sdk import errors, live, records, rights, samples, settings, trajectory, webhook
from svc_sdk._native import __version__
from svc_sdk.cloud import CloudClient
from svc_sdk.emulator import Emulator
from svc_sdk.errors import (
    AuthenticationError,
    CanceledError,
    ConflictError,
    InvalidInputError,
    InvalidResponseError,
    LocalFileError,
    NodeError,
    NotFoundError,
    PermissionDeniedError,
    ProcessingFailedError,
    SettingsError,
    SvcError,
    TransferError,
    TransientError,
    UnreachableError,
    WaitTimeoutError,
    WebhookVerificationError,
    WorkflowError,
)
from svc_sdk.unit import Unit
from svc_sdk.webhook import Webhook
from svc_sdk.workflow import Workflow, WorkflowOutcome, WorkflowTask

__all__ = [
    "AuthenticationError",
    "CloudClient",
    "Emulator",
    "Unit",
    "Workflow",
    "WorkflowOutcome",
    "WorkflowTask",
    "records",
    "CanceledError",
    "ConflictError",
    "InvalidInputError",
    "InvalidResponseError",
    "LocalFileError",
    "NodeError",
    "NotFoundError",
    "PermissionDeniedError",
    "ProcessingFailedError",
    "SettingsError",
    "SvcError",
    "TransferError",
    "TransientError",
    "UnreachableError",
    "WaitTimeoutError",
    "Webhook",
    "WebhookVerificationError",
    "WorkflowError",
    "__version__",
    "errors",
    "live",
    "rights",
    "samples",
    "settings",
    "webhook",
]
