"""What ``help()`` shows of the public API: every public class and function has a
docstring written for Python users (no Rust internals), and every public callable's
parameters can be read (``inspect.signature``)."""

from __future__ import annotations

import inspect
import re
from typing import Any, NamedTuple

import svc_sdk
from svc_sdk import aio, errors, rights, samples, settings, trajectory, webhook

MODULES = [svc_sdk, aio, errors, rights, samples, settings, trajectory, webhook]

# What a Python user cannot act on: Rust paths, intra-doc links, the extension's
# internal walkers.
RUST_INTERNALS = re.compile(r"dict_walk|Differ\b|svc_core::|\[`|serde_json|`Vec<|Arc<|pyo3")


#: Classes whose instances the SDK makes.
RESULTS = {"Patch", "TreePatch", "Merge", "Conflict", "SettingsTree"}


class Public(NamedTuple):
    name: str
    value: Any
    member: bool  # a method or attribute of a public class


def public_objects() -> list[Public]:
    found: dict[int, Public] = {}
    for module in MODULES:
        for name in getattr(module, "__all__", []):
            value = getattr(module, name)
            if not (inspect.isclass(value) or callable(value)):
                continue
            found.setdefault(id(value), Public(f"{module.__name__}.{name}", value, False))
            if inspect.isclass(value):
                for member_name, member in vars(value).items():
                    if member_name.startswith("_") and member_name != "__init__":
                        continue
                    if callable(member) or isinstance(member, (classmethod, staticmethod)):
                        found.setdefault(
                            id(member), Public(f"{module.__name__}.{name}.{member_name}", member, True)
                        )
    return list(found.values())


def test_docstrings_speak_of_python() -> None:
    for public in public_objects():
        doc = inspect.getdoc(public.value) or ""
        assert not RUST_INTERNALS.search(doc), f"{public.name}: {RUST_INTERNALS.search(doc)!r} in {doc!r}"


def test_every_public_class_and_function_has_a_docstring() -> None:
    # Classes and functions; their methods are described by their class.
    missing = [p.name for p in public_objects() if not p.member and not inspect.getdoc(p.value)]
    assert missing == [], missing


def test_help_shows_the_parameters_of_every_public_callable() -> None:
    unreadable = []
    for public in public_objects():
        value = public.value
        target = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
        if inspect.isclass(target) and issubclass(target, BaseException):
            continue
        if inspect.isclass(target) and issubclass(target, dict):
            # A TypedDict: the SDK gives it, its keys are in its docstring.
            continue
        if inspect.isclass(target) and target.__name__ in RESULTS:
            # Made by the SDK (a patch, a merge) or by its own constructors
            # (``SettingsTree.from_dict``): no constructor of their own to show.
            continue
        try:
            inspect.signature(target)
        except (TypeError, ValueError):
            unreadable.append(public.name)
    assert unreadable == [], unreadable
