from __future__ import annotations

import json
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
