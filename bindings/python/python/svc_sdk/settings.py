"""Settings trees of an inertial navigation unit: minimal diff, apply, three-way merge.

A unit's settings are one JSON object; a write carries a *partial* tree that the unit
merges recursively: objects key by key, everything else (arrays, scalars, null) replaced
whole. Node paths join keys with ``/`` (``"aiding/gnss1/leverArmPrimary"``).

- :func:`diff`: the minimal :class:`Patch` between two trees (``dict``\\ s as
  ``json.loads`` gives them): the partial tree to write, the changed node paths, the
  removed nodes (which a write cannot express);
- :func:`diff_json`: the same from two JSON texts, parsed in Rust;
- :func:`apply`: a partial tree written into a tree, as the unit does it (a new tree);
- :func:`merge`: three-way merge, with the :class:`Conflict`\\ s;
- :class:`SettingsTree`: trees laid out for comparing many trees of one schema;
  :func:`fleet_diff`: a fleet's exported files against a reference file.

Values compare with JSON semantics, not Python's: ``True`` is not ``1`` and ``1`` is not
``1.0`` (a boolean setting written as ``1`` is a change). Trees must hold JSON values
only (``dict`` with ``str`` keys, ``list``/``tuple``, ``str``, ``int`` of 64 bits,
finite ``float``, ``bool``, ``None``); anything else raises :class:`SettingsError`
(also an :class:`InvalidInputError`) naming the node, where the diff reads it (sub-trees
that are the same object in both trees are equal without being read).

The patches hold fresh ``dict``\\ s and ``list``\\ s (changing them changes neither
tree) and the new tree's scalars. ``repr()`` of a patch or conflict shows paths, never
values (the NTRIP password is a setting).

::

    from svc_sdk import settings

    patch = settings.diff(unit_tree, wanted_tree)
    patch.changed          # ['output/comA/messages/imuShort']
    patch.tree             # {'output': {'comA': {'messages': {'imuShort': '10ms'}}}}
    assert settings.apply(unit_tree, patch.to_write()) == wanted_tree
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from svc_sdk import _native
from svc_sdk._native import SettingsTree, TreePatch, apply, diff, diff_json, fleet_diff, merge
from svc_sdk.errors import SettingsError


class _Absent:
    """The type of :data:`ABSENT`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


#: The side of a :class:`Conflict` that lacks the node (``None`` is JSON null).
ABSENT: Final = _Absent()


@dataclass(frozen=True, repr=False)
class Patch:
    """What turns one settings tree into another (:func:`diff`, :func:`diff_json`,
    :meth:`SettingsTree.diff_json`).

    ``tree``: the partial tree, only the changed nodes and the objects on their paths,
    keys in the new tree's order (the body of the unit's settings write; fresh dicts
    and lists). ``changed``: the changed nodes (``"aiding/gnss1/leverArmPrimary"``)
    in the new tree's order, every leaf whose value changed (an array is one leaf) and
    the top of every added or retyped sub-tree. ``removed``: the nodes of the old tree
    that the new one lacks (normally none); a write cannot remove them."""

    tree: Any
    changed: list[str]
    removed: list[str]

    def is_empty(self) -> bool:
        """Whether the two trees were equal (nothing changed, nothing removed)."""
        return not self.changed and not self.removed

    def has_removals(self) -> bool:
        """Whether the old tree had nodes that the new one lacks."""
        return bool(self.removed)

    def to_write(self) -> Any:
        """The body of the write turning the old tree into the new one (``tree``).
        Raises :class:`SettingsError` (with ``paths``) when the patch has removals: the
        write would leave them in place."""
        if self.removed:
            _native._refuse_removals(self.removed)
        return self.tree

    def __len__(self) -> int:
        return len(self.changed) + len(self.removed)

    def __repr__(self) -> str:
        # Paths only: values may be secrets (the NTRIP password).
        return f"Patch(changed={self.changed!r}, removed={self.removed!r})"


@dataclass(frozen=True, repr=False)
class Conflict:
    """A node both sides of a :func:`merge` changed, differently; a side lacking the
    node holds :data:`ABSENT`."""

    path: str
    base: Any
    ours: Any
    theirs: Any

    def __repr__(self) -> str:
        return f"Conflict(path={self.path!r})"  # The path only: values may be secrets.


@dataclass(frozen=True, repr=False)
class Merge:
    """The result of :func:`merge`: the merged tree (holding ours at each conflict) and
    the conflicts, in document order."""

    tree: Any
    conflicts: list[Conflict]

    def is_clean(self) -> bool:
        """Whether the merge had no conflict."""
        return not self.conflicts

    def __repr__(self) -> str:
        return f"Merge(conflicts={[c.path for c in self.conflicts]!r})"


__all__ = [
    "ABSENT",
    "Conflict",
    "Merge",
    "Patch",
    "SettingsError",
    "SettingsTree",
    "TreePatch",
    "apply",
    "diff",
    "diff_json",
    "fleet_diff",
    "merge",
]
