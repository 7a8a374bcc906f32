"""The Python alternative of the `fleet_diff` bench group (benches/benches/fleet.rs).

    python fleet_diff.py REFERENCE FOLDER [ITERATIONS]

Each iteration compares every `*.json` file of FOLDER (a fleet's exports) against
REFERENCE as a Python tool would: `json.load` of the reference and of each file, and
`json_merge_patch.create_patch(reference, tree)` (RFC 7386) for each file. Prints the
seconds the ITERATIONS iterations took together (`time.perf_counter` around the loop
only: interpreter start-up, imports and listing the folder are not counted), and
nothing else on standard output.
"""

import json
import sys
import time
from pathlib import Path

import json_merge_patch


def load(path):
    with open(path, "rb") as file:
        return json.load(file)


def fleet_diff(reference_path, files):
    reference = load(reference_path)
    return [(path, json_merge_patch.create_patch(reference, load(path))) for path in files]


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    reference_path = Path(sys.argv[1])
    files = sorted(Path(sys.argv[2]).glob("*.json"))
    iterations = int(sys.argv[3]) if len(sys.argv) == 4 else 1
    if not files:
        sys.exit(f"no *.json file in {sys.argv[2]}")

    patches = []
    start = time.perf_counter()
    for _ in range(iterations):
        patches = fleet_diff(reference_path, files)
    elapsed = time.perf_counter() - start

    if iterations > 0 and (len(patches) != len(files) or not all(p for _, p in patches)):
        sys.exit("every file differs from the reference: expected a non-empty patch each")
    print(f"{elapsed:.9f}")


if __name__ == "__main__":
    main()
