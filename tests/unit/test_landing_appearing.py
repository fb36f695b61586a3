"""The shape of a parameter a structural key's value makes appear (issue 40 item 4), judged from the committed SGLang
0.5.23 record of DSparkDraftModel (`structural.<key>.appearing`, `values.<name>.appearing`): what the release builds
at the draft's values, and its loader's words one row or column off; a record without the field leaves the shape
unjudged, as before, and the presence stays judged either way."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from conftest import layout_checkpoint

from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.release_model import ArchitectureModel, architecture_model

H, R, V = 16, 4, 128
CONFIG: dict[str, Any] = {"architectures": ["DSparkDraftModel"], "model_type": "qwen3", "hidden_size": H,
                          "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 24,
                          "vocab_size": V, "num_hidden_layers": 1, "markov_rank": R, "markov_head_type": "vanilla",
                          "mask_token_id": 0, "projector_type": "domino", "shift_label": True,
                          "pure_draft_prefix_len": 1, "gru_hidden_dim": 5, "emb_dim": 7}
GATE, JOINT = "markov_head.gate_proj", "markov_head.joint_proj"


def _model(release: str = "0.5.23", arch: str = "DSparkDraftModel") -> ArchitectureModel:
    found = architecture_model("sglang", release, arch)
    assert found is not None and found.not_built is None
    return found


def _land(model: ArchitectureModel, config: dict[str, Any], extra: dict[str, tuple[int, ...]]) -> list[landing.Landing]:
    values = landing.variables(model, config, target_hidden=H, target_vocab=V)
    tensors = layout_checkpoint(model, values, config=config)
    assert tensors is not None
    return list(landing.land(model, config, {**tensors, **extra}, target_hidden=H, target_vocab=V, family=None))


def _texts(found: list[landing.Landing]) -> list[tuple[str, str | None, str]]:
    return [(f.kind, f.tensor or f.parameter, f.text) for f in found]


def test_the_record_holds_what_each_value_makes_appear_as_expressions_of_the_config() -> None:
    model = _model()
    gated, rnn = model.appearing[("markov_head_type", "gated")], model.appearing[("markov_head_type", "rnn")]
    bias = model.appearing[("attention_bias", True)]
    assert [e.text for e in gated.parameters[f"{GATE}.weight"] if e] == ["markov_rank", "hidden_size + markov_rank"]
    assert [e.text for e in rnn.parameters[f"{JOINT}.weight"] if e] == ["3*markov_rank",
                                                                        "hidden_size + 2*markov_rank"]
    assert [e.text for e in bias.parameters["layers.{i}.self_attn.qkv_proj.bias"] if e] == [
        "head_dim*num_attention_heads + 2*head_dim*num_key_value_heads"]
    # a checkpoint's q_proj.bias lands on the stacked qkv_proj.bias, at its own length
    q = bias.tensors["layers.{i}.self_attn.q_proj.bias"]
    assert q.parameter == "layers.{i}.self_attn.qkv_proj.bias"
    assert [e.text for e in q.shape or () if e] == ["head_dim*num_attention_heads"]
    # the loader's own words one row short, with the line of this release's file
    short = gated.tensors[f"{GATE}.weight"].off_by_one["0-"]
    assert short.raises == "AssertionError" and "Attempted to load weight ({got}) into parameter ({want})" in short.message
    assert short.where.startswith("sglang/srt/model_loader/weight_utils.py:")
    # the values the base builds, and the names no sample had, carry none
    assert ("markov_head_type", "vanilla") not in model.appearing and ("markov_head_type", "lstm") not in model.appearing


def test_an_appearing_tensor_shipped_right_lands_and_one_left_out_is_unfilled() -> None:
    model = _model()
    gated = {**CONFIG, "markov_head_type": "gated"}
    assert _land(model, gated, {f"{GATE}.weight": (R, H + R), f"{GATE}.bias": (R,)}) == []
    rnn = {**CONFIG, "markov_head_type": "rnn"}
    assert _land(model, rnn, {f"{JOINT}.weight": (3 * R, H + 2 * R), f"{JOINT}.bias": (3 * R,)}) == []
    found = _land(model, gated, {})
    assert {(f.kind, f.parameter) for f in found} == {("unfilled", f"{GATE}.weight"), ("unfilled", f"{GATE}.bias")}


@pytest.mark.parametrize(("key", "value", "tensor", "shape", "words"), [
    ("markov_head_type", "gated", f"{GATE}.weight", (R - 1, H + R),
     "AssertionError: Attempted to load weight (torch.Size([3, 20])) into parameter (torch.Size([4, 20]))"),
    ("markov_head_type", "rnn", f"{JOINT}.weight", (3 * R, H + 2 * R - 1),
     "AssertionError: Attempted to load weight (torch.Size([12, 23])) into parameter (torch.Size([12, 24]))"),
    # the CUDA branch of SGLang's QKV loader narrows a shard: torch's words, as the record observed them
    ("attention_bias", True, "layers.0.self_attn.q_proj.bias", (15,),
     "RuntimeError: start (0) + length (16) exceeds dimension size (15)."),
    ("attention_bias", True, "layers.0.self_attn.o_proj.bias", (17,),
     "AssertionError: param_data.shape=torch.Size([16]) loaded_weight.shape=torch.Size([17])"),
])
def test_an_appearing_tensor_of_another_shape_raises_in_the_releases_words(key: str, value: Any, tensor: str,
                                                                           shape: tuple[int, ...], words: str) -> None:
    model = _model()
    config = {**CONFIG, key: value}
    right = {f"{GATE}.weight": (R, H + R), f"{GATE}.bias": (R,)} if value == "gated" else \
        {f"{JOINT}.weight": (3 * R, H + 2 * R), f"{JOINT}.bias": (3 * R,)} if value == "rnn" else \
        {f"layers.0.self_attn.{p}_proj.bias": (n,) for p, n in (("q", 16), ("k", 8), ("v", 8), ("o", H))}
    assert _land(model, config, right) == []
    first, *_ = found = _land(model, config, {**right, tensor: shape})
    assert first.kind == "shape" and first.raises and first.tensor == tensor, _texts(found)
    assert first.text.startswith(words), first.text
    (record,) = landing.appeared(model, config)  # what the value makes appear is judged, not left unjudged
    assert record.parameters and not set(record.parameters) & landing._unjudged(model, config)


def test_a_record_without_appearing_leaves_the_shape_unjudged_and_the_presence_judged() -> None:
    """A record generated before the field (every committed record now holds it: vLLM 0.23.0's DFlash, the field
    taken away, stands for one): a q_proj.bias a row short under `attention_bias` is not judged; the biases left out
    still are."""
    found = architecture_model("vllm", "0.23.0", "DFlashDraftModel")
    assert found is not None and found.not_built is None and found.appearing
    model = dataclasses.replace(found, appearing={})
    assert "appears" in model.structural["attention_bias"]
    config = {key: CONFIG[key] for key in ("model_type", "hidden_size", "num_attention_heads", "num_key_value_heads",
                                           "head_dim", "intermediate_size", "vocab_size", "num_hidden_layers")}
    config |= {"architectures": ["DFlashDraftModel"], "attention_bias": True}
    assert landing.appeared(model, config) == ()
    assert "model.layers.{i}.self_attn.qkv_proj.bias" in landing._unjudged(model, config)
    values = landing.variables(model, config, target_hidden=H, target_vocab=V)
    tensors = layout_checkpoint(model, values, config=config)
    assert tensors is not None
    short = {f"layers.0.self_attn.{p}_proj.bias": (n,) for p, n in (("q", 15), ("k", 8), ("v", 8), ("o", H))}
    assert landing.land(model, config, {**tensors, **short}, target_hidden=H, target_vocab=V, family=None) == ()
    left_out = landing.land(model, config, tensors, target_hidden=H, target_vocab=V, family=None)
    assert {f.parameter for f in left_out if f.kind == "unfilled"} == {"model.layers.0.self_attn.qkv_proj.bias",
                                                                      "model.layers.0.self_attn.o_proj.bias"}


def test_verifys_torch_loader_reads_the_same_record() -> None:
    pytest.importorskip("torch")
    from dspark_ckpt.verify.landing_load import against_check, load_landing

    model = _model()
    config = {**CONFIG, "markov_head_type": "gated"}
    values = landing.variables(model, config, target_hidden=H, target_vocab=V)
    tensors = layout_checkpoint(model, values, config=config)
    assert tensors is not None
    for gate in ((R, H + R), (R - 1, H + R)):
        shapes = {**tensors, f"{GATE}.weight": gate, f"{GATE}.bias": (R,)}
        run = load_landing(model, "sglang", "0.5.23", config, shapes, sorted(shapes), target_hidden=H,
                           target_vocab=V)
        found = landing.land(model, config, shapes, target_hidden=H, target_vocab=V, family=None)
        assert run.refused == (() if gate[0] == R else (f"{GATE}.weight",))
        assert against_check(run, found) is None


def test_a_key_read_only_at_that_value_that_moves_what_appears_leaves_its_shape_unjudged() -> None:
    """vLLM 0.34.0's DSpark confidence head (`enable_confidence_head`): its proj is [1, hidden_size] as recorded,
    and [1, hidden_size + markov_rank] with `confidence_head_with_markov` (read only when the head is on: the
    record's `moved_by`), which the record's shapes do not hold: unjudged there, never a false refusal."""
    model = architecture_model("vllm", "0.34.0", "Qwen3DSparkModel")
    assert model is not None and model.not_built is None
    record = model.appearing[("enable_confidence_head", True)]
    assert "confidence_head_with_markov" in record.moved_by
    config = {"architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "hidden_size": H, "num_attention_heads": 2,
              "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 24, "vocab_size": V,
              "draft_vocab_size": V, "num_hidden_layers": 1, "markov_rank": R, "mask_token_id": 0,
              "target_layer_ids": [0], "enable_confidence_head": True}
    assert landing.appeared(model, config) == (record,)
    with_markov = {**config, "confidence_head_with_markov": True}
    assert landing.appeared(model, with_markov) == ()
    values = landing.variables(model, config, target_hidden=H, target_vocab=V)
    tensors = layout_checkpoint(model, values, {"d2t": (V,)}, config=config)
    assert tensors is not None
    del tensors["d2t"]  # D == T: no mapping parameter to fill
    head = {"confidence_head.proj.bias": (1,)}

    def refused(cfg: dict[str, Any], width: int) -> list[str]:
        found = landing.land(model, cfg, {**tensors, **head, "confidence_head.proj.weight": (1, width)},
                             target_hidden=H, target_vocab=V, family=None)
        return [f.text for f in found if f.kind == "shape" and f.raises]

    assert refused(config, H) == [] and refused(with_markov, H + R) == []
    (words,) = refused(config, H + R)
    assert words.startswith("AssertionError: Tried to load weights of size torch.Size([1, 20])to a parameter of size "
                            "torch.Size([1, 16])"), words
