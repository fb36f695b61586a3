"""strict_config_fields.json (the keys each pinned transformers' `@strict` config classes type without None):
hermetic, its shape and what check reads of it; the upstream tier, what tools/strict_config_fields.py reads again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dspark_ckpt.runtimes import strict_config
from dspark_ckpt.runtimes.release_model import generated_releases

ROOT = Path(__file__).resolve().parents[2]


def test_every_generated_sglang_release_s_transformers_is_read_or_said_unread() -> None:
    doc = json.loads(strict_config.FILE.read_text())
    pinned = {strict_config.pinned_transformers("sglang", r) for r in generated_releases("sglang")} - {None}
    assert pinned <= set(doc["transformers"]) | set(doc.get("not_read", ()))
    assert {"5.12.1", "5.19.0"} <= set(doc["transformers"])  # 0.5.16-0.5.21 and 0.5.22-0.5.23
    for per in doc["transformers"].values():
        for model_type, cls in per.items():
            assert cls["class"].endswith("Config") and cls["where"].startswith("transformers/models/"), model_type
            assert all(isinstance(t, list) and t and "None" not in t for t in cls["not_null"].values())


def test_a_null_typed_key_is_refused_and_an_optional_one_is_not() -> None:
    laguna = {"model_type": "laguna", "sliding_window": None}
    refused = strict_config.refused_null("sglang", "0.5.23", laguna)
    assert refused is not None and "Field 'sliding_window' expected int, got NoneType" in refused.text
    assert strict_config.refused_null("sglang", "0.5.23", {**laguna, "sliding_window": 128}) is None
    assert strict_config.refused_null("sglang", "0.5.23", {"model_type": "qwen3", "sliding_window": None}) is None
    assert strict_config.refused_null("sglang", "0.5.9", laguna) is None  # transformers 4.57: no strict classes


@pytest.mark.upstream(runtime="sglang")
def test_the_typed_keys_are_what_the_pinned_transformers_say() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "strict_config_fields.py"), "--check"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "is what the pinned transformers say" in done.stdout
