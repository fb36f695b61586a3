"""fix's drop-confidence-head (issue 21 item 5): a DFlash or EAGLE-3 draft that ships the training-time
`confidence_head.*` fails to load on every vLLM release (DSP350: the backbone has no such module and its nested
loader refuses the name); SGLang skips it (DSP351). The hint's command drops those tensors and nothing else; a draft
that also ships a Markov head (a DSpark draft under another name) is refused, and a DSpark draft, whose model builds
the confidence head, is left alone. Real checkpoints on disk, the real CLI.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import fix_refused, make_checkpoint, run_cli, write_safetensors
from listed import vllm_minors
from safetensors.numpy import load_file
from test_fix_aux_count import check, files  # the same T = 96

T = 96
COMMAND = re.compile(r"`(dspark-ckpt fix [^`]+)`")
CONFIDENCE = {"confidence_head.proj.weight": np.ones((1, 32), dtype=np.float32),
              "confidence_head.proj.bias": np.ones((1,), dtype=np.float32)}
EAGLE = {"eagle_aux_hidden_state_layer_ids": [1, 5, 9]}
# The vLLM releases that register each family (registry.py @ v0.20.0 L576 DFlashDraftModel, L577
# Eagle3LlamaForCausalLM; @ v0.24.0 L614 Eagle3Qwen3ForCausalLM; @ v0.25.0 L597 Qwen3DSparkModel)
REGISTERED = {"dflash": "vllm>=0.20.0", "eagle3-llama": "vllm", "eagle3-qwen3": "vllm>=0.24.0",
              "qwen3-dspark": "vllm>=0.25.0"}


def draft(root: Path, family: str, extra: dict[str, np.ndarray], config: dict[str, Any] | None = None) -> Path:
    make_checkpoint(root, family=family, config_extra=config, markov=family.endswith("dspark"))
    tensors = load_file(str(root / "model.safetensors"))
    write_safetensors(root / "model.safetensors", {**tensors, **extra})
    return root


@pytest.mark.parametrize(("family", "config"), [("dflash", None), ("eagle3-llama", EAGLE), ("eagle3-qwen3", EAGLE)])
def test_the_hint_command_drops_the_head_and_nothing_else(tmp_path: Path, family: str,
                                                          config: dict[str, Any] | None) -> None:
    source = draft(tmp_path / "my draft", family, CONFIDENCE, config)
    before = files(source)
    shipped = load_file(str(source / "model.safetensors"))
    # refused by name in every release that has the class: a params_dict KeyError (DFlash to 0.25, EAGLE-3 to 0.24:
    # qwen3_dflash.py L457-498 @ v0.20.0, llama_eagle3.py L225-270 @ v0.20.0), else AutoWeightsLoader's words
    doc = check(tmp_path, "my draft", REGISTERED[family])
    assert {c["error_code"] for c in doc["compatibility"]} == {"DSP350"}
    (said,) = [f["hint"] for f in doc["findings"] if f["code"] == "DSP350"]
    (line,) = COMMAND.findall(said)
    argv = shlex.split(line)
    assert argv[:3] == ["dspark-ckpt", "fix", "my draft"]
    assert argv[argv.index("--strategy") + 1] == "drop-confidence-head"
    fixed = run_cli(*argv[1:], "--isolated", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    out = tmp_path / "my draft-fixed"
    assert files(source) == before  # the checkpoint itself is untouched
    assert files(out)["config.json"] == before["config.json"]
    kept = load_file(str(out / "model.safetensors"))
    assert set(kept) == set(shipped) - set(CONFIDENCE)
    assert all(np.array_equal(kept[n], shipped[n]) for n in kept)  # every other tensor byte for byte
    doc = check(tmp_path, "my draft-fixed", REGISTERED[family], "sglang")
    assert not {"DSP350", "DSP351"} & {f["code"] for f in doc["findings"]}
    assert all(c["error_code"] != "DSP350" for c in doc["compatibility"])
    assert all(c["loads"] for c in doc["compatibility"] if c["runtime"] == "vllm")


def test_dry_run_shows_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    source = draft(tmp_path / "d", "dflash", CONFIDENCE)
    before = files(source)
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--runtime", REGISTERED["dflash"], "--dry-run",
                   "--isolated", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "strategy drop-confidence-head" in done.stdout
    assert "[DSP350] drop confidence_head.proj.bias (model.safetensors)" in done.stdout
    dflash = vllm_minors("0.20.0")  # one verdict before and after on each: one folded row
    assert f"vllm {dflash[0]}-{dflash[-1]} fails (DSP350) -> loads" in " ".join(done.stdout.split())
    assert files(source) == before and not (tmp_path / "d-fixed").exists()


def test_a_markov_head_under_a_dflash_name_is_refused(tmp_path: Path) -> None:
    markov = {"markov_head.markov_w1.weight": np.zeros((T, 4), dtype=np.float32),
              "markov_head.markov_w2.weight": np.zeros((T, 4), dtype=np.float32)}
    draft(tmp_path / "d", "dflash", {**CONFIDENCE, **markov})
    out = fix_refused(tmp_path, "d", "--target-vocab-size", str(T), "--runtime", "vllm", "--strategy",
                      "drop-confidence-head")
    assert "drop-confidence-head does not apply: it also ships a Markov head" in out, out


def test_a_dspark_draft_keeps_its_confidence_head(tmp_path: Path) -> None:
    # the head as the class builds it: proj [1, hidden_size] (no confidence_head_with_markov), else the release
    # refuses its shape (the record's `appearing`, vLLM 0.34.0) and the refusal is another
    head = {"confidence_head.proj.weight": np.ones((1, 16), dtype=np.float32),
            "confidence_head.proj.bias": np.ones((1,), dtype=np.float32)}
    draft(tmp_path / "d", "qwen3-dspark", head, {"enable_confidence_head": True})
    done = run_cli("fix", "d", "--target-vocab-size", str(T), "--runtime", REGISTERED["qwen3-dspark"], "--strategy",
                   "drop-confidence-head", "--dry-run", "--isolated", cwd=tmp_path)
    assert "drop-confidence-head does not apply (it ships no confidence_head its architecture" in done.stdout, \
        done.stdout + done.stderr
