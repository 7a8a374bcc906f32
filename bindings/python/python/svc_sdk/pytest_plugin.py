"""A pytest plugin for code that uses the SDK: the emulator as fixtures.

Installed with the package (entry point ``pytest11``), so a test suite only asks for
the fixtures:

- ``svc_emulator``: a running :class:`~svc_sdk.Emulator` (the cloud service, its
  identity provider, storage and notifications, and a unit), with its addresses and
  credentials in the environment (``SVC_BASE_URL``, ``SVC_API_KEY``… and
  ``SVC_DEVICE_URL``), so that code calling ``CloudClient.from_env()`` reaches it. One
  emulator serves the whole session; a test marked
  ``@pytest.mark.svc_emulator(**options)`` gets one of its own started with those
  options (any argument of :class:`~svc_sdk.Emulator`: ``fault_rate=0.2``,
  ``processing_time=5``, ``credits=0``, ``device_latency_ms=200``…), stopped after it;
- ``svc_cloud``: a :class:`~svc_sdk.CloudClient` of that emulator's organization;
- ``svc_unit``: a :class:`~svc_sdk.Unit` session with its unit over HTTP.

::

    import pytest
    from svc_sdk import CloudClient, Workflow, samples

    def test_my_pipeline(svc_cloud):
        outcome = Workflow(svc_cloud).run(samples.path("rover.nmea"), samples.path("processing.json"))
        assert outcome.processing.status == "processed"

    @pytest.mark.svc_emulator(fault_rate=0.2)
    def test_my_code_survives_a_flaky_service(svc_emulator):
        my_code_that_calls_from_env()          # CloudClient.from_env() reaches this emulator

The plugin imports nothing of the SDK until a fixture is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import pytest

if TYPE_CHECKING:
    from svc_sdk import CloudClient, Emulator, Unit

MARKER = "svc_emulator"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(**options): the test gets an emulator of its own, started with these "
        "options (those of svc_sdk.Emulator)",
    )


@pytest.fixture(scope="session")
def _svc_session_emulator() -> Iterator[Emulator]:
    from svc_sdk import Emulator

    with Emulator(processing_time=0.5) as emulator:
        yield emulator


@pytest.fixture()
def svc_emulator(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Emulator]:
    """A running emulator, its addresses and credentials in the environment (see the
    module documentation)."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        emulator: Emulator = request.getfixturevalue("_svc_session_emulator")
        _environ(emulator, monkeypatch)
        yield emulator
        return
    from svc_sdk import Emulator

    options: dict[str, Any] = {"processing_time": 0.5, **marker.kwargs}
    with Emulator(**options) as own:
        _environ(own, monkeypatch)
        yield own


def _environ(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in emulator.env.items():
        monkeypatch.setenv(name, value)
    device = emulator.info.get("device_url")
    if device:
        monkeypatch.setenv("SVC_DEVICE_URL", str(device))


@pytest.fixture()
def svc_cloud(svc_emulator: Emulator) -> CloudClient:
    """A client of the emulator's organization (its administrator's key)."""
    return svc_emulator.cloud()


@pytest.fixture()
def svc_unit(svc_emulator: Emulator) -> Unit:
    """A session with the emulator's unit over HTTP, not logged in."""
    return svc_emulator.unit()
