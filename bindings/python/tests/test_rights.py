from __future__ import annotations

from svc_sdk import rights


def test_the_matrix_of_the_specification() -> None:
    assert rights.may("viewer", "getSettings") is True
    assert rights.may("viewer", "updateSettings") is False
    assert rights.may("operator", "updateSettings") is False
    assert rights.may("operator", "reboot") is True
    assert rights.may("powerUser", "updateSettings") is True


def test_login_is_needed_for_the_lock() -> None:
    assert rights.may("powerUser", "lockSettings") is True
    assert rights.may("powerUser", "lockSettings", logged_in=False) is False
    assert "lockSettings" not in rights.allowed_operations("powerUser", logged_in=False)


def test_unknown_users_and_operations() -> None:
    assert rights.may("viewer", "noSuchOperation") is None
    assert rights.may("nobody", "updateSettings") is None
    # Only the operations that need no right at all.
    assert set(rights.allowed_operations("nobody")) < set(rights.allowed_operations("viewer"))


def test_allowed_operations_agree_with_may() -> None:
    for user in ["viewer", "operator", "powerUser", "setup", "factory"]:
        allowed = rights.allowed_operations(user)
        assert "getDeviceInfo" in allowed
        assert all(rights.may(user, op) is True for op in allowed)
    assert set(rights.allowed_operations("viewer")) < set(rights.allowed_operations("setup"))
