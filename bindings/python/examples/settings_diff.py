"""Compare a unit's exported settings with the wanted ones, then print the write.

    python examples/settings_diff.py unit.json wanted.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from svc_sdk import SettingsError, settings


def main(unit_file: str, wanted_file: str) -> int:
    unit = json.loads(Path(unit_file).read_text(encoding="utf-8"))
    wanted = json.loads(Path(wanted_file).read_text(encoding="utf-8"))
    patch = settings.diff(unit, wanted)
    if patch.is_empty():
        print("the unit already has the wanted settings")
        return 0
    for path in patch.changed:
        print(f"changed: {path}")
    try:
        body = patch.to_write()
    except SettingsError as error:
        print(f"cannot write: {error} ({', '.join(error.paths)})", file=sys.stderr)
        return 1
    print(json.dumps(body, indent=2))
    assert settings.diff(settings.apply(unit, body), wanted).is_empty()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
