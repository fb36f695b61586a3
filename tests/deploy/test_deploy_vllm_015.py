"""vLLM 0.15.x drops a speculative-config key it has no field for (DSP828), where 0.16.0 refuses it (DSP803).

Read in the extracted wheels: vllm/config/speculative.py @ v0.15.0 L56-57 declares `@dataclass` (pydantic's, from
`pydantic.dataclasses`, L8) under `@config`, which is a no-op there (vllm/config/utils.py L35-48 @ v0.15.0); pydantic
dataclasses ignore extra keyword arguments by default. 0.16.0's `config` decorator builds the dataclass with
`ConfigDict(extra="forbid")` (vllm/config/utils.py L55 @ v0.16.0), and speculative.py drops its own `@dataclass`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_runner import run_cli
from conftest import ARCH, make_checkpoint


def _deploy(tmp_path: Path, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    draft = tmp_path / "my-eagle3"
    make_checkpoint(draft, family="eagle3-llama", target_vocab=96, markov=False,
                    config_extra={"architectures": [ARCH["eagle3-llama"]]})
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"model": str(draft), "method": "eagle3", **spec}))
    done = run_cli("check", str(draft), "--target-vocab-size", "96", "--runtime", "vllm==0.15.1", "--runtime",
                   "vllm==0.16.0", "--speculative-config", str(path), "--format", "json")
    return {r["version"]: r for r in json.loads(done.stdout)["checkpoints"][0]["deploy"]["runtimes"]}


def test_a_typo_is_dropped_by_0_15_and_refused_by_0_16(tmp_path: Path) -> None:
    runs = _deploy(tmp_path, {"num_speculative_tokens": 3, "num_speculative_token": 4})
    old, new = runs["0.15.1"], runs["0.16.0"]
    assert old["starts"] is True and old["num_speculative_tokens"] == 3, old
    assert old["note_codes"] == ["DSP828"]
    note = old["notes"][0]
    assert "drops 'num_speculative_token'" in note and "did you mean 'num_speculative_tokens'?" in note
    assert new["error_code"] == "DSP803"


def test_the_typo_alone_leaves_the_count_unset(tmp_path: Path) -> None:
    """Dropped, the typo leaves num_speculative_tokens None: 0.15's token tree is built from it (a TypeError)."""
    runs = _deploy(tmp_path, {"num_speculative_token": 4})
    assert runs["0.15.1"]["note_codes"] == ["DSP828"]
    assert runs["0.15.1"]["error"] == "TypeError: 'NoneType' object cannot be interpreted as an integer"


def test_a_newer_field_is_dropped_and_named_as_such(tmp_path: Path) -> None:
    """`parallel_drafting` is a field from 0.16.0 (speculative.py L123-128 @ v0.16.0): 0.15 drops it."""
    runs = _deploy(tmp_path, {"num_speculative_tokens": 3, "parallel_drafting": True})
    assert runs["0.15.1"]["note_codes"] == ["DSP828"]
    assert "(a field from vLLM 0.16.0)" in runs["0.15.1"]["notes"][0]
    assert runs["0.16.0"]["starts"] is True
