"""Prints, as JSON, what a package index reads from a wheel: its METADATA fields and its
file names; extracts its native extension into a folder when one is given.

usage: python inspect_wheel.py WHEEL [EXTRACT_DIR]
"""

import email
import json
import sys
import zipfile
from pathlib import Path


def main() -> None:
    wheel = zipfile.ZipFile(sys.argv[1])
    names = wheel.namelist()
    metadata_files = [name for name in names if name.endswith(".dist-info/METADATA")]
    if len(metadata_files) != 1:
        sys.exit(f"{sys.argv[1]}: {len(metadata_files)} METADATA files")
    message = email.message_from_bytes(wheel.read(metadata_files[0]))
    fields = {}
    for key in set(message.keys()):
        fields[key] = message.get_all(key)
    body = message.get_payload()
    if len(sys.argv) > 2:
        out = Path(sys.argv[2])
        for name in names:
            if name.endswith((".so", ".pyd")):
                wheel.extract(name, out)
    print(json.dumps({"fields": fields, "description": body, "files": names}))


if __name__ == "__main__":
    main()
