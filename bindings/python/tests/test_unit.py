"""Unit sessions against the emulated unit, over HTTP and over the serial-over-IP
bridge: settings as dicts, refused writes with their nodes, the lock, logins."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import svc_sdk
from svc_sdk import (
    AuthenticationError,
    ConflictError,
    Emulator,
    InvalidInputError,
    Unit,
    rights,
)

ARM = "aiding/gnss1/leverArmPrimary"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(processing_time=0.5) as emulator:
        yield emulator


@pytest.fixture(params=["http", "serial_tcp"])
def unit(request: pytest.FixtureRequest, emulator: Emulator) -> Unit:
    return emulator.unit() if request.param == "http" else emulator.unit_serial_tcp()


def test_info_and_settings(unit: Unit) -> None:
    info = unit.info()
    assert info["serialNumber"] and info["apiVersion"]
    tree = unit.settings()
    assert isinstance(tree, dict) and "aiding" in tree
    assert unit.get(ARM) == tree["aiding"]["gnss1"]["leverArmPrimary"]
    assert unit.export_settings() == tree


def test_the_same_tree_over_both_links(emulator: Emulator) -> None:
    assert emulator.unit().settings() == emulator.unit_serial_tcp().settings()


def test_writes_apply_and_check_only(unit: Unit) -> None:
    before = unit.get(ARM)
    wanted = [0.25, 0.0, -1.5]
    assert unit.set(ARM, wanted, check_only=True) == {"need_reboot": False}
    assert unit.get(ARM) == before, "check_only applies nothing"
    report = unit.apply({"aiding": {"gnss1": {"leverArmPrimary": wanted}}})
    assert report["changed"] == [ARM] and report["written"]
    assert unit.get(ARM) == wanted
    again = unit.apply({"aiding": {"gnss1": {"leverArmPrimary": wanted}}})
    assert again == {"changed": [], "need_reboot": False, "written": False, "rebooted": False,
                     "reboot_pending": False, "unlock_unconfirmed": False}
    unit.set(ARM, before)


def test_a_refused_write_names_its_nodes(unit: Unit) -> None:
    before = unit.settings()
    imu = "output/comA/messages/imuShort"
    # Two invalid nodes beside a valid one: the unit's 422 names both, applies none.
    with pytest.raises(InvalidInputError) as caught:
        unit.write(
            {
                "output": {"comA": {"messages": {"imuShort": "7ms", "ekfNav": "3ms"}}},
                "aiding": {"gnss1": {"leverArmPrimary": [0.1, 0.2, 0.3]}},
            }
        )
    assert caught.value.status == 422
    assert sorted(n.path for n in caught.value.node_errors) == [
        "output/comA/messages/ekfNav",
        imu,
    ]
    assert all(n.message for n in caught.value.node_errors)
    assert unit.settings() == before, "a write is all or nothing"
    # A tree of the wrong shape is refused before sending.
    with pytest.raises(InvalidInputError) as local:
        unit.write({"aiding": {"gnss1": {"leverArmPrimary": [1, 2]}}})
    assert local.value.status is None
    with pytest.raises(InvalidInputError):
        unit.write({"aiding": {"gnss1": {"leverArmPrimary": [float("nan"), 0, 0]}}})


def test_the_lock_and_logins(emulator: Emulator) -> None:
    holder = emulator.unit()
    holder.login("setup", "")
    other = emulator.unit()
    other.login("powerUser", "")
    with holder.locked():
        with pytest.raises(ConflictError) as caught:
            other.set(ARM, [0.0, 0.0, 0.0])
        assert caught.value.status == 409
        holder.set(ARM, [0.0, 0.0, 0.1])
    other.set(ARM, [0.0, 0.0, 0.0])  # released on leaving the block
    holder.logout()


def test_the_lock_is_held_at_every_point_of_the_outer_block(emulator: Emulator) -> None:
    holder = emulator.unit()
    holder.login("setup", "")
    other = emulator.unit()
    other.login("powerUser", "")

    def refused() -> None:
        with pytest.raises(ConflictError):
            other.set(ARM, [0.0, 0.0, 0.2])

    with holder.locked():
        refused()
        holder.apply({"aiding": {"gnss1": {"leverArmPrimary": [0.0, 0.0, 0.1]}}}, lock=True)
        refused()  # the apply inside the block neither took nor released the lock
        with holder.locked():
            refused()
        refused()  # leaving the inner block gave back the inner hold only
        holder.lock()
        holder.unlock()
        refused()
    other.set(ARM, [0.0, 0.0, 0.0])  # the outer exit released it
    # Giving back a lock this session does not hold is a mistake, said as such.
    with pytest.raises(InvalidInputError) as caught:
        holder.unlock()
    assert "does not hold the settings lock" in str(caught.value)
    holder.lock()
    holder.lock()
    holder.unlock()
    refused()
    holder.unlock()
    other.set(ARM, [0.0, 0.0, 0.0])


def test_ctrl_c_while_the_lock_is_taken_releases_it(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    holder = emulator.unit()
    holder.login("setup", "")
    other = emulator.unit()
    other.login("powerUser", "")
    taken = holder.lock

    def lock_then_interrupted() -> None:
        taken()  # the unit granted the lock; Ctrl-C came before the call returned
        raise KeyboardInterrupt

    monkeypatch.setattr(holder, "lock", lock_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        with holder.locked():
            raise AssertionError("the block must not run")
    other.set(ARM, [0.0, 0.0, 0.3])  # released: another session may write
    other.set(ARM, [0.0, 0.0, 0.0])


def test_passwords_stay_out_of_errors(emulator: Emulator) -> None:
    unit = emulator.unit()
    with pytest.raises(AuthenticationError) as caught:
        unit.login("factory", "not-the-password-Xq7")
    assert "not-the-password-Xq7" not in str(caught.value)
    assert "not-the-password-Xq7" not in repr(unit)
    unit.login("setup", "")
    assert repr(unit) == f"Unit(link='{emulator.info['device_url']}', user='setup')"
    unit.logout()
    with pytest.raises(InvalidInputError):
        unit.login("nobody", "")


def test_rights_as_data() -> None:
    assert rights.may("viewer", "getSettings") is True
    assert rights.may("viewer", "updateSettings") is False


def test_a_local_serial_port(emulator: Emulator) -> None:
    path = emulator.info.get("device_serial_path")
    if path is None:
        pytest.skip("no pseudo-terminal on this platform")
    unit = Unit.serial(path, 115_200)
    assert "serial port" in unit.link
    assert unit.info() == emulator.unit().info()
    with pytest.raises(svc_sdk.UnreachableError):
        Unit.serial("/nonexistent/tty-S9")


def test_bad_links_are_refused(emulator: Emulator) -> None:
    with pytest.raises(InvalidInputError):
        Unit.http("https://127.0.0.1:1")
    # An address reaching the unit's routes would turn every write into a restore of the
    # defaults or a reboot: refused before anything is sent.
    url = emulator.info["device_url"]
    for tail in ("/api/v1/settings/default#", "/api/v1/reboot?", "/?auth=x"):
        with pytest.raises(InvalidInputError, match="not a unit address"):
            Unit.http(url + tail)
    with pytest.raises(svc_sdk.UnreachableError):
        Unit.serial_tcp("127.0.0.1:1")


def test_an_emulated_fleet_of_independent_units() -> None:
    with Emulator(processing_time=0.5, devices=5) as fleet:
        devices = fleet.info["devices"]
        assert len(devices) == 5
        assert len({d["serial_number"] for d in devices}) == 5
        assert fleet.info["device_url"] == devices[0]["device_url"]
        units = fleet.units()
        units[2].write({"output": {"comA": {"messages": {"imuShort": "10ms"}}}})
        shorts = [u.settings()["output"]["comA"]["messages"]["imuShort"] for u in units]
        assert shorts == ["off", "off", "10ms", "off", "off"]
        assert fleet.unit_serial_tcp(2).info()["serialNumber"] == devices[2]["serial_number"]
        with pytest.raises(IndexError):
            fleet.unit(5)
    with pytest.raises(svc_sdk.InvalidInputError):
        Emulator(devices=0)
