"""More unit sessions against the emulated unit: reboots and waiting for the unit to
come back, the data logger, passwords, restoring the defaults, importing an exported
tree, and the delta from the defaults. Each test gets its own emulator: these
operations change the unit's state (passwords, default user, settings, logger)."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from typing import Any

import pytest

from svc_sdk import (
    AuthenticationError,
    ConflictError,
    Emulator,
    InvalidInputError,
    PermissionDeniedError,
    Unit,
    UnreachableError,
    WaitTimeoutError,
    settings,
)

ARM = "aiding/gnss1/leverArmPrimary"
IMU_SHORT = "output/comA/messages/imuShort"
HOSTNAME = "network/ntrip/hostname"
NTRIP_PASSWORD = "network/ntrip/password"


@pytest.fixture()
def emulator() -> Iterator[Emulator]:
    # A fresh unit for each test (starting one takes a few milliseconds).
    with Emulator(processing_time=0.5) as emulator:
        yield emulator


@pytest.fixture(params=["http", "serial_tcp"])
def unit(request: pytest.FixtureRequest, emulator: Emulator) -> Unit:
    return emulator.unit() if request.param == "http" else emulator.unit_serial_tcp()


def _texts(error: BaseException) -> tuple[str, str]:
    return str(error), repr(error)


# ----------------------------------------------------------------------- reboots


def test_reboot_and_wait_returns_once_the_unit_answers_again(
    emulator: Emulator, unit: Unit
) -> None:
    before = unit.info()
    unit.logger_start()
    holder = emulator.unit()
    holder.login("setup", "")
    holder.lock()
    with pytest.raises(ConflictError):
        emulator.unit().set(ARM, [0.0, 0.0, 0.5])

    started = time.monotonic()
    info = unit.reboot(wait=True, timeout=30)
    waited = time.monotonic() - started

    assert info == before
    # The emulated unit stays silent for 2 s: the call waited for it.
    assert waited >= 1.0, waited
    # It answers at once, to a new session too.
    assert emulator.unit().info() == before
    # What a reboot ends: the data logger, the lock (another session may write again).
    assert unit.logger_status()["state"] == "idle"
    emulator.unit().set(ARM, [0.0, 0.0, 0.5])
    assert unit.get(ARM) == [0.0, 0.0, 0.5]
    # The holder's token ended too; its session logs in again by itself: it still acts
    # as setup and can take the lock (which needs a login) for its new token.
    assert holder.user == "setup"
    holder.lock()
    with pytest.raises(ConflictError):
        emulator.unit().set(ARM, [0.0, 0.0, 0.0])
    holder.unlock()


def test_reboot_without_wait_then_wait_until_back(emulator: Emulator) -> None:
    unit = emulator.unit()
    before = unit.info()
    assert unit.reboot() is None
    # The unit answers nothing while it reboots (over HTTP: the connection is cut).
    with pytest.raises(UnreachableError) as caught:
        emulator.unit().info()
    assert caught.value.retryable is True
    assert caught.value.kind == "unreachable"
    # Still rebooting: a short wait times out (the last failure named), a longer one
    # succeeds.
    with pytest.raises(WaitTimeoutError) as timed_out:
        unit.wait_until_back(0.2)
    assert timed_out.value.kind == "timeout" and timed_out.value.retryable
    assert "could not be reached" in str(timed_out.value)
    assert unit.wait_until_back(30) == before
    assert emulator.unit().info() == before
    # A unit that is up answers at once.
    assert unit.wait_until_back(0) == before


def test_apply_with_reboot_saves_then_reboots_when_the_change_needs_it(
    emulator: Emulator, unit: Unit
) -> None:
    unit.save()
    enabled = unit.get("network/ntp/enabled")
    # No reboot needed: written, not rebooted.
    report = unit.apply({"oem": {"label": "field"}}, reboot=True)
    assert report["written"] and not report["rebooted"]
    # The NTP setting takes effect after a reboot: saved, then rebooted.
    report = unit.apply({"network": {"ntp": {"enabled": not enabled}}}, reboot=True)
    assert report["need_reboot"] and report["rebooted"], report
    with pytest.raises(UnreachableError):
        emulator.unit().info()
    unit.wait_until_back(30)
    assert unit.get("network/ntp/enabled") is (not enabled)


def test_node_paths_that_are_not_nodes_are_refused_before_sending(
    emulator: Emulator, unit: Unit
) -> None:
    unit.set(IMU_SHORT, "10ms")
    before = unit.settings()
    for path in ["default", "import", "../reboot", "aiding/../../reboot", ""]:
        with pytest.raises(InvalidInputError):
            unit.set(path, {})
        with pytest.raises(InvalidInputError):
            unit.get(path)
    assert emulator.unit().settings() == before


def test_wait_until_back_refuses_a_bad_timeout(emulator: Emulator) -> None:
    unit = emulator.unit()
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(InvalidInputError) as caught:
            unit.wait_until_back(bad)
        assert caught.value.status is None


def test_a_viewer_may_not_reboot(emulator: Emulator) -> None:
    viewer = emulator.unit()
    viewer.login("viewer", "")
    with pytest.raises(PermissionDeniedError) as caught:
        viewer.reboot()
    assert caught.value.status == 403
    # Nothing rebooted: the unit answers at once, the viewer is still logged in.
    assert viewer.info()["serialNumber"]
    assert viewer.user == "viewer"


# ------------------------------------------------------------------------ logger


def test_the_data_logger_starts_and_stops(emulator: Emulator, unit: Unit) -> None:
    status = unit.logger_status()
    assert status["state"] == "idle"
    assert status["usedBytes"] == 0
    total = status["totalBytes"]
    assert total > 0

    unit.logger_start()
    assert unit.logger_status()["state"] == "logging"
    # Another session sees the same logger.
    assert emulator.unit().logger_status()["state"] == "logging"
    with pytest.raises(ConflictError) as again:
        unit.logger_start()
    assert again.value.status == 409

    # Logging fills the storage: wait until the unit reports some bytes.
    deadline = time.monotonic() + 10
    while unit.logger_status()["usedBytes"] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert unit.logger_status()["usedBytes"] > 0

    unit.logger_stop()
    stopped = unit.logger_status()
    assert stopped["state"] == "idle"
    assert stopped["usedBytes"] > 0
    assert stopped["totalBytes"] == total
    # Idle: nothing more is logged.
    assert unit.logger_status()["usedBytes"] == stopped["usedBytes"]
    with pytest.raises(ConflictError) as idle:
        unit.logger_stop()
    assert idle.value.status == 409

    # Started again, it counts on from what it had logged.
    unit.logger_start()
    assert unit.logger_status()["usedBytes"] >= stopped["usedBytes"]
    unit.logger_stop()


def test_a_viewer_reads_the_logger_but_may_not_start_it(emulator: Emulator) -> None:
    viewer = emulator.unit()
    viewer.login("viewer", "")
    assert viewer.logger_status()["state"] == "idle"
    with pytest.raises(PermissionDeniedError) as caught:
        viewer.logger_start()
    assert caught.value.status == 403
    assert viewer.logger_status()["state"] == "idle"


# --------------------------------------------------------------------- passwords


def test_change_password_and_log_in_with_it(emulator: Emulator) -> None:
    first, second = "Op-first-Kq3v", "Op-second-Wz8m"
    operator = emulator.unit()
    operator.login("operator", "")
    operator.change_password(first)
    emulator.unit().login("operator", first)
    operator.change_password(second)

    # The new password logs in; the old ones are refused with a 401.
    emulator.unit().login("operator", second)
    for old in ("", first):
        other = emulator.unit()
        with pytest.raises(AuthenticationError) as caught:
            other.login("operator", old)
        assert caught.value.status == 401
        assert other.user is None
        for text in _texts(caught.value):
            assert first not in text and second not in text
    # The session that changed it goes on as operator.
    assert operator.user == "operator"
    assert operator.logger_status()["state"] == "idle"
    for secret in (first, second):
        assert secret not in repr(operator)


def test_only_setup_changes_another_users_password(emulator: Emulator) -> None:
    wanted = "Viewer-pw-Hj5r"
    operator = emulator.unit()
    operator.login("operator", "")
    with pytest.raises(PermissionDeniedError) as denied:
        operator.change_password(wanted, user="viewer")
    assert denied.value.status == 403
    for text in _texts(denied.value):
        assert wanted not in text
    emulator.unit().login("viewer", "")  # unchanged

    setup = emulator.unit()
    setup.login("setup", "")
    setup.change_password(wanted, user="viewer")
    emulator.unit().login("viewer", wanted)
    with pytest.raises(AuthenticationError):
        emulator.unit().login("viewer", "")
    # Setup's own password did not change.
    emulator.unit().login("setup", "")


def test_change_password_needs_a_login_and_a_known_user(emulator: Emulator) -> None:
    wanted = "Anon-pw-Tt4c"
    anonymous = emulator.unit()
    with pytest.raises(AuthenticationError) as caught:
        anonymous.change_password(wanted)
    assert caught.value.status == 401
    for text in _texts(caught.value):
        assert wanted not in text
    setup = emulator.unit()
    setup.login("setup", "")
    with pytest.raises(InvalidInputError) as unknown:
        setup.change_password(wanted, user="nobody")
    assert unknown.value.status is None  # refused before sending
    for text in _texts(unknown.value):
        assert wanted not in text
    # Nothing changed: every user still logs in without a password.
    for user in ("viewer", "operator", "powerUser", "setup"):
        emulator.unit().login(user, "")


def test_new_passwords_survive_a_reboot_and_change_the_default_user(
    emulator: Emulator,
) -> None:
    own = "Setup-pw-Lm2x"
    setup = emulator.unit()
    setup.login("setup", "")
    setup.change_password(own)
    setup.change_password("Factory-pw-Nn6b", user="factory")
    setup.change_password("Power-pw-Rr1d", user="powerUser")
    anonymous = emulator.unit()
    # The default user is chosen at the next reboot only: still factory.
    assert anonymous.restore_defaults(check_only=True) == {"need_reboot": False}

    setup.reboot(wait=True, timeout=30)

    # The session logged in again by itself, with its new password.
    assert setup.user == "setup"
    setup.lock()
    setup.unlock()
    with pytest.raises(AuthenticationError) as old:
        emulator.unit().login("setup", "")
    for text in _texts(old.value):
        assert own not in text
    emulator.unit().login("setup", own)
    # Now operator (the highest user without a password) is the default user, and it
    # may not restore the defaults.
    with pytest.raises(PermissionDeniedError):
        anonymous.restore_defaults(check_only=True)


# ------------------------------------------------------------- defaults and delta


def test_restore_defaults(emulator: Emulator, unit: Unit) -> None:
    defaults = unit.settings()
    unit.write({"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.25, -2.0]}}})
    unit.set(IMU_SHORT, "10ms")
    unit.set(HOSTNAME, "caster.example")
    changed = unit.settings()
    assert changed != defaults

    # check_only applies nothing, and says the change of the caster needs a reboot.
    assert unit.restore_defaults(check_only=True) == {"need_reboot": True}
    assert unit.settings() == changed

    # Another session holds the lock: refused, nothing changed.
    holder = emulator.unit()
    holder.login("setup", "")
    with holder.locked():
        with pytest.raises(ConflictError) as caught:
            unit.restore_defaults()
        assert caught.value.status == 409
    assert unit.settings() == changed

    assert unit.restore_defaults() == {"need_reboot": True}
    assert unit.settings() == defaults
    assert unit.get(ARM) == defaults["aiding"]["gnss1"]["leverArmPrimary"]
    assert unit.get(IMU_SHORT) == "off"
    assert unit.settings_delta() == {}
    # Again: nothing left to change.
    assert unit.restore_defaults() == {"need_reboot": False}


def test_restore_defaults_needs_the_setting_write_right(emulator: Emulator) -> None:
    operator = emulator.unit()
    operator.login("operator", "")
    emulator.unit().set(IMU_SHORT, "10ms")
    with pytest.raises(PermissionDeniedError) as caught:
        operator.restore_defaults()
    assert caught.value.status == 403
    assert operator.get(IMU_SHORT) == "10ms"


def test_settings_delta(emulator: Emulator, unit: Unit) -> None:
    defaults = unit.settings()
    assert unit.settings_delta() == {}

    unit.set(ARM, [0.5, 0.25, -2.0])
    unit.set(IMU_SHORT, "10ms")
    delta = unit.settings_delta()
    assert delta == {
        "aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.25, -2.0]}},
        "output": {"comA": {"messages": {"imuShort": "10ms"}}},
    }
    # The same as the diff between the defaults and the unit's tree.
    assert delta == settings.diff(defaults, unit.settings()).tree
    # Applied to the defaults, the delta gives the unit's tree.
    assert settings.apply(defaults, delta) == unit.settings()
    # The same delta over the other link.
    assert emulator.unit().settings_delta() == delta

    # A node written back to its default value leaves the delta.
    unit.set(ARM, defaults["aiding"]["gnss1"]["leverArmPrimary"])
    assert unit.settings_delta() == {"output": {"comA": {"messages": {"imuShort": "10ms"}}}}
    # Writing a default value changes nothing in the delta either.
    unit.set(HOSTNAME, defaults["network"]["ntrip"]["hostname"])
    assert unit.settings_delta() == {"output": {"comA": {"messages": {"imuShort": "10ms"}}}}


# ---------------------------------------------------------------------- import


def test_an_exported_tree_imported_back(emulator: Emulator, unit: Unit) -> None:
    unit.set(ARM, [0.5, 0.25, -2.0])
    unit.set(IMU_SHORT, "10ms")
    exported = unit.export_settings()
    assert exported == unit.settings()

    unit.restore_defaults()
    unit.set(ARM, [1.0, 1.0, 1.0])
    elsewhere = unit.settings()
    assert elsewhere != exported

    # check_only validates and applies nothing.
    assert unit.import_settings(exported, check_only=True) == {"need_reboot": False}
    assert unit.settings() == elsewhere

    assert unit.import_settings(exported) == {"need_reboot": False}
    assert unit.settings() == exported
    assert unit.export_settings() == exported
    assert unit.settings_delta() == {
        "aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.25, -2.0]}},
        "output": {"comA": {"messages": {"imuShort": "10ms"}}},
    }
    # The other link reads the imported tree too.
    assert emulator.unit_serial_tcp().settings() == exported


def test_a_refused_import_changes_nothing(emulator: Emulator, unit: Unit) -> None:
    before = unit.settings()
    tree = unit.export_settings()

    # The unit refuses an invalid value, naming the node; the valid change beside it is
    # not applied either.
    invalid = copy.deepcopy(tree)
    invalid["output"]["comA"]["messages"]["imuShort"] = "7ms"
    invalid["aiding"]["gnss1"]["leverArmPrimary"] = [5.0, 5.0, 5.0]
    with pytest.raises(InvalidInputError) as caught:
        unit.import_settings(invalid)
    assert caught.value.status == 422
    assert caught.value.kind == "invalid_input"
    assert [n.path for n in caught.value.node_errors] == [IMU_SHORT]
    assert all(n.message for n in caught.value.node_errors)
    assert unit.settings() == before

    # Trees that are not settings trees are refused before sending.
    unknown: dict[str, Any] = copy.deepcopy(tree)
    unknown["noSuchModule"] = {"x": 1}
    wrong_shape = copy.deepcopy(tree)
    wrong_shape["aiding"]["gnss1"]["leverArmPrimary"] = [1.0, 2.0]
    not_finite = copy.deepcopy(tree)
    not_finite["aiding"]["gnss1"]["leverArmPrimary"] = [float("nan"), 0.0, 0.0]
    for bad in (unknown, wrong_shape, not_finite):
        with pytest.raises(InvalidInputError) as local:
            unit.import_settings(bad)
        assert local.value.status is None
    with pytest.raises(InvalidInputError) as named:
        unit.import_settings(unknown)
    assert "noSuchModule" in str(named.value)
    assert unit.settings() == before


def test_import_needs_the_lock_of_its_holder(emulator: Emulator) -> None:
    unit = emulator.unit()
    tree = unit.export_settings()
    tree["aiding"]["gnss1"]["leverArmPrimary"] = [0.5, 0.5, 0.5]
    before = unit.settings()
    holder = emulator.unit()
    holder.login("setup", "")
    with holder.locked():
        with pytest.raises(ConflictError):
            unit.import_settings(tree)
        assert unit.settings() == before
        # The holder itself may import.
        holder.import_settings(tree)
    assert unit.get(ARM) == [0.5, 0.5, 0.5]


def test_a_refused_import_never_shows_the_ntrip_password(emulator: Emulator) -> None:
    unit = emulator.unit()
    tree = unit.export_settings()
    # A numeric PIN as the caster's password: not a string, so the tree is refused,
    # naming the node and what it takes.
    tree["network"]["ntrip"]["password"] = 987654321
    with pytest.raises(InvalidInputError) as caught:
        unit.import_settings(tree)
    assert caught.value.status is None
    assert "network/ntrip/password" in str(caught.value)
    for text in _texts(caught.value):
        assert "987654321" not in text
    with pytest.raises(InvalidInputError) as caught:
        unit.write({"network": {"ntrip": {"password": 987654321}}})
    for text in _texts(caught.value):
        assert "987654321" not in text


def test_the_unit_refusing_the_ntrip_password_does_not_show_it(emulator: Emulator) -> None:
    # The same value refused by the unit (a node write is not checked before sending):
    # the unit's message and the SDK's error name the node, never the value.
    unit = emulator.unit()
    with pytest.raises(InvalidInputError) as caught:
        unit.set(NTRIP_PASSWORD, 987654321)
    assert caught.value.status == 422
    assert [n.path for n in caught.value.node_errors] == [NTRIP_PASSWORD]
    for text in _texts(caught.value):
        assert "987654321" not in text
    assert unit.get(NTRIP_PASSWORD) == ""



def test_apply_with_reboot_can_wait_until_the_unit_is_back() -> None:
    from svc_sdk import Emulator

    with Emulator(processing_time=0.5, device_reboot_seconds=0.5) as emulator:
        unit = emulator.unit()
        unit.login("setup", "")
        report = unit.apply({"ports": {"eth1": {"udpInPort": 1250}}}, reboot=True, wait=True, timeout=20)
        assert report["rebooted"] is True
        # The next call finds the unit up, the session logged in again.
        assert unit.get("ports/eth1/udpInPort") == 1250
