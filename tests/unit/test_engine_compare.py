"""verify/engine.py's comparison of the installed vLLM's own load with check's whole verdict (vocab contract and
the generated release model's landing, DSP360-363), on vLLM 0.33.0's real record of EAGLE-1 Llama and on records
deliberately wrong about it. The observations are in vLLM 0.33.0's own words (tests/acceptance/
test_verify_engine_architectures.py runs the release for them)."""

from __future__ import annotations

import dataclasses
from typing import Any

from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.release_verdict import landing_issues
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.records import Verdict
from dspark_ckpt.runtimes.release_model import ArchitectureModel, architecture_model
from dspark_ckpt.verify.engine import Landed, Observed, disagreement, observed_code

ARCH = "EagleLlamaForCausalLM"
CONFIG = {"architectures": [ARCH], "model_type": "llama", "hidden_size": 16, "num_attention_heads": 2,
          "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 24, "vocab_size": 128,
          "num_hidden_layers": 1}
TENSORS: dict[str, tuple[int, ...]] = {
    "embed_tokens.weight": (128, 16), "fc.weight": (16, 32), "layers.0.mlp.down_proj.weight": (16, 24),
    "layers.0.mlp.gate_proj.weight": (24, 16), "layers.0.mlp.up_proj.weight": (24, 16),
    "layers.0.post_attention_layernorm.weight": (16,), "layers.0.self_attn.k_proj.weight": (8, 16),
    "layers.0.self_attn.o_proj.weight": (16, 16), "layers.0.self_attn.q_proj.weight": (16, 16),
    "layers.0.self_attn.v_proj.weight": (8, 16)}
STRAY = ("There is no module or parameter named 'layers.0.stray_norm' in LlamaModel. The available parameters "
         "belonging to  (LlamaModel) are: {'embed_tokens.weight', 'layers.0.self_attn.qkv_proj.weight'}")


def _model() -> ArchitectureModel:
    model = architecture_model("vllm", "0.33.0", ARCH)
    assert model is not None and model.not_built is None
    return model


def _check(model: ArchitectureModel, tensors: dict[str, tuple[int, ...]]) -> tuple[Verdict, Landed]:
    """check's verdict as a generated one is made (runtimes/generated_verdict.py), and its landing."""
    found = landing.land(model, CONFIG, tensors, target_hidden=16, target_vocab=128, family=None)
    error, silent = landing_issues(found, model.cls)
    contract = Contract("vllm", "0.33.0", "0.33.0", None, ARCH, "test")
    return Verdict("vllm", "0.33.0", contract, error, silent), Landed(model, found)


def _seen(*, error: str | None = None, **observed: Any) -> Observed:
    return Observed(True, ARCH, "vllm.model_executor.models.llama_eagle.EagleLlamaForCausalLM",
                    "load_weights", "ValueError" if error else None, error, {}, **observed)


def test_agrees_where_vllm_did_what_the_record_says() -> None:
    said, landed = _check(_model(), TENSORS)
    assert said.loads and not landed.unfilled and not landed.cut
    # the vocabulary parameters vLLM leaves to the target (no lm_head tensor) are the vocab contract's, not landing's
    assert disagreement(_seen(unwritten=("lm_head.weight",)), said, None, landed) is None


def test_a_parameter_vllm_left_unwritten_that_check_fills_is_dsp605() -> None:
    said, landed = _check(_model(), TENSORS)
    why = disagreement(_seen(unwritten=("model.layers.0.mlp.down_proj.weight",)), said, None, landed)
    assert why == ("vLLM's load_weights left model.layers.0.mlp.down_proj.weight unwritten, check predicts none "
                   "(DSP363)")
    missing = {n: s for n, s in TENSORS.items() if n != "layers.0.mlp.down_proj.weight"}
    said, landed = _check(_model(), missing)
    assert landed.unfilled == {"model.layers.0.mlp.down_proj.weight"}
    assert disagreement(_seen(unwritten=("model.layers.0.mlp.down_proj.weight",)), said, None, landed) is None
    assert "check predicts model.layers.0.mlp.down_proj.weight (DSP363)" in (
        disagreement(_seen(), said, None, landed) or "")


def test_a_cut_check_does_not_predict_is_dsp605() -> None:
    wider = {**TENSORS, "layers.0.mlp.down_proj.weight": (16, 25)}
    said, landed = _check(_model(), wider)
    assert landed.cut == {"layers.0.mlp.down_proj.weight"} and said.loads
    assert disagreement(_seen(cut=("layers.0.mlp.down_proj.weight",)), said, None, landed) is None
    assert disagreement(_seen(), said, None, landed) == (
        "vLLM cut none to fit, check predicts layers.0.mlp.down_proj.weight (DSP362)")


def test_error_words_against_the_landings_error() -> None:
    said, _ = _check(_model(), {**TENSORS, "layers.0.stray_norm.weight": (4,)})
    assert said.error is not None and said.error.code == "DSP360"
    seen = _seen(error=STRAY)
    assert disagreement(seen, said, None) is None and observed_code(seen, said) == "DSP360"
    other = _seen(error="There is no module or parameter named 'layers.0.other' in LlamaModel.")
    assert disagreement(other, said, None).startswith("vLLM raised ValueError: There is no module")  # type: ignore
    assert observed_code(other, said) == "DSP607"
    assert disagreement(_seen(), said, None) == f"vLLM loads it, check predicts DSP360: {said.error.text}"


def test_a_wrong_record_disagrees_with_the_release() -> None:
    """A record that says the release skips names it has no parameter for: check predicts the stray tensor loads,
    vLLM 0.33.0 refuses it (its words as it raised them)."""
    real = _model()
    wrong = dataclasses.replace(real, unknown={k: dataclasses.replace(v, raises=None) for k, v in real.unknown.items()})
    tensors = {**TENSORS, "layers.0.stray_norm.weight": (4,)}
    said, landed = _check(wrong, tensors)
    assert said.loads
    assert disagreement(_seen(error=STRAY), said, None, landed) == f"vLLM raised ValueError: {STRAY}; check predicts " \
        "it loads"
    right, _ = _check(real, tensors)
    assert disagreement(_seen(error=STRAY), right, None) is None


# The release's own first draft step (verify/engine_vllm.py run_first_step), as vLLM 0.30.0 answered it for an
# EAGLE-3 Llama draft with V = 128 > D = T = 96 (tests/data/observed/engine/test_installed_engine_runs_the_first_
# draft_step.json), against what check says of that step.
RAISED = {"raises": "AssertionError", "text": "Expected logits to have shape (*, 128), but got torch.Size([2, 96])",
          "where": "vllm/model_executor/models/llama_eagle3.py:379"}
WORDS = "AssertionError: Expected logits to have shape (*, 128), but got torch.Size([2, 96])"


def _stepped(**step: Any) -> Observed:
    return Observed(True, "LlamaForCausalLMEagle3", "vllm.model_executor.models.llama_eagle3.Eagle3LlamaForCausalLM",
                    None, None, None, {}, first_step={"family": "eagle3-llama", **step})


def test_the_first_step_the_release_ran_replaces_checks_and_is_compared() -> None:
    from dspark_ckpt.verify.engine import StepSaid, _first_step, step_disagreement

    failed, ran = _stepped(capture=RAISED, last=RAISED), _stepped(capture="ok", last="ok")
    assert failed.step_error == WORDS and ran.step_error is None
    said, silent = StepSaid(WORDS, "DSP371"), StepSaid()
    assert _first_step(failed, said) == StepSaid(WORDS, "DSP371") and step_disagreement(failed, said) is None
    assert _first_step(failed, silent) == StepSaid(WORDS, "DSP371")  # the release's answer, even unpredicted
    assert step_disagreement(failed, silent) == f"vLLM's first draft step raised {WORDS}; check predicts it runs"
    assert _first_step(ran, said) == StepSaid() and step_disagreement(ran, said) == \
        f"vLLM's first draft step ran; check predicts DSP371: {WORDS}"
    # a first-step finding of the layers before the head (DSP329: the aux hidden states' fc) is not the step's
    fc = StepSaid("the fc takes 48 columns", "DSP329", False)
    assert _first_step(ran, fc) == fc and step_disagreement(ran, fc) is None
    # only the last id's step raised: that is the failure
    assert _stepped(capture="ok", last=RAISED).step_error == WORDS


def test_a_first_step_not_run_leaves_checks_answer() -> None:
    from dspark_ckpt.verify.engine import StepSaid, _first_step, step_disagreement

    seen = Observed(True, "LlamaForCausalLMEagle3", "m.C", None, None, None, {},
                    first_step={"not_run": "this vLLM shares the target's head inside the proposer's load_model"})
    said = StepSaid(WORDS, "DSP371")
    assert not seen.stepped and _first_step(seen, said) == said and step_disagreement(seen, said) is None
    refused = dataclasses.replace(seen, error="ValueError: no", error_type="ValueError",
                                  first_step={"family": "eagle3-llama", "capture": RAISED, "last": RAISED})
    assert not refused.stepped and _first_step(refused, said) == StepSaid()  # it never loaded: no step
