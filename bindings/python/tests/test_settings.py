from __future__ import annotations

import copy
import enum
import json
import math
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st
from unit_trees import change_leaves, unit_trees

from svc_sdk import InvalidInputError, SettingsError, settings


def strict(value: Any) -> Any:
    """`value` with every scalar tagged with its type, so that `==` is JSON equality
    (`True` is not `1`, `1` is not `1.0`); objects compare whatever their key order."""
    if isinstance(value, dict):
        return {key: strict(child) for key, child in value.items()}
    if isinstance(value, (list, tuple)):
        return ("array", [strict(item) for item in value])
    return (type(value).__name__, value)


def text(value: Any) -> str:
    """JSON text: equal texts mean equal trees with the same key order and types."""
    return json.dumps(value)


def same_patch(a: settings.Patch, b: settings.Patch) -> None:
    assert text(a.tree) == text(b.tree)
    assert a.changed == b.changed
    assert a.removed == b.removed


# --- The semantics of svc_core::settings::diff ---------------------------------------


def test_lever_arm_change() -> None:
    old: dict[str, Any] = {
        "aiding": {
            "gnss1": {"model": "internal", "leverArmPrimary": [0.0, 0.0, 0.0]},
            "gnss2": {"model": "none", "leverArmPrimary": [0.0, 0.0, 0.0]},
        },
        "clock": {"leapSec": 18},
    }
    new = copy.deepcopy(old)
    new["aiding"]["gnss1"]["leverArmPrimary"] = [0.5, 0.0, -1.2]
    patch = settings.diff(old, new)
    assert patch.tree == {"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}}}
    assert patch.changed == ["aiding/gnss1/leverArmPrimary"]
    assert patch.removed == []
    assert not patch.is_empty() and not patch.has_removals() and len(patch) == 1
    assert strict(settings.apply(old, patch.to_write())) == strict(new)


def test_no_change_is_empty() -> None:
    tree = {"a": {"b": 1, "c": [1, 2]}}
    assert settings.diff(tree, tree).is_empty()
    assert settings.diff(tree, copy.deepcopy(tree)).tree == {}
    assert settings.diff(tree, {"a": {"c": (1, 2), "b": 1}}).is_empty(), "order, tuple"
    patch = settings.diff(3, 3)
    assert patch.is_empty() and patch.tree == 3


def test_reordered_keys_still_diff_in_the_new_order() -> None:
    patch = settings.diff({"a": 1, "b": 2, "c": 3, "d": 4}, {"b": 2, "a": 1, "d": 5, "c": 3, "e": 6})
    assert text(patch.tree) == text({"d": 5, "e": 6})
    assert patch.changed == ["d", "e"]


def test_type_changes_are_whole_replacements() -> None:
    old = {"a": {"x": 1, "y": 2}, "b": 3, "c": [1], "d": {"z": 1}}
    new = {"a": 5, "b": {"p": True}, "c": {"q": 1}, "d": {"z": 1.0}}
    patch = settings.diff(old, new)
    assert patch.changed == ["a", "b", "c", "d/z"]
    assert patch.removed == []
    assert strict(patch.tree) == strict(new)
    root = settings.diff({"a": 1}, [1])
    assert root.changed == [""] and root.tree == [1]


def test_removals_are_reported_and_refused_as_a_write() -> None:
    patch = settings.diff({"a": {"x": 1, "y": {"deep": 2}, "z": 3}, "b": 1}, {"a": {"x": 2}, "b": 1})
    assert patch.changed == ["a/x"]
    assert patch.removed == ["a/y", "a/z"]
    assert patch.has_removals()
    with pytest.raises(SettingsError) as caught:
        patch.to_write()
    assert isinstance(caught.value, InvalidInputError)
    assert caught.value.paths == ["a/y", "a/z"]
    assert str(caught.value) == "the write cannot remove nodes a/y, a/z (a settings write only adds and changes)"


def test_nulls_are_values() -> None:
    patch = settings.diff({"a": 1, "b": None}, {"a": None, "b": None})
    assert patch.tree == {"a": None}
    assert settings.apply({"a": 1, "b": None}, patch.tree) == {"a": None, "b": None}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (True, 1), (False, 0), (1, 1.0), (0, 0.0), (True, 1.0), (0, False),
        ([True], [1]), ([1, 2], [1.0, 2]), ({"x": [{"y": False}]}, {"x": [{"y": 0}]}),
        ([[1]], [[True]]), ([(1,)], [[1.0]]),
    ],
)
def test_json_semantics_not_python_equality(old: Any, new: Any) -> None:
    assert old == new or isinstance(old[0], tuple)  # Python says so...
    patch = settings.diff({"node": old}, {"node": new})
    assert not patch.is_empty()  # ...JSON does not.
    assert patch.changed == (["node/x"] if isinstance(old, dict) else ["node"])
    same_patch(patch, settings.diff_json(text({"node": old}), text({"node": new})))


def test_equal_numbers_and_subclasses() -> None:
    class Level(enum.IntEnum):
        HIGH = 3

    class Name(str):
        pass

    assert settings.diff({"a": 0.0, "b": 3, "c": "x"}, {"a": -0.0, "b": Level.HIGH, "c": Name("x")}).is_empty()
    patch = settings.diff({"b": 2}, {"b": Level.HIGH})
    assert patch.tree == {"b": 3} and type(patch.tree["b"]) is int  # The base type, as JSON.
    assert settings.diff({"b": True}, {"b": Level.HIGH}).changed == ["b"]


def test_non_json_values_are_refused_with_their_path() -> None:
    for bad, what in [
        (float("nan"), "not finite"), (math.inf, "not finite"), ({1, 2}, "type set"),
        (b"x", "type bytes"), (2**64, "64 bits"), ({1: "x"}, "key of type int"),
    ]:
        with pytest.raises(SettingsError) as caught:
            settings.diff({"a": {"b": 0}}, {"a": {"b": bad}})
        assert isinstance(caught.value, InvalidInputError)
        assert what in str(caught.value), str(caught.value)
        assert caught.value.paths[0].startswith("a/b"), caught.value.paths
    with pytest.raises(SettingsError):
        settings.diff({"a": 1.0}, {"a": float("nan")})
    with pytest.raises(SettingsError):
        settings.diff({1: "a"}, {"x": "a"})
    with pytest.raises(SettingsError):
        settings.apply({"a": 1}, {"a": float("inf")})
    with pytest.raises(SettingsError):
        settings.SettingsTree.from_dict({"a": object()})


def test_trees_that_contain_themselves_or_nest_too_deep_are_refused() -> None:
    looped: dict[str, Any] = {"a": 1}
    looped["self"] = looped
    other: dict[str, Any] = {"a": 1}
    other["self"] = other
    listed: list[Any] = []
    listed.append(listed)
    deep: dict[str, Any] = {"v": 1}
    for _ in range(200):
        deep = {"n": deep}
    shallow: dict[str, Any] = {"v": 1}
    for _ in range(100):
        shallow = {"n": shallow}
    calls: list[Callable[[], object]] = [
        lambda: settings.diff(looped, other),
        lambda: settings.diff({"a": 1}, {"a": listed}),
        lambda: settings.diff({"a": [listed]}, {"a": [listed, 1]}),
        lambda: settings.diff({"x": 1}, deep),
        lambda: settings.diff(deep, json.loads(json.dumps(deep))),
        lambda: settings.apply({"a": 1}, looped),
        lambda: settings.apply(looped, {"b": 1}),
        lambda: settings.merge({"a": 1}, looped, {"a": 1}),
        lambda: settings.SettingsTree.from_dict(looped),
    ]
    for call in calls:
        with pytest.raises(SettingsError) as caught:
            call()
        assert isinstance(caught.value, InvalidInputError)
        assert "deeper than 128 levels" in str(caught.value), str(caught.value)
    # Deep but within the bound: compared as usual.
    changed = json.loads(json.dumps(shallow).replace('"v": 1', '"v": 2'))
    assert settings.diff(shallow, changed).changed == ["/".join(["n"] * 100 + ["v"])]
    assert settings.diff(looped, looped).is_empty()


def test_patch_values_are_copies() -> None:
    new: dict[str, Any] = {"a": {"list": [1, 2], "added": {"x": [3]}}}
    patch = settings.diff({"a": {"list": [1]}}, new)
    patch.tree["a"]["list"].append(99)
    patch.tree["a"]["added"]["x"].append(99)
    assert new == {"a": {"list": [1, 2], "added": {"x": [3]}}}


def test_apply_makes_a_new_tree_in_the_unit_order() -> None:
    tree: dict[str, Any] = {"a": {"b": 1}, "c": "x"}
    before = copy.deepcopy(tree)
    out = settings.apply(tree, {"a": {"n": [1, 2]}, "c": {"o": 1}, "d": 4})
    assert tree == before
    assert text(out) == text({"a": {"b": 1, "n": [1, 2]}, "c": {"o": 1}, "d": 4})
    out["a"]["b"] = 5
    assert tree["a"]["b"] == 1


def test_merge() -> None:
    base = {"clock": {"leapSec": 18}, "oem": {"label": "a"}, "dataLogger": {"mode": "auto"}}
    ours = {"clock": {"leapSec": 19}, "oem": {"label": "b"}, "dataLogger": {"mode": "auto"}}
    theirs = {"clock": {"leapSec": 18}, "oem": {"label": "c"}, "dataLogger": {"mode": "manual"}}
    merged = settings.merge(base, ours, theirs)
    assert merged.tree == {"clock": {"leapSec": 19}, "oem": {"label": "b"}, "dataLogger": {"mode": "manual"}}
    assert not merged.is_clean()
    [conflict] = merged.conflicts
    assert (conflict.path, conflict.base, conflict.ours, conflict.theirs) == ("oem/label", "a", "b", "c")
    removed = settings.merge({"a": 1}, {}, {"a": 2}).conflicts[0]
    assert removed.ours is settings.ABSENT and not settings.ABSENT
    assert repr(settings.ABSENT) == "ABSENT"
    assert settings.merge(base, ours, base).is_clean()


def test_reprs_show_paths_not_values() -> None:
    old = {"network": {"ntrip": {"password": "old-secret"}}}
    new = {"network": {"ntrip": {"password": "new-secret"}}}
    assert "secret" not in repr(settings.diff(old, new))
    assert "network/ntrip/password" in repr(settings.diff(old, new))
    assert "secret" not in repr(settings.merge(old, new, {"network": {"ntrip": {"password": "x-secret"}}}))
    assert "secret" not in repr(settings.SettingsTree.from_dict(new))


# --- diff_json, SettingsTree, fleet_diff -----------------------------------------------


def test_diff_json_takes_str_and_bytes_and_refuses_bad_json() -> None:
    same_patch(settings.diff_json('{"a": 1}', b'{"a": 2}'), settings.diff({"a": 1}, {"a": 2}))
    with pytest.raises(SettingsError) as caught:
        settings.diff_json('{"a": 1}', '{"a": tru}')
    assert "the new tree is not JSON (line 1" in str(caught.value)
    with pytest.raises(TypeError):
        settings.diff_json({"a": 1}, "{}")  # type: ignore[arg-type]
    # A `str` with a lone surrogate has no UTF-8 form: not JSON either.
    for call in (
        lambda: settings.diff_json('{"a": "\ud800"}', "{}"),
        lambda: settings.SettingsTree.from_json('{"a": "\ud800"}'),
        lambda: settings.SettingsTree.from_dict({"a": 1}).diff_json('{"a": "\ud800"}'),
    ):
        with pytest.raises(SettingsError, match="lone surrogate"):
            call()


def test_the_unit_tree_every_way() -> None:
    old_text, new_text = unit_trees(0.01)
    old, new = json.loads(old_text), json.loads(new_text)
    patch = settings.diff(old, new)
    assert len(patch.changed) == 11 and not patch.removed
    same_patch(patch, settings.diff_json(old_text, new_text))
    same_patch(patch, settings.diff(old, change_leaves(old, 0.01)))
    old_tree, new_tree = settings.SettingsTree.from_dict(old), settings.SettingsTree.from_json(new_text)
    assert old_tree.same_shape(new_tree) and old_tree.leaf_count == 1061
    tree_patch = old_tree.diff(new_tree)
    assert tree_patch.changed == patch.changed and tree_patch.removed == []
    assert tree_patch.to_json() == json.dumps(patch.tree, separators=(",", ":"))
    assert text(tree_patch.tree) == text(patch.tree)
    same_patch(tree_patch.to_patch(), patch)
    assert strict(settings.apply(old, patch.tree)) == strict(new)
    assert old_tree.to_dict() == old and json.loads(old_tree.to_json()) == old
    assert old_tree == settings.SettingsTree.from_json(old_text) and old_tree != new_tree
    # The fleet case in one call: indented, compact (compared byte by byte) and as bytes.
    for new_json in (new_text, json.dumps(new, separators=(",", ":")), new_text.encode()):
        same_patch(old_tree.diff_json(new_json), patch)


def test_settings_tree_diff_json_refuses_what_is_not_json() -> None:
    tree = settings.SettingsTree.from_dict({"a": {"b": 1}, "password": "hunter2"})
    same_patch(tree.diff_json('{"a":{"b":2}}'), settings.diff(tree.to_dict(), {"a": {"b": 2}}))
    for bad in ('{"a": tru}', b'{"a": "\xff"}', ""):
        with pytest.raises(SettingsError) as caught:
            tree.diff_json(bad)
        assert "the new tree is not JSON" in str(caught.value)
        assert "hunter2" not in str(caught.value)
    with pytest.raises(TypeError):
        tree.diff_json({"a": 1})  # type: ignore[arg-type]
    # A tree deeper than a JSON parser reads (built from dicts) is compared as values.
    deep: Any = 1
    for _ in range(127):
        deep = {"k": deep}
    deep_tree = settings.SettingsTree.from_dict({"x": 1, "k": deep})
    same_patch(deep_tree.diff_json('{"x": 2}'), settings.diff({"x": 1, "k": deep}, {"x": 2}))


def test_settings_tree_get() -> None:
    tree = settings.SettingsTree.from_dict({"aiding": {"gnss1": {"model": "internal", "arm": [0.0, 1.0]}}})
    assert tree.get("aiding/gnss1/arm") == [0.0, 1.0]
    assert tree.get("aiding/gnss1") == {"model": "internal", "arm": [0.0, 1.0]}
    assert tree.get("aiding/nothing") is None
    assert tree.get("aiding/nothing", "default") == "default"
    with pytest.raises(SettingsError):
        tree.get("aiding//gnss1")
    assert repr(tree) == "SettingsTree(leaves=2)"


def test_fleet_diff(tmp_path: Path) -> None:
    reference: dict[str, Any] = {"output": {"comA": {"imuShort": "off", "ekfNav": "10ms"}}, "clock": {"leapSec": 18}}
    van1 = copy.deepcopy(reference)
    van1["output"]["comA"]["imuShort"] = "10ms"
    van2 = {"output": {"comA": {"imuShort": "off"}}, "clock": {"leapSec": 18}}
    files = []
    for name, tree in [("reference", reference), ("van1", van1), ("van2", van2)]:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(tree), encoding="utf-8")
        files.append(path)
    entries = settings.fleet_diff(files[0], [str(files[1]), files[2]])
    assert entries == [
        {"file": str(files[1]), "changed": ["output/comA/imuShort"], "removed": [],
         "patch": {"output": {"comA": {"imuShort": "10ms"}}}},
        {"file": str(files[2]), "changed": [], "removed": ["output/comA/ekfNav"], "patch": {}},
    ]
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        settings.fleet_diff(files[0], [files[1], tmp_path / "bad.json"])
    assert "bad.json is not a settings tree: not JSON" in str(caught.value)
    with pytest.raises(SettingsError) as missing:
        settings.fleet_diff(files[0], [tmp_path / "missing.json"])
    assert missing.value.kind == "io"


# --- Properties ------------------------------------------------------------------------

# Leaves that Python's `==` confuses, often, and others.
tricky = st.sampled_from([True, False, 0, 1, 0.0, 1.0, -0.0, 2, 2.0, None, "", "1"])
leaves = st.one_of(
    tricky,
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
)
values = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(max_size=3), children, max_size=4),
    ),
    max_leaves=12,
)
trees = st.dictionaries(st.text(max_size=3), values, max_size=5)


@st.composite
def edited(draw: st.DrawFn, tree: dict[str, Any]) -> dict[str, Any]:
    """A copy of `tree` with some nodes changed and some added, none removed."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        choice = draw(st.integers(0, 3))
        if choice == 0 and isinstance(value, dict):
            out[key] = draw(edited(value))
        elif choice == 1:
            # A new value; a dict replaced by a dict could drop keys, so by a leaf.
            out[key] = draw(leaves if isinstance(value, dict) else values)
        elif choice == 2:
            out[key] = copy.deepcopy(value)  # Equal, not the same objects.
        else:
            out[key] = value
    for key, value in draw(st.dictionaries(st.text(max_size=3), values, max_size=2)).items():
        out.setdefault(key, value)
    return out


@st.composite
def tree_and_edit(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    tree = draw(trees)
    return tree, draw(edited(tree))


@hypothesis_settings(max_examples=300, deadline=None)
@given(tree_and_edit())
def test_apply_of_diff_gives_the_new_tree(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    old, new = pair
    patch = settings.diff(old, new)
    assert patch.removed == []
    assert strict(settings.apply(old, patch.tree)) == strict(new)
    assert settings.diff(new, settings.apply(old, patch.tree)).is_empty()


@hypothesis_settings(max_examples=200, deadline=None)
@given(tree_and_edit(), st.data())
def test_merge_laws(pair: tuple[dict[str, Any], dict[str, Any]], data: st.DataObject) -> None:
    base, ours = pair
    theirs = data.draw(edited(base))
    # One side unchanged: the other side's tree, cleanly.
    for merged, expected in [
        (settings.merge(base, ours, base), ours),
        (settings.merge(base, base, ours), ours),
        (settings.merge(base, ours, copy.deepcopy(ours)), ours),
    ]:
        assert merged.is_clean() and merged.conflicts == []
        assert strict(merged.tree) == strict(expected)
    # Both sides changed: ours wins each conflict; a clean merge holds both sides'
    # changes whichever side is ours, and each side's changes applied to the other.
    merged = settings.merge(base, ours, theirs)
    swapped = settings.merge(base, theirs, ours)
    assert sorted(c.path for c in merged.conflicts) == sorted(c.path for c in swapped.conflicts)
    if merged.is_clean():
        assert strict(merged.tree) == strict(swapped.tree)
        # What the merge changed in ours is what theirs changed (at or under a node).
        theirs_changed = settings.diff(base, theirs).changed
        for path in settings.diff(ours, merged.tree).changed:
            assert any(path == p or path.startswith(p + "/") or p.startswith(path + "/")
                       for p in theirs_changed), (path, theirs_changed)
    for conflict in merged.conflicts:
        assert strict(conflict.ours) != strict(conflict.theirs)


@hypothesis_settings(max_examples=300, deadline=None)
@given(trees, trees)
def test_diff_of_dicts_is_the_diff_of_their_json(old: dict[str, Any], new: dict[str, Any]) -> None:
    patch = settings.diff(old, new)
    same_patch(patch, settings.diff_json(json.dumps(old), json.dumps(new)))
    # Other formatting, other key order of the old tree: the same patch.
    pretty = json.dumps(dict(reversed(list(old.items()))), indent=1)
    same_patch(settings.diff(json.loads(pretty), new), settings.diff_json(pretty, json.dumps(new)))
    tree_patch = settings.SettingsTree.from_dict(old).diff(settings.SettingsTree.from_dict(new))
    same_patch(tree_patch.to_patch(), patch)


@hypothesis_settings(max_examples=200, deadline=None)
@given(tree_and_edit())
def test_edits_diff_like_their_json(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    old, new = pair
    same_patch(settings.diff(old, new), settings.diff_json(json.dumps(old), json.dumps(new)))


# --- Any Python objects --------------------------------------------------------------
#
# `settings.diff` reads any mappings and sequences through svc-core's one settings walk.
# Trees that are JSON (subclasses of its types included) give the patch of their JSON
# text; anything else gives that patch or a clear `InvalidInputError` naming the node,
# never another exception.


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3


class Name(str):
    pass


class Ratio(float):
    pass


class Node(dict):  # type: ignore[type-arg]
    pass


class Items(list):  # type: ignore[type-arg]
    pass


def is_json(tree: Any) -> bool:
    """Whether ``json.dumps`` writes the tree as the same JSON value: string keys, finite
    numbers, integers of 64 bits, the JSON types and their subclasses."""
    if isinstance(tree, dict):
        return all(isinstance(k, str) and is_json(v) for k, v in tree.items())
    if isinstance(tree, (list, tuple)):
        return all(is_json(v) for v in tree)
    if isinstance(tree, bool) or tree is None or isinstance(tree, str):
        return True
    if isinstance(tree, int):
        return -(2**63) <= tree < 2**64
    if isinstance(tree, float):
        return math.isfinite(tree)
    return False


def diffs_as_its_json(old: Any, new: Any) -> None:
    """The patch of the trees' JSON text when both are JSON; otherwise a patch or an
    `InvalidInputError`."""
    try:
        patch = settings.diff(old, new)
    except SettingsError as error:
        assert isinstance(error, InvalidInputError), error
        assert not (is_json(old) and is_json(new)), (old, new, error)
        return
    if is_json(old) and is_json(new):
        same_patch(patch, settings.diff_json(json.dumps(old), json.dumps(new)))


# Leaves of subclasses of the JSON types, and leaves that are not JSON.
odd_leaves = st.sampled_from(
    [Level.HIGH, Level.LOW, Name("x"), Name(""), Ratio(1.5), Ratio(0.0), (1, 2.0), (), float("nan"),
     math.inf, -math.inf, 2**64, 2**63, -(2**63) - 1, {1}, b"x", None, True]
)
odd_keys = st.one_of(st.text(max_size=2), st.sampled_from([Name("a"), Name("x"), 1]))
some_values = st.recursive(
    st.one_of(tricky, tricky, leaves, odd_leaves),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.lists(children, max_size=3).map(Items),
        st.dictionaries(st.text(max_size=2), children, max_size=4),
        st.dictionaries(st.text(max_size=2), children, max_size=4),
        st.dictionaries(odd_keys, children, max_size=3),
        st.dictionaries(st.text(max_size=2), children, max_size=3).map(Node),
    ),
    max_leaves=14,
)
some_trees = st.dictionaries(st.text(max_size=2), some_values, max_size=5)


@hypothesis_settings(max_examples=400, deadline=None)
@given(some_trees, some_trees)
def test_any_trees_diff_as_their_json_or_fail_clearly(old: dict[str, Any], new: dict[str, Any]) -> None:
    diffs_as_its_json(old, new)
    diffs_as_its_json(new, old)


@hypothesis_settings(max_examples=300, deadline=None)
@given(tree_and_edit())
def test_edits_of_shared_and_parsed_trees_diff_alike(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    old, new = pair
    diffs_as_its_json(old, new)  # Shared objects (edits of a tree)...
    parsed_old, parsed_new = json.loads(json.dumps(old)), json.loads(json.dumps(new))
    diffs_as_its_json(parsed_old, parsed_new)  # ...and trees parsed separately.
    same_patch(settings.diff(old, new), settings.diff(parsed_old, parsed_new))


def numbers(tree: Any) -> list[Any]:
    if isinstance(tree, dict):
        return [n for child in tree.values() for n in numbers(child)]
    if isinstance(tree, (list, tuple)):
        return [n for child in tree for n in numbers(child)]
    return [tree] if isinstance(tree, (int, float)) and not isinstance(tree, bool) else []


# Objects of a few schemas (the same keys, in the same order or not, more or fewer of
# them), parsed from JSON: the walk pairs keys by schema, compared once.
schema_objects = st.lists(
    st.dictionaries(st.sampled_from("abcd"), st.one_of(tricky, st.sampled_from("xy")), max_size=4),
    min_size=1,
    max_size=8,
)


@hypothesis_settings(max_examples=300, deadline=None)
@given(schema_objects, schema_objects)
def test_the_walk_pairs_keys_of_repeated_schemas(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    def tree(objects: list[dict[str, Any]]) -> Any:
        return json.loads(json.dumps({"n": {str(i): o for i, o in enumerate(objects)}, "list": objects}))

    diffs_as_its_json(tree(old), tree(new))
    diffs_as_its_json(tree(old), tree(old[::-1]))
    diffs_as_its_json(tree(old + new), tree(new + old))


# Trees with subclasses of the JSON types (walked through `Bound` references) that
# `json.dumps` writes as their base types: the same patch as the walk of their text.
json_subclass_leaves = st.sampled_from([Level.HIGH, Level.LOW, Name("x"), Name(""), Ratio(1.5), Ratio(0.0)])
json_like_values = st.recursive(
    st.one_of(tricky, leaves, json_subclass_leaves),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.lists(children, max_size=3).map(Items),
        st.dictionaries(st.text(max_size=2), children, max_size=4),
        st.dictionaries(st.text(max_size=2), children, max_size=3).map(Node),
    ),
    max_leaves=14,
)
json_like_trees = st.dictionaries(st.text(max_size=2), json_like_values, max_size=5)


@hypothesis_settings(max_examples=300, deadline=None)
@given(json_like_trees, json_like_trees)
def test_every_walk_gives_the_patch_of_the_json(old: dict[str, Any], new: dict[str, Any]) -> None:
    """One semantics: objects with subclasses, the same parsed again, and their text give
    one patch."""
    expected = settings.diff_json(json.dumps(old), json.dumps(new))
    same_patch(settings.diff(old, new), expected)
    same_patch(settings.diff(json.loads(json.dumps(old)), json.loads(json.dumps(new))), expected)
    written = settings.apply(old, expected.tree)
    if not expected.removed:
        assert settings.diff(new, written).is_empty()


def test_objects_of_one_subclass_are_walked_key_by_key() -> None:
    """Two `dict`s of the same subclass are objects, compared key by key as JSON is (they
    were once compared whole, as one leaf)."""
    old = {"a": Node({"x": 1, "y": 2})}
    new = {"a": Node({"x": 1, "y": 3})}
    patch = settings.diff(old, new)
    assert patch.changed == ["a/y"] and patch.tree == {"a": {"y": 3}}
    same_patch(patch, settings.diff_json(json.dumps(old), json.dumps(new)))
    same_patch(settings.diff({"a": Node({"x": 1})}, {"a": Node({"x": 1, "z": Items([1])})}),
               settings.diff({"a": {"x": 1}}, {"a": {"x": 1, "z": [1]}}))


def test_the_unit_tree_with_subclasses_gives_the_same_patch() -> None:
    old_text, new_text = unit_trees(0.01)
    old, new = json.loads(old_text), json.loads(new_text)
    odd = json.loads(new_text)
    odd["output"]["comA"]["messages"] = Node(odd["output"]["comA"]["messages"])
    same_patch(settings.diff(old, odd), settings.diff(old, new))
    diffs_as_its_json(old, change_leaves(old, 0.01))


def test_a_key_that_is_not_a_string_is_refused() -> None:
    class Colliding:
        def __hash__(self) -> int:
            return hash("k")

        def __eq__(self, other: object) -> bool:
            return False

    cases: list[tuple[dict[Any, Any], dict[Any, Any]]] = [
        ({"z": 2, Colliding(): 1, "k": 1}, {"k": 1, "z": 2}),
        ({"k": 1, Colliding(): 1}, {"k": 1}),
        ({"k": 1}, {"k": 1, Colliding(): 1}),
        ({"a": [{"z": 2, Colliding(): 1}]}, {"a": [{"k": 1, "z": 2}]}),
    ]
    for old, new in cases:
        for a, b in ((old, new), (new, old)):
            with pytest.raises(InvalidInputError, match="not a string"):
                settings.diff(a, b)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"a": float("nan")}, {"a": float("nan")}),  # Two NaNs: refused.
        ({"a": [math.inf]}, {"a": [math.inf]}),
        ({"a": math.inf}, {"a": "x"}),  # Different kinds: not compared, no error.
        ({"a": 1, "b": {1, 2}}, {"a": 1, "b": {1, 2}}),
        ({"a": {"x": math.nan}}, {"a": {"x": 1.0}, "b": {2}}),  # The first error.
        ({"a": 1}, {"a": 2**64}),  # Added or changed: copied, refused.
        ({"a": 1}, {"a": 2**64 - 1}),  # Fits `u64`.
        ({"a": 2**70}, {"a": 2**70}),  # Equal: not copied, no error.
        ({"a": [1, 2]}, {"a": (1, 2)}),  # Arrays either way.
        ({"a": [{"x": True}]}, {"a": [{"x": 1}]}),
        ({"a": {"b": 1, "c": 2}}, {"a": {"c": 2, "b": 1}}),
        ({"a": {"b": 1, "c": 2, "d": 3}}, {"a": {"c": 2}}),
        ({"b": 1, "a": {"x": 1, "y": 2}}, {"a": {"x": 1, "z": 3}}),  # Removals in walk order.
        ({"a": 0.0}, {"a": -0.0}),
        ({"a": Name("x")}, {"a": "x"}),
        ({"a": {1: "x"}}, {"a": {1: "x"}}),
    ],
)
def test_the_edges_diff_as_their_json_or_fail_clearly(old: Any, new: Any) -> None:
    diffs_as_its_json(old, new)
    diffs_as_its_json(new, old)
    nan = float("nan")
    diffs_as_its_json({"a": nan, "b": [nan]}, {"a": nan, "b": [nan]})  # The same objects.
