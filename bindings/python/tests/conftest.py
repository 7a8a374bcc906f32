from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent / "benchmarks"))


@pytest.fixture(scope="session")
def webhook_vectors() -> list[dict[str, Any]]:
    data = json.loads((ROOT / "tests/data/webhook_vectors.json").read_text(encoding="utf-8"))
    vectors: list[dict[str, Any]] = data["vectors"]
    return vectors


@pytest.fixture(scope="session")
def svc_bin() -> Path:
    """The `svc` command (`SVC_BIN`, else `target/debug/svc`; `cargo xtask python`
    builds it): the workflow tests compare with it, others start its emulator."""
    given = os.environ.get("SVC_BIN")
    path = Path(given) if given else ROOT / "target" / "debug" / "svc"
    if not path.exists():
        pytest.fail(f"the svc binary is needed ({path}); build it with `cargo build -p svc-cli`")
    return path
