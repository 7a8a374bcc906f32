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

from svc_sdk._native import (
    ABSENT,
    Conflict,
    Merge,
    Patch,
    SettingsTree,
    TreePatch,
    apply,
    diff,
    diff_json,
    fleet_diff,
    merge,
)
from svc_sdk.errors import SettingsError

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
