"""`check` on a real DFlash / EAGLE-3 checkpoint that ships a Markov head (issues 11/12/17): vLLM refuses the
tensor by name (DSP350, the runtime's own words), SGLang skips it (DSP351)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli

from dspark_ckpt.runtimes import messages as m

T = 96
BACKBONES = {"dflash": "DFlashQwen3Model", "eagle3-llama": "LlamaModel", "eagle3-qwen3": "Qwen3Eagle3Model"}


@pytest.mark.parametrize("family", list(BACKBONES))
def test_cli_check_predicts_the_load_failure(tmp_path: Path, family: str) -> None:
    """The real CLI on a real safetensors checkpoint: exit 1, DSP350 naming the backbone in vLLM's own words."""
    path = make_checkpoint(tmp_path / "draft", family=family, vocab=T, draft_vocab=T, target_vocab=T)
    result = run_cli("check", str(path), "--target-vocab-size", str(T), "--runtime", "vllm==0.33.0",
                     "--runtime", "sglang==0.5.23", "--format", "json")
    assert result.returncode == 1, result.stderr
    (ckpt,) = json.loads(result.stdout)["checkpoints"]
    vllm, sglang = ckpt["compatibility"]
    stray = m.E_STRAY_HEAD.format(name="markov_head", cls=BACKBONES[family])
    assert (vllm["loads"], vllm["error_code"], vllm["error"]) == (False, "DSP350", stray)
    assert stray.startswith("There is no module or parameter named 'markov_head' in ")
    codes = {f["code"]: f for f in ckpt["findings"]}
    assert codes["DSP350"]["severity"] == "error" and "vllm==0.33.0" in codes["DSP350"]["message"]
    if family == "eagle3-qwen3":  # SGLang registers no Eagle3Qwen3ForCausalLM: it never reaches the weights
        assert not sglang["loads"] and sglang["error_code"] == "DSP309"
        return
    assert sglang["loads"] and "DSP351" in sglang["silent_codes"]
    assert codes["DSP351"]["severity"] == "info"


def test_cli_check_passes_the_realistic_export(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "draft", family="dflash", vocab=T, draft_vocab=T, target_vocab=T, markov=False)
    result = run_cli("check", str(path), "--target-vocab-size", str(T), "--runtime", "vllm==0.33.0",
                     "--format", "json")
    (ckpt,) = json.loads(result.stdout)["checkpoints"]
    assert ckpt["compatibility"][0]["loads"] and "DSP350" not in {f["code"] for f in ckpt["findings"]}


def test_explain_shows_the_new_codes() -> None:
    for code, slug in (("DSP350", "head-without-parameter"), ("DSP351", "head-dropped")):
        explained = run_cli("explain", code)
        assert explained.returncode == 0 and slug in explained.stdout
        for section in ("What it means", "Why it matters", "Example", "How to fix"):
            assert section in explained.stdout, (code, section)
