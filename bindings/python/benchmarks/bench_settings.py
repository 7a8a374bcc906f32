"""Settings diff of svc_sdk against the well-known Python libraries, in the same run.

Input: the unit's default settings tree (about 1,200 nodes, 1,061 leaves) and a copy
with 1 % of its leaves changed by the seeded PRNG of the Rust benches (see
``unit_trees.py``). Each row is timed as the median of several repeats, each the mean
of many calls; the ratio is the alternative's median over svc_sdk's (> 1: svc_sdk is
faster), so it holds on a busy machine where the absolute times do not.

    python bindings/python/benchmarks/bench_settings.py            # the table
    python bindings/python/benchmarks/bench_settings.py --quick    # a smoke run

Needs ``json-merge-patch``, ``jsonpatch`` and ``deepdiff`` (``requirements-dev.txt``).
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import timeit
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import deepdiff  # noqa: E402
import json_merge_patch  # type: ignore[import-untyped]  # noqa: E402
import jsonpatch  # noqa: E402
from unit_trees import change_leaves, unit_trees  # noqa: E402

from svc_sdk import settings  # noqa: E402


def median_seconds(call: Callable[[], Any], budget: float, repeats: int) -> float:
    """The median over `repeats` of the mean time of one call, each repeat running for
    about `budget / repeats` seconds."""
    call()  # Warm up (and fail early).
    once = timeit.timeit(call, number=1)
    number = max(1, int(budget / repeats / max(once, 1e-9)))
    times = timeit.repeat(call, number=number, repeat=repeats)
    return statistics.median(t / number for t in times)


def shown(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    args = parser.parse_args()
    budget, repeats = (0.05, 3) if args.quick else (1.0, 7)

    old_text, new_text = unit_trees(0.01)
    old, new = json.loads(old_text), json.loads(new_text)
    # An edited copy: the scalars are shared with the original, as after deepcopy + edits.
    edited = change_leaves(old, 0.01)
    patch = settings.diff(old, new)
    assert patch.changed and not patch.removed
    assert patch.tree == json_merge_patch.create_patch(old, new)
    assert settings.diff_json(old_text, new_text).tree == patch.tree
    old_tree, new_tree = settings.SettingsTree.from_json(old_text), settings.SettingsTree.from_json(new_text)
    assert old_tree.diff(new_tree).changed == patch.changed

    def time(call: Callable[[], Any], factor: float = 1.0) -> float:
        return median_seconds(call, budget * factor, repeats)

    rows: list[tuple[str, str, float, str, float]] = []

    def row(what: str, ours: float, alternative_name: str, alternative: float) -> None:
        rows.append((what, "", ours, alternative_name, alternative))

    ours = time(lambda: settings.diff(old, new))
    row("`settings.diff(dict, dict)`, parsed separately", ours,
        "`json_merge_patch.create_patch`", time(lambda: json_merge_patch.create_patch(old, new)))
    row("", ours, "`jsonpatch.make_patch`", time(lambda: jsonpatch.make_patch(old, new), 2))
    row("", ours, "`deepdiff.DeepDiff`", time(lambda: deepdiff.DeepDiff(old, new), 2))
    # For scale: what CPython's own C code takes to compare two trees that are equal
    # (`==`, no diff), separately parsed (every string another object) or a deep copy
    # (the scalars shared; the copy is made beforehand).
    twin = json.loads(old_text)
    same_copy = copy.deepcopy(old)
    row("", ours, "`old == twin` (CPython's C equality, trees equal, parsed separately)",
        time(lambda: old == twin))
    # The calibration the targets were set with: `tree == wanted` on the changed tree,
    # which stops at the first difference. Its time against `jsonpatch.make_patch`'s tells
    # which input the targets were measured on (see the README).
    row("", ours, "`old == new` (stops at the first difference)", time(lambda: old == new))
    ours = time(lambda: settings.diff(old, edited))
    row("`settings.diff(dict, dict)`, an edited deep copy", ours,
        "`json_merge_patch.create_patch`", time(lambda: json_merge_patch.create_patch(old, edited)))
    row("", ours, "`jsonpatch.make_patch`", time(lambda: jsonpatch.make_patch(old, edited), 2))
    row("", ours, "`old == same_copy` (CPython's C equality, trees equal, a deep copy)",
        time(lambda: old == same_copy))
    row("", ours, "`old == edited` (stops at the first difference)", time(lambda: old == edited))
    ours = time(lambda: old_tree.diff(new_tree))
    merge_patch = time(lambda: json_merge_patch.create_patch(old, new))
    row("`SettingsTree.diff` (trees built beforehand)", ours, "`json_merge_patch.create_patch`", merge_patch)
    ours = time(lambda: old_tree.diff(new_tree).to_json())
    row("`SettingsTree.diff(..).to_json()` (the write body)", ours,
        "`json_merge_patch` + `json.dumps`", time(lambda: json.dumps(json_merge_patch.create_patch(old, new))))
    compact_new = json.dumps(new, separators=(",", ":"))
    ours = time(lambda: old_tree.diff_json(compact_new))
    row("`SettingsTree.diff_json(text)` (a kept reference, a unit's compact export)", ours,
        "`json.loads` + `json_merge_patch`", time(lambda: json_merge_patch.create_patch(old, json.loads(compact_new))))
    ours = time(lambda: settings.diff_json(old_text, new_text))
    row("`settings.diff_json(text, text)`", ours, "`json.loads` ×2 + `json_merge_patch`",
        time(lambda: json_merge_patch.create_patch(json.loads(old_text), json.loads(new_text))))
    ours = time(lambda: settings.SettingsTree.from_json(new_text))
    row("`SettingsTree.from_json` (a tree of a known shape)", ours, "`json.loads`", time(lambda: json.loads(new_text)))
    ours = time(lambda: settings.apply(old, patch.tree))
    row("`settings.apply` (a new tree)", ours, "`copy.deepcopy` + `json_merge_patch.apply_patch`",
        time(lambda: json_merge_patch.merge(copy.deepcopy(old), patch.tree)))

    print(f"input: unit default tree, {len(patch.changed)} of 1,061 leaves changed; Python {sys.version.split()[0]}")
    print()
    print("| svc_sdk | time | alternative | time | ratio |")
    print("|---|---|---|---|---|")
    for what, _, ours, alternative_name, alternative in rows:
        print(f"| {what} | {shown(ours)} | {alternative_name} | {shown(alternative)} | {alternative / ours:.1f}× |")


if __name__ == "__main__":
    main()
