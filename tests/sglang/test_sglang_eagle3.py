"""SGLang's EAGLE-3 (models/llama_eagle3.py LlamaForCausalLMEagle3), release range by release range, on real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import backbone_config, backbone_tensors, draft_tensors
from sglang_support import ANY_LOADS, EAGLE3_READY, Drafts, T, check, edit_config, expect, outcome, releases

from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.release_model import generated_releases

ALL = ("0.4.2", "0.5.23")
# models/llama_eagle3.py is first shipped in 0.4.4.post2 (EntryClass :196): before it the name is unregistered.
UNREG = (("0.4.2", "0.4.4"), ("error", "DSP309"))
REG = ("0.4.4.post2", "0.5.23")
# 0.4.4.post2-0.4.8.post1: EAGLEWorker.__init__ calls get_hot_token_id(), whose attribute only a d2t sets
# (speculative/eagle_worker.py:122 @ 0.4.4.post2): a draft without d2t fails at start-up (DSP302).
HOT = ("0.4.4.post2", "0.4.8")
NO_D2T = ((HOT, ("error", "DSP302")),)
EMBED_REPLACED = "DSP307"  # the worker's set_embed replaces the draft's embed_tokens by the target's


def midlayer(config: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, np.ndarray]:
    """EAGLE-3 tensors named as SGLang's own exports name them (`midlayer.*`, loaded by every release), the layer
    complete (make_checkpoint's backbone, so the release's generated model finds every parameter filled; fc sized
    for the draft's `config`, its target_hidden_size included)."""
    backbone = backbone_tensors("eagle3-llama", {"hidden_size": 16, **backbone_config(16), **(config or {})})
    tensors = {**backbone, **draft_tensors(markov=False, **kwargs)}
    return {name.replace("layers.0.", "midlayer.", 1) if name.startswith("layers.0.") else name: t
            for name, t in tensors.items()}


def eagle(drafts: Drafts, *, config: dict[str, Any] | None = None, **kwargs: Any) -> Path:
    kwargs.setdefault("vocab", T)
    kwargs.setdefault("draft_vocab", 64)
    if "tensors" not in kwargs:
        kwargs["tensors"] = midlayer(config, vocab=kwargs["vocab"], draft_vocab=kwargs["draft_vocab"] or kwargs["vocab"],
                                     target_vocab=T, d2t=kwargs.pop("d2t", True), lm_head=kwargs.pop("lm_head", True),
                                     embed=kwargs.pop("embed", True))
    return drafts(family="eagle3-llama", markov=False, config_extra={**EAGLE3_READY, **(config or {})}, **kwargs)


@pytest.fixture
def drafts(tmp_path: Path) -> Drafts:
    return Drafts(tmp_path)


def test_a_pruned_draft_with_its_head_and_d2t_loads_everywhere(drafts: Drafts) -> None:
    """d2t becomes hot_token_id with no parameter; only the embedding is the target's."""
    expect(check(eagle(drafts)), {UNREG[0]: UNREG[1], REG: ("loads", frozenset({EMBED_REPLACED}))})


def test_layers_0_names_are_dropped_before_0_5_12(drafts: Drafts) -> None:
    """The vLLM / speculators spelling `layers.0.*` matches no parameter while the module is `midlayer`."""
    path = drafts(family="eagle3-llama", vocab=T, draft_vocab=64, d2t=True, markov=False, config_extra=EAGLE3_READY)
    found = check(path)
    # 0.5.8-0.5.11's generated model (the class built on CPU) names the midlayer parameters load_weights leaves
    # unfilled (models/llama_eagle3.py:254,264 @ 0.5.8: `model.layers.0.*` is no parameter, skipped without a word):
    # DSP363. 0.5.1-0.5.7's class is not built on CPU (vLLM's RMSNorm, layers/layernorm.py), so not judged so.
    # 0.4.4.post2-0.4.8.post1 hand `model.layers.0...` to LlamaForCausalLM.load_weights, whose stacked branch
    # indexes params_dict unguarded (models/llama.py:505 @ 0.4.4.post2): a KeyError, not a silent drop.
    expect(found, {UNREG[0]: UNREG[1], HOT: ("error", "DSP346"),
                   ("0.4.9", "0.5.7"): ("loads", frozenset({EMBED_REPLACED, "DSP346"})),
                   ("0.5.8", "0.5.11"): ("loads", frozenset({EMBED_REPLACED, "DSP346", "DSP363"})),
                   ("0.5.12", "0.5.23"): ("loads", frozenset({EMBED_REPLACED}))})
    assert found["0.4.8"].error == "'model.layers.0.mlp.gate_up_proj.weight'"
    assert "named layers.0.*, are dropped" in found["0.5.11"].silent[found["0.5.11"].silent_codes.index("DSP346")]


def test_more_than_one_layer_or_none_stated_is_refused_before_0_5_12(drafts: Drafts) -> None:
    two = eagle(drafts, config={"num_hidden_layers": 2})
    unstated = edit_config(eagle(drafts), num_hidden_layers=None)  # LlamaConfig's default: 32 layers
    # Where the release's generated model exists: LlamaModel builds config.num_hidden_layers layers
    # (models/llama_eagle3.py:202 @ 0.5.23) and the one-layer checkpoint fills only the first; the second keeps its
    # initial values (DSP363). An unstated count is transformers' default, which the samples do not cover: not judged.
    for path, judged in ((two, {"DSP363"}), (unstated, set())):
        found = check(path)
        expect(found, {UNREG[0]: UNREG[1], ("0.4.4.post2", "0.5.11"): ("error", "DSP341"),
                       ("0.5.12", "0.5.23"): ANY_LOADS})
        for version in releases("0.5.12", "0.5.23"):
            extra = judged if version in generated_releases("sglang") else set()
            assert outcome(found[version]) == ("loads", frozenset({EMBED_REPLACED} | extra)), version
        assert found["0.5.11"].error == m.E_EAGLE3_LAYERS == "EAGLE3 currently only supports 1 layer"
    assert "model.layers.1.input_layernorm.weight" in check(two)["0.5.23"].silent[-1]


def test_draft_vocab_size_absent(drafts: Drafts) -> None:
    """An AttributeError from transformers' config; a tied draft escapes it until 0.5.4.post2 reads it anyway."""
    untied = check(edit_config(eagle(drafts), draft_vocab_size=None))
    expect(untied, {UNREG[0]: UNREG[1], REG: ("error", "DSP342")})
    assert untied["0.5.1"].error == "'LlamaConfig' object has no attribute 'draft_vocab_size'"
    tied = check(edit_config(eagle(drafts, vocab=T, draft_vocab=T, config={"tie_word_embeddings": True}),
                             draft_vocab_size=None))
    expect(tied, {UNREG[0]: UNREG[1], ("0.4.4.post2", "0.5.4"): ("loads", frozenset({"DSP307"})),
                  ("0.5.4.post2", "0.5.23"): ("error", "DSP342")})


def test_draft_vocab_size_null(drafts: Drafts) -> None:
    """0.5.1: ParallelLMHead(None) is a TypeError; from 0.5.2 null means the target's head replaces the draft's."""
    path = eagle(drafts, vocab=T, draft_vocab=T, config={"draft_vocab_size": None})
    found = check(path)
    expect(found, {UNREG[0]: UNREG[1], ("0.4.4.post2", "0.5.1"): ("error", "DSP342"),
                   ("0.5.2", "0.5.23"): ("loads", frozenset({"DSP307"}))})
    assert found["0.5.1"].error == "unsupported operand type(s) for -: 'NoneType' and 'NoneType'"
    assert "own lm_head is replaced by the target's" in " ".join(found["0.5.2"].silent)


def test_tied_with_draft_vocab_size_null_fails_at_the_first_step_from_0_5_15(drafts: Drafts) -> None:
    """LogitsProcessor gets vocab_size None: `logits.shape[-1] > None` in _copy_logits_to_buffer from 0.5.15."""
    path = eagle(drafts, vocab=T, draft_vocab=T, d2t=False, config={"draft_vocab_size": None,
                                                                    "tie_word_embeddings": True})
    found = check(path)
    expect(found, {UNREG[0]: UNREG[1], **dict(NO_D2T), ("0.4.9", "0.5.14"): ("loads", frozenset({"DSP307"})),
                   ("0.5.15", "0.5.23"): ("first-step", "DSP342")})
    assert found["0.5.15"].first_step_error == "'>' not supported between instances of 'int' and 'NoneType'"


def test_an_integer_draft_vocab_size_keeps_its_own_uninitialised_head(drafts: Drafts) -> None:
    """No lm_head in the checkpoint: ParallelLMHead(D) stays torch.empty, also when D == T."""
    equal = check(eagle(drafts, vocab=T, draft_vocab=T, lm_head=False, d2t=False))
    expect(equal, {UNREG[0]: UNREG[1], **dict(NO_D2T),
                   ("0.4.9", "0.5.23"): ("loads", frozenset({EMBED_REPLACED, "DSP315"}))})
    pruned = check(eagle(drafts, lm_head=False))
    expect(pruned, {UNREG[0]: UNREG[1], REG: ("loads", frozenset({EMBED_REPLACED, "DSP301"}))})


def test_a_pruned_draft_without_d2t_proposes_draft_ids_as_target_ids(drafts: Drafts) -> None:
    found = check(eagle(drafts, d2t=False))
    expect(found, {UNREG[0]: UNREG[1], **dict(NO_D2T),
                   ("0.4.9", "0.5.23"): ("loads", frozenset({EMBED_REPLACED, "DSP302"}))})
    assert found["0.4.5"].error == m.E_SGLANG_NO_HOT_TOKEN
    assert found["0.4.5"].error == "'LlamaForCausalLMEagle3' object has no attribute 'hot_token_id'"


def test_a_short_d2t_fails_at_the_first_draft_step(drafts: Drafts) -> None:
    tensors = midlayer(vocab=T, draft_vocab=64, target_vocab=T, d2t=True)
    tensors["d2t"] = tensors["d2t"][:40]
    found = check(eagle(drafts, tensors=tensors))
    expect(found, {UNREG[0]: UNREG[1], REG: ("first-step", "DSP324")})
    # 0.5.12+: the release's own words, recorded by executing its step (the head's last id, 63, meets the lookup)
    assert "index 63 is out of bounds for dimension 0 with size 40" in (found["0.5.23"].first_step_error or "")
    assert "index 40 is out of bounds for dimension 0 with size 40" in (found["0.5.11"].first_step_error or "")


def test_the_crop_to_d_from_0_5_4_post2(drafts: Drafts) -> None:
    """Tied: the head is the (target's) embedding; its logits are cropped to V before 0.5.4.post2 and to D from
    it, so a d2t of D entries is indexed out of bounds before and fits from 0.5.4.post2."""
    found = check(eagle(drafts, config={"tie_word_embeddings": True}))
    expect(found, {UNREG[0]: UNREG[1], ("0.4.4.post2", "0.5.4"): ("first-step", "DSP324"),
                   ("0.5.4.post2", "0.5.23"): ("loads", frozenset({"DSP307"}))})


def test_row_asserts_quote_sglangs_message(drafts: Drafts) -> None:
    tensors = midlayer(vocab=T, draft_vocab=64, target_vocab=T, d2t=True)
    tensors["lm_head.weight"] = tensors["lm_head.weight"][:-1]
    head = check(eagle(drafts, tensors=tensors))
    expect(head, {UNREG[0]: UNREG[1], REG: ("error", "DSP320")})
    # 0.5.8+: the release's record judges the head, in its words with where and the two shapes
    assert head["0.5.23"].error.startswith("AssertionError: self.org_vocab_size=64 self.use_presharded_weights=False "
                                           "loaded_weight.shape[output_dim]=63 (lm_head.weight [63, 16], ")
    tensors["embed_tokens.weight"] = tensors["embed_tokens.weight"][:-2]  # sorts first: its assert fires first
    both = check(eagle(drafts, tensors=tensors))
    expect(both, {UNREG[0]: UNREG[1], REG: ("error", "DSP321")})
    assert both["0.5.1"].error == m.E_SGLANG_ROWS.format(expected=T, got=T - 2)


def test_a_padded_own_head_can_propose_ids_beyond_t(drafts: Drafts) -> None:
    path = eagle(drafts, vocab=128, draft_vocab=128, d2t=False)
    expect(check(path), {UNREG[0]: UNREG[1], **dict(NO_D2T),
                         ("0.4.9", "0.5.23"): ("loads", frozenset({EMBED_REPLACED, "DSP305"}))})


def test_a_kept_embedding_the_checkpoint_lacks_is_uninitialised(drafts: Drafts) -> None:
    """target_hidden_size != hidden_size: set_embed keeps the draft's own embed_tokens."""
    path = eagle(drafts, embed=False, config={"target_hidden_size": 32})
    expect(check(path), {UNREG[0]: UNREG[1], REG: ("loads", frozenset({"DSP347"}))})
    kept = eagle(drafts, config={"target_hidden_size": 32})
    expect(check(kept), {UNREG[0]: UNREG[1], REG: ("loads", frozenset())})


@pytest.mark.parametrize(("family", "arch"), [("eagle3-llama", "Eagle3LlamaForCausalLM"),
                                              ("eagle3-qwen3", "Eagle3Qwen3ForCausalLM"),
                                              ("eagle3-llama", "PeagleLlamaForCausalLM")])
def test_vllm_architecture_names_are_registered_in_no_release(drafts: Drafts, family: str, arch: str) -> None:
    path = drafts(family=family, vocab=T, draft_vocab=64, d2t=True, markov=False,
                  config_extra={**EAGLE3_READY, "architectures": [arch]})
    found = check(path)
    expect(found, {ALL: ("error", "DSP309")})
    assert found["0.5.12"].error == m.E_SGLANG_UNREGISTERED.format(arch=arch)
    assert found["0.5.12"].error.startswith(f"Cannot find model module. '{arch}' is not a registered model in the "
                                            "Transformers library")
    assert found["0.4.7"].error == found["0.5.12"].error
    # before 0.4.7 models/registry.py refuses it (:33), listing every class the release imported
    assert found["0.4.6"].error == m.E_SGLANG_UNSUPPORTED.format(arch=arch)
    assert found["0.4.6"].error.startswith(f"Model architectures ['{arch}'] are not supported for now.")


def test_speculators_configs_are_not_read(drafts: Drafts) -> None:
    """No release reads speculators_* keys: its architecture name is unknown, and even SGLang's own name does not
    make the nested sizes visible."""
    spec = {"speculators_model_type": "eagle3", "transformer_layer_config": {"model_type": "llama"}}
    named = check(eagle(drafts, config={**spec, "architectures": ["Eagle3Speculator"]}))
    expect(named, {ALL: ("error", "DSP309")})
    assert "'Eagle3Speculator' is not a registered model" in (named["0.5.23"].error or "")
    nested = {"speculators_model_type": "eagle3",
              "transformer_layer_config": {"model_type": "llama", "vocab_size": T, "hidden_size": 16}}
    renamed = check(edit_config(eagle(drafts, config=nested), vocab_size=None, hidden_size=None))
    expect(renamed, {UNREG[0]: UNREG[1], REG: ("error", "DSP348")})
    # With the sizes at the top level too, SGLang reads those and ignores the speculators keys.
    expect(check(eagle(drafts, config=spec)), {UNREG[0]: UNREG[1], REG: ("loads", frozenset({EMBED_REPLACED}))})


def test_the_rows_name_their_release_range_and_file(drafts: Drafts) -> None:
    found = check(eagle(drafts))
    for version in releases(*REG):
        source = found[version].source
        minor = ".".join(version.split(".")[:2])
        assert source.startswith(f"sglang {minor}.") and "sglang/srt/models/llama_eagle3.py" in source, source
    assert found["0.4.5"].source.startswith("sglang 0.4.4.post2-0.4.8.post1:")
    assert found["0.4.10"].source.startswith("sglang 0.4.9-0.4.10:")
    assert found["0.5.4.post2"].source.startswith("sglang 0.5.4.post2-0.5.11:")
    assert found["0.5.4"].source.startswith("sglang 0.5.2-0.5.4.post1:")
    assert outcome(found["0.5.4"]) == outcome(found["0.5.4.post2"])  # the crop only matters with a d2t < V
