"""SGLang 0.4.x (docs/upstream-notes.md section 3.1): the releases that register a draft are listed from 0.4.2, and a
verdict on `sglang==0.4.X` is that release's own (registry, EAGLE-3 load path, refusal words)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import backbone_config, backbone_tensors, draft_tensors, run_cli
from sglang_support import EAGLE3_READY, Drafts, T, check, outcome

from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.release_model import generated_releases, modelled_release
from dspark_ckpt.runtimes.versions import SGLANG_POSTS_READ, SGLANG_RELEASES


@pytest.fixture
def drafts(tmp_path: Path) -> Drafts:
    return Drafts(tmp_path)


def test_the_04_releases_that_register_a_draft_are_listed_and_generated() -> None:
    """0.4.0-0.4.1.post1 register no draft; 0.4.1.post2-0.4.1.post6 do not import on CPU (left out)."""
    listed = [r for r in SGLANG_RELEASES if r.startswith("0.4.")]
    assert listed == ["0.4.2", "0.4.3", "0.4.3.post1", "0.4.4", "0.4.4.post2", "0.4.5", "0.4.6", "0.4.6.post5",
                      "0.4.7", "0.4.8", "0.4.9", "0.4.9.post5", "0.4.10"]
    assert set(listed) <= set(generated_releases("sglang"))
    assert not {"0.4.0", "0.4.1", "0.4.1.post2", "0.4.1.post6"} & {*SGLANG_RELEASES, *SGLANG_POSTS_READ}
    assert modelled_release("sglang", "0.4.6.post3") == "0.4.6"  # a post read as its base reads its data
    assert modelled_release("sglang", "0.4.1") is None


def eagle3(drafts: Drafts, d2t: bool, layer: str = "midlayer.") -> Path:
    """A pruned EAGLE-3 draft whose layer is named as SGLang's own exports name it (`midlayer.*`) or vLLM's."""
    backbone = backbone_tensors("eagle3-llama", {"hidden_size": 16, **backbone_config(16)})
    tensors = {name.replace("layers.0.", layer, 1): t for name, t in
               {**backbone, **draft_tensors(vocab=T, draft_vocab=64, target_vocab=T, d2t=d2t, markov=False)}.items()}
    return drafts(family="eagle3-llama", vocab=T, draft_vocab=64, markov=False, tensors=tensors,
                  config_extra={**EAGLE3_READY, "architectures": ["LlamaForCausalLMEagle3"]})


def test_an_eagle3_draft_without_d2t_on_0_4_x(drafts: Drafts) -> None:
    """0.4.4.post2-0.4.8.post1's worker calls get_hot_token_id() (eagle_worker.py:122 @ 0.4.4.post2); 0.4.9 reads
    hot_token_id only when set; before 0.4.4.post2 there is no LlamaForCausalLMEagle3."""
    path = eagle3(drafts, d2t=False)
    found = check(path, ["sglang==0.4.3", "sglang==0.4.5", "sglang==0.4.8.post1", "sglang==0.4.9"])
    assert outcome(found["0.4.3"]) == ("error", "DSP309")
    assert found["0.4.3"].error == m.E_SGLANG_UNSUPPORTED.format(arch="LlamaForCausalLMEagle3")
    assert outcome(found["0.4.5"]) == outcome(found["0.4.8.post1"]) == ("error", "DSP302")
    assert found["0.4.5"].error == "'LlamaForCausalLMEagle3' object has no attribute 'hot_token_id'"
    assert outcome(found["0.4.9"])[0] == "loads" and "DSP302" in found["0.4.9"].silent_codes
    with_d2t = check(eagle3(drafts, d2t=True), ["sglang==0.4.5", "sglang==0.4.9"])
    assert all(outcome(c)[0] == "loads" for c in with_d2t.values())


def test_layers_0_names_are_a_key_error_on_0_4_4_post2_to_0_4_8(drafts: Drafts) -> None:
    """LlamaForCausalLM.load_weights' stacked branch indexes params_dict unguarded (models/llama.py:505 @
    0.4.4.post2); 0.4.9 drops the names as 0.5.1 does (DSP346 as a silent finding)."""
    found = check(eagle3(drafts, d2t=True, layer="layers.0."), ["sglang==0.4.5", "sglang==0.4.9"])
    assert outcome(found["0.4.5"]) == ("error", "DSP346")
    assert found["0.4.5"].error == "'model.layers.0.mlp.gate_up_proj.weight'"
    assert outcome(found["0.4.9"])[0] == "loads" and "DSP346" in found["0.4.9"].silent_codes


def test_check_cli_on_sglang_0_4_5(drafts: Drafts, tmp_path: Path) -> None:
    path = eagle3(drafts, d2t=False)
    result = run_cli("check", str(path), "--target-vocab-size", str(T), "--runtime", "sglang==0.4.5", "--isolated",
                     cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "DSP302" in result.stdout and "hot_token_id" in result.stdout and "DSP220" not in result.stdout
