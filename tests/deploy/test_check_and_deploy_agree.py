"""check and the deploy preflight read one record per vLLM release (runtimes/vllm_release.py) and replay the same
registry lookup (runtimes/vllm_hf_config.py): in one report they never disagree on whether the release resolves the
draft's architecture. Before that was one model, an architecture no registry maps was "not supported" for check
(DSP309) and "starts" for the deploy preflight, whose registry knew only the drafts it modelled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, write_safetensors
from listed import vllm_before

from dspark_ckpt.runtimes import vllm_release
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

H = 8
LLAMA = {"model_type": "llama", "vocab_size": 96, "hidden_size": H, "num_hidden_layers": 1, "num_attention_heads": 2,
         "num_key_value_heads": 2, "intermediate_size": 16, "max_position_embeddings": 4096}
# (architecture, method): a name no release maps, a target model every release maps (served as draft_model), a
# draft class every listed release registers, and the EAGLE-3 rename of a name no release maps.
CASES = [("FooDraftModel", "eagle3"), ("Qwen2ForCausalLM", "draft_model"), ("Eagle3LlamaForCausalLM", "eagle3"),
         ("LlamaForCausalLMEagle3", "eagle3"), ("MyDraftForCausalLM", "dflash")]


def _draft(root: Path, arch: str) -> Path:
    import numpy as np

    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps({"architectures": [arch], **LLAMA}))
    write_safetensors(root / "model.safetensors", {"lm_head.weight": np.zeros((96, H), dtype=np.float16)})
    return root


def _report(draft: Path, method: str) -> dict[str, Any]:
    spec = json.dumps({"method": method, "model": str(draft), "num_speculative_tokens": 3})
    runtimes = [a for v in VLLM_RELEASES for a in ("--runtime", f"vllm=={v}")]
    result = run_cli("check", str(draft), "--target-vocab-size", "96", "--isolated", "--format", "json",
                     "--speculative-config", spec, *runtimes)
    assert result.returncode in (0, 1), result.stderr
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    found: dict[str, Any] = checkpoint
    return found


@pytest.mark.parametrize(("arch", "method"), CASES)
def test_check_and_deploy_resolve_the_architecture_alike(tmp_path: Path, arch: str, method: str) -> None:
    checkpoint = _report(_draft(tmp_path / arch, arch), method)
    check = {r["version"]: r for r in checkpoint["compatibility"] if r["runtime"] == "vllm"}
    deploy = {r["version"]: r for r in checkpoint["deploy"]["runtimes"]}
    assert set(deploy) == set(VLLM_RELEASES)
    assert set(check) == set(VLLM_RELEASES) or "DSP231" in {f["code"] for f in checkpoint["findings"]}
    for version in VLLM_RELEASES:
        mapped = vllm_release.RELEASE_RULES[version].registers(arch)
        if method == "dflash" and version in vllm_before("0.20.0"):
            # no "dflash" in SpeculativeMethod before 0.20 (speculative.py L52-60 @ v0.19.1): pydantic refuses the
            # method before __post_init__ builds the draft's ModelConfig, so the deploy never looks up the name
            assert deploy[version].get("error_code") == "DSP804", (version, deploy[version])
            continue
        if version not in check:  # a target model, not a draft (DSP231): check gives no load verdict
            assert mapped and deploy[version].get("error_code") != "DSP809", (version, deploy[version])
            continue
        check_refuses = check[version].get("error_code") == "DSP309" and "not supported" in str(check[version]["error"])
        deploy_refuses = deploy[version].get("error_code") == "DSP809"
        assert check_refuses is deploy_refuses, (version, check[version], deploy[version])
        if not mapped:  # the name itself is refused, before any rename
            assert check_refuses and f"['{arch}']" in deploy[version]["error"], (version, deploy[version])
