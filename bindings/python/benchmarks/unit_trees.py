"""The benchmark inputs of the Rust settings benches, in Python: the unit's default
settings tree (``crates/svc-test-support/src/settings/unit_default.json``, about a
thousand leaves) and a copy with a fraction of its leaves changed, by the same seeded
PRNG and rules as ``svc_test_support::settings::change_leaves`` (the same leaves
change as in ``cargo bench -p svc-benches --bench settings``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
UNIT_DEFAULT = ROOT / "crates/svc-test-support/src/settings/unit_default.json"

#: The seed of the Rust bench (`benches/benches/settings.rs`).
SEED = 0x5E77_1265

_MASK = (1 << 64) - 1


class SplitMix64:
    """``svc_test_support::settings::SplitMix64``."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E37_79B9_7F4A_7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) & _MASK
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        return 0 if bound == 0 else self.next_u64() % bound


def unit_default_text() -> str:
    return UNIT_DEFAULT.read_text(encoding="utf-8")


def leaf_paths(tree: Any) -> list[tuple[str, ...]]:
    """``svc_core::settings::leaf_paths``: every leaf (an empty object is one)."""
    out: list[tuple[str, ...]] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, dict) and node:
            for key, child in node.items():
                walk(child, (*path, key))
        else:
            out.append(path)

    walk(tree, ())
    return out


def _change(parent: Any, key: Any) -> None:
    node = parent[key]
    if isinstance(node, bool):
        parent[key] = not node
    elif isinstance(node, int):
        parent[key] = node + 1
    elif isinstance(node, float):
        parent[key] = node + 0.5
    elif isinstance(node, str):
        parent[key] = "10ms" if node == "off" else node + "x"
    elif isinstance(node, list):
        if node:
            _change(node, 0)
        else:
            node.append(0)
    elif node is None:
        parent[key] = 0
    elif isinstance(node, dict):
        node["added"] = True


def change_leaves(tree: Any, fraction: float, seed: int = SEED) -> Any:
    """``svc_test_support::settings::change_leaves``: a deep copy of `tree` with
    `fraction` of its leaves (at least one) changed."""
    out = copy.deepcopy(tree)
    leaves = leaf_paths(tree)
    wanted = min(max(int(len(leaves) * fraction + 0.5), 1), max(len(leaves), 1))
    rng = SplitMix64(seed)
    for index in range(min(wanted, len(leaves))):
        pick = index + rng.below(len(leaves) - index)
        leaves[index], leaves[pick] = leaves[pick], leaves[index]
        path = leaves[index]
        node = out
        for segment in path[:-1]:
            node = node[segment]
        if path:
            _change(node, path[-1])
    return out


def unit_trees(fraction: float = 0.01) -> tuple[str, str]:
    """The default tree and its changed copy, as JSON texts (parse them separately, as
    two exports or two reads of a unit would be)."""
    text = unit_default_text()
    changed = change_leaves(json.loads(text), fraction)
    return text, json.dumps(changed)
