"""What users' own test suites rely on: the pytest plugin shipped with the package
(``svc_sdk.pytest_plugin``: its fixtures, the environment for ``from_env``, the marker
that gives a test an emulator of its own), every option of ``svc emulator`` in
``Emulator``, and signatures that ``help()`` shows whole."""

from __future__ import annotations

import pytest

SUITE = '''
import os
import pytest
from svc_sdk import CloudClient, Workflow, samples

def test_the_fixtures(svc_emulator, svc_cloud, svc_unit):
    assert svc_cloud.organization_id == svc_emulator.info["organization_id"]
    assert svc_unit.info()["serialNumber"]
    # Code that reads the environment reaches the same emulator.
    from_env = CloudClient.from_env()
    assert from_env.base_url == svc_emulator.info["base_url"]
    assert os.environ["SVC_DEVICE_URL"] == svc_emulator.info["device_url"]

def test_one_emulator_for_the_session(svc_emulator):
    assert svc_emulator.running

@pytest.mark.svc_emulator(credits=0)
def test_an_emulator_of_its_own(svc_emulator, svc_cloud):
    from svc_sdk import PermissionDeniedError
    with pytest.raises(PermissionDeniedError):
        Workflow(svc_cloud).run(samples.path("rover.nmea"), samples.path("processing.json"),
                                progress=False)
'''


def test_the_plugins_fixtures_in_a_users_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=SUITE)
    result = pytester.runpytest_inprocess("-q")
    result.assert_outcomes(passed=3)


def test_the_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--markers")
    result.stdout.fnmatch_lines(["*svc_emulator(**options)*"])


def test_every_option_of_the_command_in_python() -> None:
    from svc_sdk import Emulator, InvalidInputError, Unit

    with Emulator(
        device_passwords={"setup": "pw-7"},
        device_latency_ms=150,
        device_reboot_seconds=0.5,
        device_pty=False,
        webhook_retry_base_ms=50,
        upload_extra_fields={"x-amz-meta-origin": "tests"},
    ) as emulator:
        assert emulator.info["device_serial_path"] is None
        unit = Unit.http(emulator.info["device_url"])
        import time

        started = time.perf_counter()
        unit.login("setup", "pw-7")
        assert time.perf_counter() - started >= 0.15
    for wrong in ({"serial_fault_rate": 2.0}, {"device_reboot_seconds": -1.0}, {"host": "nowhere"}):
        with pytest.raises(InvalidInputError) as refused:
            Emulator(**wrong)
        assert next(iter(wrong)) in str(refused.value)


def test_help_shows_the_workflows_keyword_settings() -> None:
    import inspect
    import pydoc

    from svc_sdk import Workflow
    from svc_sdk.aio import AsyncWorkflow

    run = inspect.signature(Workflow.run).parameters
    assert run["out"].kind is inspect.Parameter.KEYWORD_ONLY
    assert run["progress"].default is True
    assert run["follow"].default is True
    assert inspect.signature(Workflow.start).parameters["progress"].default is False
    assert "settings" not in run
    assert "follow_timeout" in inspect.signature(AsyncWorkflow.run).parameters
    shown = str(inspect.signature(Workflow.run))
    assert "wait_for_organization: 'bool' = False" in shown, shown
    assert "ForwardRef" not in shown, shown
    assert "device_latency_ms" in (__import__("svc_sdk").Emulator.__init__.__doc__ or "")
    assert "Initialize self" not in pydoc.render_doc(__import__("svc_sdk").Emulator)
