"""Every parameter every release builds has exactly one judge (issue 40): landing.owner over every generated record.

Hermetic: reads the committed release data only (runtimes/release_data), never a wheel. For each built class of
each vLLM and SGLang release folder, the family whose vocab contract would describe a draft of it (as the builders
pick it: model/families.family_for with the model_type the record was built with), and for each parameter the
evaluators that claim it: the vocab contract claims the vocabulary parameters it judges (landing.CONTRACT_LEAVES),
the aux-state model the fc of the classes it reads (records.AUX_FAMILIES), the landing every parameter it does not
skip. Exactly one claim per parameter, and the claim is the one `owner()` names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from dspark_ckpt.model.families import Family, family_for
from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.landing import Owner, owner
from dspark_ckpt.runtimes.records import AUX_FAMILIES
from dspark_ckpt.runtimes.release_model import (
    ArchitectureModel,
    architecture_model,
    generated_releases,
    release_record,
)

RUNTIMES = ("vllm", "sglang")


def built(runtime: str) -> Iterator[tuple[str, ArchitectureModel, Family | None]]:
    for release in generated_releases(runtime):
        record = release_record(runtime, release)
        assert record is not None
        for architecture in record["architectures"]:
            model = architecture_model(runtime, release, architecture)
            if model is None or model.not_built is not None:
                continue
            model_type = model.config_type[0] if model.config_type is not None else None
            yield release, model, family_for(architecture, model_type)


def claims(model: ArchitectureModel, parameter: str, family: Family | None) -> list[Owner]:
    """Which evaluators judge this parameter, each by its own reading of the class (not by owner())."""
    exprs = model.parameters[parameter]
    out: list[Owner] = []
    # the vocab contract (runtimes/compatibility.py, sglang_eval.py): lm_head, the embedding, d2t of a family, and
    # in SGLang the Markov head (sglang_eval.py reports one missing, DSP345)
    leaves = [["lm_head", "weight"], ["embed_tokens", "weight"], ["word_embeddings", "weight"],
              ["draft_id_to_target_id"]]
    if model.runtime == "sglang":
        leaves += [["markov_w1", "weight"], ["markov_w2", "weight"]]
    if family is not None and landing.vocab_parameter(parameter, exprs) and parameter.rsplit(".", 2)[-2:] in leaves:
        out.append(Owner.VOCAB)
    # the aux-state model (runtimes/eagle3_aux.py, eagle3_aux_sglang.py): fc.weight of an EAGLE-3 family
    if family in AUX_FAMILIES and parameter.rsplit(".", 2)[-2:] == ["fc", "weight"]:
        out.append(Owner.AUX)
    # the landing: what _landings does not skip by owner()
    if owner(model, parameter, family) is Owner.LANDING:
        out.append(Owner.LANDING)
    return out


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_every_built_parameter_has_exactly_one_owner(runtime: str) -> None:
    problems: list[str] = []
    counts: Counter[Owner] = Counter()
    for release, model, family in built(runtime):
        for parameter in model.parameters:
            found = claims(model, parameter, family)
            if len(found) != 1:
                problems.append(f"{runtime}-{release} {model.name} {parameter}: {[str(o) for o in found] or 'none'}")
            elif found[0] is not owner(model, parameter, family):
                problems.append(f"{runtime}-{release} {model.name} {parameter}: claimed by {found[0]}, "
                                f"owner() names {owner(model, parameter, family)}")
            counts.update(found[:1])
    assert not problems, "\n".join(problems[:20])
    assert counts[Owner.LANDING] > 0 and counts[Owner.VOCAB] > 0 and counts[Owner.AUX] > 0
    print(runtime, {str(k): v for k, v in sorted(counts.items())})


def test_fc_is_judged_for_every_class_the_aux_model_does_not_read() -> None:
    """The gap of issue 40: fc of DFlash, DSpark and DFlash2 was skipped by the landing for every class although the
    aux-state model reads only the EAGLE-3 ones."""
    for arch, family in (("DFlashDraftModel", Family.DFLASH), ("Qwen3DSparkModel", Family.QWEN3_DSPARK),
                         ("DFlash2DraftModel", Family.DFLASH2), ("Eagle3DeepseekV2ForCausalLM", None)):
        model = architecture_model("vllm", "0.33.0", arch)
        assert model is not None
        assert owner(model, "model.fc.weight", family) is Owner.LANDING, arch
    eagle3 = architecture_model("vllm", "0.33.0", "Eagle3LlamaForCausalLM")
    assert eagle3 is not None and owner(eagle3, "model.fc.weight", Family.EAGLE3_LLAMA) is Owner.AUX


def test_the_markov_head_is_the_landings_and_the_vocab_contract_keeps_what_the_target_may_fill() -> None:
    model = architecture_model("vllm", "0.33.0", "Qwen3DSparkModel")
    assert model is not None
    assert owner(model, "model.markov_head.markov_w1.weight", Family.QWEN3_DSPARK) is Owner.LANDING
    sglang = architecture_model("sglang", "0.5.23", "Qwen3DSparkModel")
    assert sglang is not None  # SGLang's contract judges it whole (sglang_eval.py DSP345)
    assert owner(sglang, "markov_head.markov_w1.weight", Family.QWEN3_DSPARK) is Owner.VOCAB
    for parameter in ("lm_head.weight", "model.embed_tokens.weight", "draft_id_to_target_id"):
        assert owner(model, parameter, Family.QWEN3_DSPARK) is Owner.VOCAB
        assert owner(model, parameter, None) is Owner.LANDING  # no contract: the generated verdict judges it


def test_the_aux_families_are_the_records() -> None:
    assert landing.AUX_FAMILIES == AUX_FAMILIES


def test_a_class_no_family_describes_has_its_d2t_judged_where_the_release_builds_it() -> None:
    """The generated verdict's landing owns the vocabulary too: vLLM builds draft_id_to_target_id where D differs
    from T and nothing but the checkpoint writes it, so a pruned draft without one keeps it as initialised; where D
    equals T it is not built, and lm_head/embed_tokens, which the target may fill, are never reported missing."""
    from conftest import backbone_config, layout_checkpoint

    from dspark_ckpt.runtimes.landing import land, variables

    model = architecture_model("vllm", "0.33.0", "Eagle3DeepseekV2ForCausalLM")
    assert model is not None
    config = {"architectures": [model.name], "model_type": "deepseek_v2", "hidden_size": 16, "vocab_size": 96,
              "draft_vocab_size": 48, **backbone_config(16), "kv_lora_rank": 8, "q_lora_rank": 8,
              "qk_nope_head_dim": 4, "qk_rope_head_dim": 4, "v_head_dim": 4}  # DeepSeek's MLA sizes
    shapes = layout_checkpoint(model, variables(model, config, target_hidden=16, target_vocab=96), {"d2t": (48,)})
    assert shapes is not None and "d2t" in shapes
    assert land(model, config, shapes, target_hidden=16, target_vocab=96, family=None) == ()
    without = {n: s for n, s in shapes.items() if n not in ("d2t", "lm_head.weight", "embed_tokens.weight")}
    found = land(model, config, without, target_hidden=16, target_vocab=96, family=None)
    assert [(p.kind, p.parameter) for p in found] == [("unfilled", "draft_id_to_target_id")]
    equal = {**config, "draft_vocab_size": 96}
    assert land(model, equal, {n: s for n, s in without.items()}, target_hidden=16, target_vocab=96,
                family=None) == ()
