from __future__ import annotations

import pickle

import pytest

import svc_sdk
from svc_sdk import errors
from svc_sdk.errors import (
    ConflictError,
    InvalidInputError,
    NodeError,
    SettingsError,
    SvcError,
    WaitTimeoutError,
    WebhookVerificationError,
    WorkflowError,
)


@pytest.mark.parametrize("kind", errors.KINDS)
def test_every_kind_makes_an_svc_error(kind: str) -> None:
    error = errors._new_error("failed", kind=kind)
    assert isinstance(error, SvcError)
    assert error.kind == kind
    assert error.retryable is (kind in ("unreachable", "transient", "timeout"))
    assert str(error) == "failed"


def test_kind_classes() -> None:
    assert errors._error_class("not_found", None) is errors.NotFoundError
    assert errors._error_class("timeout", None) is WaitTimeoutError
    assert errors._error_class("internal", None) is SvcError
    assert errors._error_class("no_such_kind_yet", None) is SvcError
    assert issubclass(WaitTimeoutError, TimeoutError)
    assert issubclass(InvalidInputError, ValueError)
    assert not issubclass(errors.CanceledError, (TimeoutError, ValueError, OSError))


def test_a_workflow_conflict_is_both() -> None:
    error = errors._new_error(
        "an organization processing is running", kind="conflict", subsystem="workflow",
        status=409, title="Conflict", details="processing 42 is running",
    )
    assert isinstance(error, WorkflowError)
    assert isinstance(error, ConflictError)
    assert type(error).__name__ == "WorkflowConflictError"
    assert errors._error_class("conflict", "workflow") is type(error)
    assert errors.WorkflowConflictError is type(error)
    assert (error.status, error.title, error.details) == (409, "Conflict", "processing 42 is running")
    with pytest.raises(ConflictError):
        raise error
    with pytest.raises(WorkflowError):
        raise error


def test_subsystem_attributes_and_defaults() -> None:
    error = errors._new_error(
        "bad", kind="invalid_input", subsystem="settings", paths=["a/b"],
        node_errors=[NodeError("a/b", "out of range")],
    )
    assert isinstance(error, SettingsError) and isinstance(error, InvalidInputError)
    assert error.paths == ["a/b"]
    assert error.node_errors == [("a/b", "out of range")]
    assert error.node_errors[0].path == "a/b"
    assert SettingsError("x").paths == []
    assert InvalidInputError("x").node_errors == []
    assert WebhookVerificationError("x", code="too_old").code == "too_old"
    assert WebhookVerificationError("x").kind == "verification"
    assert errors.NotFoundError("gone").kind == "not_found"


def test_pickle_keeps_class_and_attributes() -> None:
    for error in [
        errors._new_error("c", kind="conflict", subsystem="workflow", status=409),
        errors._new_error("t", kind="timeout"),
        errors._new_error("w", kind="verification", subsystem="webhook", code="bad_signature"),
    ]:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error)
        assert vars(copy) == vars(error)
        assert str(copy) == str(error)


def test_repr_shows_no_details_or_extra_values() -> None:
    error = errors._new_error(
        "refused", kind="authentication", status=401, title="Unauthorized",
        details="key svc_key_123 secret s3cr3t", code="x",
    )
    shown = repr(error)
    assert shown == "AuthenticationError('refused', kind='authentication', status=401, title='Unauthorized')"
    assert "s3cr3t" not in shown and "s3cr3t" not in str(error)


def test_top_level_exports() -> None:
    for name in errors.__all__:
        assert getattr(svc_sdk, name) is getattr(errors, name)
