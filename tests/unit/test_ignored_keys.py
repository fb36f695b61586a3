"""DSP366: a key the draft sets that shapes what one vLLM release builds, but that another release does not read,
through the real CLI on real tiny checkpoints, judged by each release's generated model (its `structural` keys).

What the wheels say (vllm/model_executor/models/llama_eagle3.py, each extracted wheel):
- 0.15.0-0.17.1: no `norm_before_fc` read at all (0.18.0 adds it: the diff 0.17.1 -> 0.18.0 is that read, the
  `input_norm` RMSNorm and the skip of `input_norm.` when it is false).
- 0.18.0-0.21.0: `self.norm_before_fc = getattr(self.config, "norm_before_fc", False)` (L153 @ v0.18.0, v0.20.0):
  the top level only.
- 0.22.0 on: `eagle_config.get("norm_before_fc", getattr(self.config, "norm_before_fc", False))` (L153-157 @
  v0.22.0, L184-188 @ v0.33.0): the nested key first. `fc_norm` and `norm_output` are read from 0.22.0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_runner import run_cli
from conftest import ARCH, make_checkpoint

from dspark_ckpt.runtimes.versions import VLLM_RELEASES


def _finding(tmp_path: Path, *runtime: str, **config: Any) -> str | None:
    make_checkpoint(tmp_path / "d", family="eagle3-llama", target_vocab=96, markov=False,
                    config_extra={"architectures": [ARCH["eagle3-llama"]], **config})
    args = [a for r in runtime for a in ("--runtime", r)] or ["--runtime", "vllm"]
    done = run_cli("check", str(tmp_path / "d"), "--target-vocab-size", "96", *args, "--format", "json")
    found = [f["message"] for f in json.loads(done.stdout)["checkpoints"][0]["findings"] if f["code"] == "DSP366"]
    assert len(found) <= 1
    return found[0] if found else None


def test_a_nested_norm_before_fc(tmp_path: Path) -> None:
    said = _finding(tmp_path, eagle_config={"norm_before_fc": True})
    assert said is not None
    assert ("vLLM 0.18.0-0.21.0 do not read eagle_config.norm_before_fc (true) and build no model.input_norm.weight "
            "from it, as vLLM 0.22.0-0.34.0 do; they read norm_before_fc instead") in said
    # 0.12-0.17 read it nowhere either, but a nested read is not recorded by the generated model: DSP366 claims a
    # nested key ignored only where the release reads the same name at the top level (0.18-0.21)
    assert VLLM_RELEASES[0] not in said.split(" as ")[0] and "0.22.0-0.34.0 do not read" not in said


def test_a_top_level_norm_before_fc(tmp_path: Path) -> None:
    said = _finding(tmp_path, norm_before_fc=True)
    assert said is not None and said.startswith(f"vLLM {VLLM_RELEASES[0]}-0.17.1 do not read norm_before_fc (true)")
    assert "as vLLM 0.18.0-0.34.0 do" in said and "0.18.0-0.21.0 do not read" not in said


def test_fc_norm_from_0_22(tmp_path: Path) -> None:
    said = _finding(tmp_path, fc_norm=True)
    assert said is not None and said.startswith(f"vLLM {VLLM_RELEASES[0]}-0.21.0 do not read fc_norm (true)")


def test_a_false_flag_is_what_every_release_does_anyway(tmp_path: Path) -> None:
    assert _finding(tmp_path, norm_before_fc=False, eagle_config={"norm_before_fc": False}) is None


def test_releases_that_all_read_it_say_nothing(tmp_path: Path) -> None:
    assert _finding(tmp_path, "vllm>=0.22", eagle_config={"norm_before_fc": True}) is None
