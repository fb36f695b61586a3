"""The one evaluation pass visits every parameter every release builds once, with at most one annotation (issue 40).

Hermetic: reads the committed release data only (runtimes/release_data), never a wheel. For each built class of each
vLLM and SGLang release folder, under the family whose vocab contract would describe a draft of it (as the builders
pick it: model/families.family_for with the model_type the record was built with) and under none (the generated
verdict): the pass's plan holds each parameter of the record exactly once, no parameter matches two annotation rows,
and every annotation row names a parameter some record of its runtime builds (the hand-read facts are tied to the
generated data, not to names nobody builds).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import built_models

from dspark_ckpt.model.families import Family, family_for
from dspark_ckpt.runtimes import parameter_pass
from dspark_ckpt.runtimes.parameter_pass import (
    ANNOTATIONS,
    Annotation,
    Facet,
    annotations_of,
    judgement,
    walk,
)
from dspark_ckpt.runtimes.records import AUX_FAMILIES
from dspark_ckpt.runtimes.release_model import (
    ArchitectureModel,
    architecture_model,
    generated_releases,
)

RUNTIMES = ("vllm", "sglang")
CONTEXTS: tuple[Family | None, ...] = (None, *Family)


def built(runtime: str) -> Iterator[tuple[str, ArchitectureModel, Family | None]]:
    for release in generated_releases(runtime):
        for model in built_models(runtime, release):
            model_type = model.config_type[0] if model.config_type is not None else None
            yield release, model, family_for(model.name, model_type)


def test_the_contexts_include_every_family_a_record_is_built_for() -> None:
    assert {family for runtime in RUNTIMES for _, _, family in built(runtime)} <= set(CONTEXTS)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_every_built_parameter_is_visited_once_with_at_most_one_annotation(runtime: str) -> None:
    problems: list[str] = []
    used: Counter[Annotation] = Counter()
    visited = 0
    for release, model, family in built(runtime):
        for context in CONTEXTS:  # every family a builder may route the class as (a named method), and none
            plan = walk(model, context)
            if sorted(plan) != sorted(model.parameters):
                odd = sorted(set(plan) ^ set(model.parameters))[:5]
                problems.append(f"{runtime}-{release} {model.name}: the pass visits {odd} not as the record builds them")
            for parameter in model.parameters:
                visited += 1
                rows = annotations_of(model, parameter, context)
                if len(rows) > 1:
                    problems.append(f"{runtime}-{release} {model.name} {parameter} ({context}): two annotations "
                                    f"{[(a.leaf, sorted(a.facets)) for a in rows]}")
                if plan[parameter].annotation not in (rows[:1] or (None,)):
                    problems.append(f"{runtime}-{release} {model.name} {parameter}: the plan's annotation is not "
                                    "the row that matches")
                used.update(rows[:1])
    assert not problems, "\n".join(problems[:20])
    unused = [(a.leaf, a.applies.value) for a in ANNOTATIONS if runtime in a.runtimes and not used[a]]
    assert unused == [], f"annotations no {runtime} record builds: {unused}"
    assert visited > 1000
    print(runtime, visited, {f"{a.leaf}/{a.applies.value}": n for a, n in used.items()})


def test_every_annotation_names_a_parameter_some_record_builds() -> None:
    """An annotation is a fact about the generated data: each row matches a parameter of some built class of some
    release of one of its runtimes."""
    used: set[Annotation] = set()
    for runtime in RUNTIMES:
        for _, model, family in built(runtime):
            for context in CONTEXTS:
                for parameter in model.parameters:
                    used.update(annotations_of(model, parameter, context))
    assert [(a.leaf, a.applies.value) for a in ANNOTATIONS if a not in used] == []


def test_every_annotation_names_modules_that_read_its_tensor() -> None:
    """An annotation that takes a facet from the record names the hand-read modules that answer it, and each of them
    reads the tensor (by the checkpoint's name: d2t for the mapping); an annotation that only quiets DSP363 names
    none (nothing answers it: the release fills it from the target)."""
    root = Path(parameter_pass.__file__).parent.parent
    for row in ANNOTATIONS:
        answered = row.facets & {Facet.SHAPE, Facet.PRESENCE}
        assert bool(row.judged_by) == bool(answered), row
        stem = "d2t" if parameter_pass.is_mapping(row.leaf) else row.leaf.split(".")[0]
        for module in row.judged_by:
            assert stem in (root / module).read_text(encoding="utf-8"), (row.leaf, module)


def test_facets_say_what_the_record_judges() -> None:
    mapping = next(a for a in ANNOTATIONS if a.leaf == "draft_id_to_target_id" and Facet.SHAPE in a.facets)
    judged = parameter_pass.Judgement("draft_id_to_target_id", mapping)
    assert (judged.shape, judged.presence, judged.unfilled) == (False, False, False)
    assert not any(a.leaf == "lm_head.weight" and Facet.SHAPE in a.facets for a in ANNOTATIONS)
    shared = next(a for a in ANNOTATIONS if a.leaf == "lm_head.weight" and a.facets == {Facet.PRESENCE})
    judged = parameter_pass.Judgement("lm_head.weight", shared)
    assert (judged.shape, judged.presence, judged.unfilled) == (True, False, False)
    fc = next(a for a in ANNOTATIONS if a.leaf == "fc.weight")
    judged = parameter_pass.Judgement("model.fc.weight", fc)
    assert (judged.shape, judged.presence, judged.unfilled) == (False, True, True)
    shared = next(a for a in ANNOTATIONS if a.leaf == "head.weight")
    judged = parameter_pass.Judgement("head.weight", shared)
    assert (judged.shape, judged.presence, judged.unfilled) == (True, True, False)
    bare = parameter_pass.Judgement("model.layers.{i}.mlp.down_proj.weight", None)
    assert (bare.shape, bare.presence, bare.unfilled) == (True, True, True)


def test_fc_is_judged_by_the_record_for_every_class_the_aux_model_does_not_read() -> None:
    """The gap of issue 40: fc of DFlash, DSpark and DFlash2 was skipped by the landing for every class although the
    aux-state model reads only the EAGLE-3 ones."""
    for arch, family in (("DFlashDraftModel", Family.DFLASH), ("Qwen3DSparkModel", Family.QWEN3_DSPARK),
                         ("DFlash2DraftModel", Family.DFLASH2), ("Eagle3DeepseekV2ForCausalLM", None)):
        model = architecture_model("vllm", "0.33.0", arch)
        assert model is not None
        found = judgement(model, "model.fc.weight", family)
        assert found.annotation is None and found.shape and found.presence, arch
    eagle3 = architecture_model("vllm", "0.33.0", "Eagle3LlamaForCausalLM")
    assert eagle3 is not None
    found = judgement(eagle3, "model.fc.weight", Family.EAGLE3_LLAMA)
    assert found.annotation is not None and not found.shape and found.presence  # its width the aux model's


def test_the_markov_head_is_the_records_on_both_runtimes_under_its_own_codes() -> None:
    model = architecture_model("vllm", "0.33.0", "Qwen3DSparkModel")
    assert model is not None
    assert judgement(model, "model.markov_head.markov_w1.weight", Family.QWEN3_DSPARK).annotation is None
    for release in ("0.5.16", "0.5.23"):  # SGLang: no hand evaluator skips it any more (was sglang_eval.py's)
        sglang = architecture_model("sglang", release, "Qwen3DSparkModel")
        assert sglang is not None
        for leaf in ("markov_w1.weight", "markov_w2.weight"):
            found = judgement(sglang, f"markov_head.{leaf}", Family.QWEN3_DSPARK)
            assert found.annotation is None and found.shape and found.presence and found.unfilled, (release, leaf)
    assert [parameter_pass.vocab_shape_code(f"markov_head.markov_w{i}.weight") for i in (1, 2)] == ["DSP322", "DSP323"]
    assert parameter_pass.vocab_unfilled_code("model.markov_head.markov_w2.weight") == "DSP345"
    assert parameter_pass.vocab_unfilled_code("model.layers.0.mlp.down_proj.weight") is None
    assert parameter_pass.vocab_unfilled_code("markov_head.gate_proj.weight") == "DSP345"  # a gated head's own
    assert parameter_pass.vocab_unfilled_code("model.layers.0.mlp.gate_proj.weight") is None
    # vLLM: a vocabulary head's shape is the record's whoever describes the draft; whether the release fills an
    # unshipped one from the target is the contract's (hand-read); the d2t mapping stays the contract's whole
    for parameter in ("lm_head.weight", "model.embed_tokens.weight"):
        described = judgement(model, parameter, Family.QWEN3_DSPARK)
        assert described.shape and not described.presence, parameter
        assert judgement(model, parameter, None).shape  # no contract: the generated verdict judges it
    assert not judgement(model, "draft_id_to_target_id", Family.QWEN3_DSPARK).shape
    assert judgement(model, "draft_id_to_target_id", None).shape


def test_the_aux_families_are_the_records() -> None:
    assert parameter_pass.AUX_FAMILIES is AUX_FAMILIES


def test_a_class_no_family_describes_has_its_d2t_judged_where_the_release_builds_it() -> None:
    """The pass judges the vocabulary too where no contract describes the class: vLLM builds draft_id_to_target_id
    where D differs from T and nothing but the checkpoint writes it, so a pruned draft without one keeps it as
    initialised; where D equals T it is not built, and lm_head/embed_tokens, which the target may fill (an
    annotation), are never reported unfilled."""
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
