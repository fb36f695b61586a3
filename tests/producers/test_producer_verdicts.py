"""Per vLLM release, the verdict on checkpoints as real producers write them (layouts recorded from their code).

Each expectation follows from the released wheels' code (docs/upstream-notes.md section 10): the speculators
conversion, the registry, the method's architecture rewrite, the model __init__'s attribute reads, then
load_weights. Folder names stay free of `eagle-`/`dflash`/`dspark`, which would steer vLLM's method detection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from listed import vllm_before, vllm_minors
from producers import T, hoisted, materialise

from dspark_ckpt.check.analysis import Analysis, analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.release_model import architecture_model
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.table import VLLM_VERSIONS
from dspark_ckpt.sources.local import LocalFolder

OLD, NEW = vllm_minors("0.27.0", "0.28.0"), vllm_minors("0.29.0")
NO_MARKOV = "AttributeError: 'Qwen3Config' object has no attribute 'markov_rank'"
DEEPSEEK_V4 = "AttributeError: 'Qwen3Config' object has no attribute 'hc_mult'"
CODEBOOK = m.E_NESTED_WEIGHT.format(name="candidate_selector.predecessor_codebook.weight",
                                    param="candidate_selector.predecessor_codebook")
FIRST = VLLM_VERSIONS[0]  # the oldest listed release: the first step of every case that reaches back to it
LOADS: tuple[str | None, str, frozenset[str]] = (None, "", frozenset())
Outcome = tuple[str | None, str, frozenset[str]]


def run(tmp_path: Path, name: str, target: int | None = T, **edits: Any) -> Analysis:
    folder = materialise(tmp_path / "ckpt", name, **edits)
    return analyze(LocalFolder(folder), target=TargetVocab(target, "test") if target else None,
                   runtimes=parse_selectors(["vllm"]))


def outcomes(analysis: Analysis) -> dict[str, tuple[str | None, str, frozenset[str]]]:
    return {v.version: (v.error.code if v.error else None, v.error.text if v.error else "",
                        frozenset(i.code for i in v.silent)) for v in analysis.verdicts}


def expect(old: Outcome, new: Outcome, v034: Outcome | None = None, *, early: tuple[tuple[str, Outcome], ...] = ()
           ) -> dict[str, Outcome]:
    """`old` on 0.27-0.28, `new` from 0.29 on; `v034` where 0.34.0 differs. Before 0.27: `early` is (first release,
    outcome) steps, oldest first, each holding from its release's minor up to the next step's (the last one up to 0.27);
    without steps the releases before 0.27 get `old` (each case says why)."""
    before = vllm_before("0.27.0")
    steps = early or ((before[0], old),)

    def pre(v: str) -> Outcome:
        return next(o for first, o in reversed(steps) if v in vllm_minors(first))

    return {v: pre(v) if v in before else old if v in OLD else v034 if v == "0.34.0" and v034 is not None else new
            for v in VLLM_VERSIONS}


def error(code: str, text: str) -> tuple[str | None, str, frozenset[str]]:
    return code, text, frozenset()


def silent(*codes: str) -> tuple[str | None, str, frozenset[str]]:
    return None, "", frozenset(codes)

# 0.34's update_peagle raises instead of converting (speculators/algos.py L53-55; its registry has no PEagle entry)
PEAGLE_034 = error("DSP330", "P-EAGLE (parallel drafting EAGLE-3) is not supported.")

# The speculators types each release's algos.py registers, in its dict order (release_data lines.json `algos.*`):
# update_eagle3 alone (L15 @ v0.15.0-v0.18.0; 0.15 names its dict `vllm_config`), update_dflash (L46 @ v0.20.0), update_peagle (L46 @ v0.22.0), update_dspark
# (L126 @ v0.25.0); dflash2 only from 0.29.
SPECULATORS_TYPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (FIRST, ("eagle3",)), ("0.20.0", ("eagle3", "dflash")), ("0.22.0", ("eagle3", "peagle", "dflash")),
    ("0.25.0", ("eagle3", "peagle", "dflash", "dspark")))


def unconverted(types: tuple[str, ...]) -> Outcome:
    """HFConfigParser's refusal of a speculators type the release's SUPPORTED_SPECULATORS_TYPES lacks."""
    listed = ", ".join(f"'{t}': <function update_{t} at 0x...>" for t in types)
    return error("DSP330", f"Expected one of: {{{listed}}}. Please ensure you're loading a speculators-format model.")


def speculators(kind: str, converted: Outcome, *later: tuple[str, Outcome]) -> tuple[tuple[str, Outcome], ...]:
    """Steps before 0.27 for a speculators `kind`: refused (DSP330) until the release's algos.py registers it, then
    `converted`; `later` steps (first release, outcome) override from their release on."""
    def at(first: str) -> Outcome:  # the outcome of a converted `kind` from release `first` on
        return next((o for f, o in reversed(later) if first in vllm_minors(f)), converted)

    steps = [(first, at(first) if kind in types else unconverted(types)) for first, types in SPECULATORS_TYPES]
    return tuple(sorted([*steps, *later], key=lambda s: VLLM_VERSIONS.index(s[0])))


# Before 0.24 update_eagle3 names Eagle3LlamaForCausalLM whatever the layer's model_type (algos.py L37 @ v0.18.0,
# L39 @ v0.20.0 .. v0.23.0), and 0.22/0.23's update_peagle PeagleLlamaForCausalLM (L62 @ v0.22.0; registry.py L601:
# llama_eagle3.Eagle3LlamaForCausalLM). That class's LlamaModel.load_weights looks each name up in params_dict
# (llama_eagle3.py L266 @ v0.20.0, L297 @ v0.22.0): the first qwen3-only tensor in load order, the layer's k_norm,
# is a KeyError (Llama attention has no q_norm/k_norm).
# The words are the release's own, observed by executing it: release_data/vllm-0.20.0/Eagle3LlamaForCausalLM.json
# `unknown_name` (KeyError at llama_eagle3.py:266); a name the class has no parameter for is DSP360.
LLAMA_K_NORM = error("DSP360", "KeyError: 'layers.0.self_attn.k_norm.weight'")
# DSparkDraftModel is first registered in 0.25.0 (registry.py L596, the DeepSeek-V4 draft); 0.24.0's has no DSpark entry
UNREGISTERED_DSPARK = error("DSP309", "Model architectures ['DSparkDraftModel'] are not supported for now.")
SPECFORGE_DSPARK = ((FIRST, UNREGISTERED_DSPARK), ("0.25.0", error("DSP309", DEEPSEEK_V4)))


CASES: list[tuple[str, str, dict[str, Any], int, dict[str, tuple[str | None, str, frozenset[str]]]]] = [
    # speculators 0.9.0: the converter builds the class; T = 96, the verifier's vocabulary.
    # 0.25/0.26: update_dspark (algos.py L126 @ v0.25.0) -> Qwen3DSparkModel, registered (registry.py L597 @ v0.25.0)
    ("speculators DSpark, pruned", "speculators-0.9.0-dspark-pruned", {}, T,
     expect(LOADS, LOADS, early=speculators("dspark", LOADS))),
    ("speculators DSpark, full vocab", "speculators-0.9.0-dspark-equal", {}, T,
     expect(LOADS, LOADS, early=speculators("dspark", LOADS))),
    # 0.20-0.26: update_dflash (L46 @ v0.20.0) -> DFlashDraftModel, registered from 0.20.0
    ("speculators DFlash, pruned", "speculators-0.9.0-dflash-pruned", {}, T,
     expect(LOADS, LOADS, early=speculators("dflash", LOADS))),
    # 0.24-0.26: eagle3_arch_map qwen3 -> Eagle3Qwen3ForCausalLM (algos.py L39-46 @ v0.24.0; registry.py L614)
    ("speculators EAGLE-3 (qwen3 layer)", "speculators-0.9.0-eagle3-qwen3-pruned", {}, T,
     expect(LOADS, LOADS, early=speculators("eagle3", LLAMA_K_NORM, ("0.24.0", LOADS)))),
    # every listed release names Eagle3LlamaForCausalLM for a llama layer (algos.py L37 @ v0.18.0; registry.py L550)
    ("speculators EAGLE-3 (llama layer)", "speculators-0.9.0-eagle3-llama-pruned", {}, T,
     expect(LOADS, LOADS, early=speculators("eagle3", LOADS))),
    # 0.24-0.26: peagle_arch_map qwen3 -> PeagleQwen3ForCausalLM (algos.py L76-83 @ v0.24.0; registry.py L615)
    ("speculators P-EAGLE", "speculators-0.9.0-peagle-qwen3-pruned", {}, T,
     expect(LOADS, LOADS, PEAGLE_034, early=speculators("peagle", LLAMA_K_NORM, ("0.24.0", LOADS)))),
    # 0.22/0.23: Eagle3LlamaForCausalLM.load_weights raises on the missing mask_hidden before its AutoWeightsLoader
    # reaches the layer (llama_eagle3.py L443-447 vs L459 @ v0.22.0), as from 0.24 on
    ("speculators P-EAGLE without mask_hidden", "speculators-0.9.0-peagle-qwen3-pruned", {"drop": ("mask_hidden",)},
     T, expect(error("DSP314", m.E_PARALLEL), error("DSP314", m.E_PARALLEL), PEAGLE_034,
               early=speculators("peagle", error("DSP314", m.E_PARALLEL)))),
    ("speculators DFlash2: dflash2 is converted from 0.29", "speculators-0.9.0-dflash2-equal", {}, T,
     expect(("DSP330", ("Expected one of: {'eagle3': <function update_eagle3 at 0x...>, 'peagle': <function "
                       "update_peagle at 0x...>, 'dflash': <function update_dflash at 0x...>, 'dspark': <function "
                       "update_dspark at 0x...>}. Please ensure you're loading a speculators-format model."),
             frozenset()), LOADS, early=speculators("dflash2", LOADS))),
    ("speculators convert (EAGLE-3)", "speculators-0.9.0-convert-eagle3", {}, T,
     expect(LOADS, LOADS, early=speculators("eagle3", LOADS))),
    ("speculators convert (DFlash)", "speculators-0.9.0-convert-dflash", {}, T,
     expect(LOADS, LOADS, early=speculators("dflash", LOADS))),
    # d2t contents are a per-runtime problem wherever the runtime applies the shipped d2t.
    # (before 0.24 the qwen3-layer EAGLE-3 fails to load (LLAMA_K_NORM); the vocabulary contract's silent problem
    # is still listed beside that landing error, as verify's modelled loader lists it)
    ("EAGLE-3, all-zero d2t", "speculators-0.9.0-eagle3-qwen3-pruned", {"d2t": "zeros"}, T,
     expect(silent("DSP401"), silent("DSP401"),
            early=speculators("eagle3", (*LLAMA_K_NORM[:2], frozenset({"DSP401"})), ("0.24.0", silent("DSP401"))))),
    ("EAGLE-3, d2t onto id T", "speculators-0.9.0-eagle3-qwen3-pruned", {"d2t": "out-of-range"}, T,
     expect(silent("DSP402"), silent("DSP402"),
            early=speculators("eagle3", (*LLAMA_K_NORM[:2], frozenset({"DSP402"})), ("0.24.0", silent("DSP402"))))),
    ("DSpark, d2t onto id T", "speculators-0.9.0-dspark-pruned", {"d2t": "out-of-range"}, T,
     expect(silent("DSP402"), silent("DSP402"), early=speculators("dspark", silent("DSP402")))),
    ("speculators DSpark for a target of 128", "speculators-0.9.0-dspark-pruned", {}, 128,
     expect(silent("DSP327"), silent("DSP327"), early=speculators("dspark", silent("DSP327")))),
    # SpecForge 0.2.0: DSparkDraftModel + qwen3 is the DeepSeek-V4 draft on 0.25-0.28; DSpark keys are nested.
    # Before 0.25 no release registers DSparkDraftModel (SPECFORGE_DSPARK).
    ("SpecForge DSpark", "specforge-0.2.0-dspark-nested", {}, T,
     expect(error("DSP309", DEEPSEEK_V4), error("DSP215", NO_MARKOV), early=SPECFORGE_DSPARK)),
    ("SpecForge DSpark, keys at the top", "specforge-0.2.0-dspark-nested", {"config": hoisted}, T,
     expect(error("DSP309", DEEPSEEK_V4), LOADS, early=SPECFORGE_DSPARK)),
    ("SpecForge DSpark, declared D", "specforge-0.2.0-dspark-declared-d", {}, T,
     expect(error("DSP309", DEEPSEEK_V4), error("DSP215", NO_MARKOV), early=SPECFORGE_DSPARK)),
    ("SpecForge DSpark, declared D, keys at the top", "specforge-0.2.0-dspark-declared-d", {"config": hoisted}, T,
     # 0.34: no lm_head check in load_weights; the D-row markov_w2 parameter's bare row-count assertion refuses R
     # rows (the record's landing adds where and the two shapes to the bare AssertionError)
     expect(error("DSP309", DEEPSEEK_V4), error("DSP216", m.E_LM_HEAD), error(
         "DSP216", "AssertionError at vllm/model_executor/layers/vocab_parallel_embedding.py:520 "
                   "(markov_head.markov_w2.weight [96, 4], parameter model.markov_head.markov_w2.weight [32, 4])"),
         early=SPECFORGE_DSPARK)),
    ("SpecForge Inkling, dspark_config", "specforge-0.2.0-inkling-dspark-config", {}, 100,
     expect(error("DSP309", DEEPSEEK_V4), error("DSP215", NO_MARKOV), early=SPECFORGE_DSPARK)),
    ("SpecForge Inkling, padded", "specforge-0.2.0-inkling-padded", {}, 100,
     expect(error("DSP309", DEEPSEEK_V4), error("DSP215", NO_MARKOV), early=SPECFORGE_DSPARK)),
    ("SpecForge Inkling, padded, keys at the top", "specforge-0.2.0-inkling-padded", {"config": hoisted}, 100,
     # 0.34: no embed_tokens check; the V-row embedding and the D-row lm_head stay as initialised (V, D > T)
     expect(error("DSP309", DEEPSEEK_V4), error("DSP304", m.E_EMBED), silent("DSP304", "DSP306"), early=SPECFORGE_DSPARK)),
    # LlamaForCausalLMEagle3 is registered in every listed release (registry.py L551 @ v0.18.0)
    ("SpecForge EAGLE-3 (midlayer names)", "specforge-0.2.0-eagle3", {}, T,
     expect(LOADS, LOADS, early=((FIRST, LOADS),))),
    # z-lab dflash 0.1.0: DFlashDraftModel is registered from 0.20.0 (registry.py L599 @ v0.22.0)
    ("dflash DFlash", "dflash-0.1.0-dflash", {}, T,
     expect(LOADS, LOADS, early=((FIRST, error("DSP309", "Model architectures ['DFlashDraftModel'] are not "
                                                             "supported for now.")), ("0.20.0", LOADS)))),
]


@pytest.mark.parametrize(("case", "name", "edits", "target", "want"), CASES, ids=[c[0] for c in CASES])
def test_verdict_per_release(tmp_path: Path, case: str, name: str, edits: dict[str, Any], target: int,
                             want: dict[str, tuple[str | None, str, frozenset[str]]]) -> None:
    assert outcomes(run(tmp_path, name, target, **edits)) == want


def test_dflash2_from_dflash_save_pretrained(tmp_path: Path) -> None:
    """Not registered before 0.28 (DFlash2 registers in 0.28.0); from 0.28 its `.weight` codebooks are refused by the
    nested loader."""
    got = outcomes(run(tmp_path, "dflash-0.1.0-dflash2"))
    unregistered = error("DSP309", "Model architectures ['DFlash2DraftModel'] are not supported for now.")
    assert all(got[v] == unregistered for v in vllm_before("0.28.0"))
    assert all(got[v] == error("DSP331", CODEBOOK) for v in vllm_minors("0.28.0"))


def test_pruned_dflash2_proposes_unmapped_ids(tmp_path: Path) -> None:
    def pruned(cfg: dict[str, Any]) -> None:
        cfg["draft_vocab_size"] = 40

    got = outcomes(run(tmp_path, "speculators-0.9.0-dflash2-equal", config=pruned))
    # no lm_head of 40 rows ships, so the 96-row target head is shared into a width-40 draft as well
    assert all(got[v][0] is None and "DSP332" in got[v][2] for v in ("0.29.0", "0.33.0"))


@pytest.mark.parametrize(("name", "cls"), [("speculators-0.9.0-eagle3-qwen3-pruned", "Eagle3Qwen3ForCausalLM"),
                                           ("speculators-0.9.0-peagle-qwen3-pruned", "Eagle3Qwen3ForCausalLM"),
                                           ("speculators-0.9.0-eagle3-llama-pruned", "Eagle3LlamaForCausalLM"),
                                           ("specforge-0.2.0-dspark-nested", "Qwen3DSparkForCausalLM")])
def test_the_class_each_release_builds(tmp_path: Path, name: str, cls: str) -> None:
    analysis = run(tmp_path, name)
    # 0.34 registers no PEagle architecture: its verdict is DSP309 (PEAGLE_034), with no class of its own
    releases = [v for v in NEW if not ("peagle" in name and v == "0.34.0")]
    assert {v.contract.model_class for v in analysis.verdicts if v.version in releases} == {cls}
    built = {b.version: b for b in analysis.builds}
    assert built["0.33.0"].source and "vllm/" in built["0.33.0"].source


def test_the_build_says_what_each_release_made_of_the_config(tmp_path: Path) -> None:
    analysis = run(tmp_path, "specforge-0.2.0-dspark-nested")
    built = {b.version: b for b in analysis.builds}
    assert (built["0.27.0"].architecture, built["0.27.0"].model_type, built["0.27.0"].family) == \
        ("DSparkDraftModel", "deepseek_v4", None)
    assert "speculative.py @ v0.27.0 L961" in built["0.27.0"].source
    assert (built["0.29.0"].architecture, built["0.29.0"].method) == ("Qwen3DSparkModel", "dspark")
    assert "speculative.py @ v0.29.0 L1360" in built["0.29.0"].source
    # what __init__ reads is the generated record's (runtimes/release_model.py), not a second list on the build
    assert "markov_rank" in architecture_model("vllm", "0.29.0", "Qwen3DSparkModel").reads  # type: ignore[union-attr]
    assert "qwen3_dspark.py @ v0.29.0 L160" in built["0.29.0"].source
    speculators = {b.version: b for b in run(tmp_path / "s", "speculators-0.9.0-dspark-pruned").builds}
    assert (speculators["0.27.0"].model_type, speculators["0.27.0"].config_class) == ("speculators",
                                                                                      "SpeculatorsConfig")
    assert speculators["0.27.0"].vocab_size == T and speculators["0.27.0"].draft_vocab_size == 40


def test_target_vocab_from_t2d_when_no_target_is_given(tmp_path: Path) -> None:
    analysis = run(tmp_path, "speculators-0.9.0-dspark-pruned", target=None)
    assert analysis.target is not None and analysis.target.size == T
    assert analysis.target.source == "length of t2d in model.safetensors"
    assert "DSP217" in {f.code for f in analysis.findings} and "DSP206" not in {f.code for f in analysis.findings}
    assert outcomes(analysis) == expect(LOADS, LOADS, early=speculators("dspark", LOADS))


def test_a_contradicting_target_is_flagged_in_every_verdict(tmp_path: Path) -> None:
    analysis = run(tmp_path, "speculators-0.9.0-eagle3-qwen3-pruned", target=128)
    # before 0.24 the release builds Eagle3LlamaForCausalLM, which fails to load this qwen3 layer (LLAMA_K_NORM)
    loading = vllm_minors("0.24.0")
    assert {v.version for v in analysis.verdicts} == set(VLLM_VERSIONS)
    got = outcomes(analysis)
    assert all(got[v][:2] == LLAMA_K_NORM[:2] for v in VLLM_VERSIONS if v not in loading)
    assert all("DSP327" in {i.code for i in v.silent} for v in analysis.verdicts if v.version in loading)
    assert any("records a target vocab of 96, not T = 128" in i.text for v in analysis.verdicts for i in v.silent)


def test_declared_draft_vocab_size_contradicting_the_tensors(tmp_path: Path) -> None:
    analysis = run(tmp_path, "specforge-0.2.0-dspark-declared-d", config=hoisted)
    codes = {f.code for f in analysis.findings}
    assert "DSP216" in codes and not codes & {"DSP301", "DSP323"}, codes  # no "cannot be repaired", no trim hint
    [contradiction] = [f for f in analysis.findings if f.code == "DSP216"]
    assert "draft_vocab_size is 32 but markov_head.markov_w2.weight has 96 rows" in contradiction.message


def test_nested_settings_finding_names_each_key(tmp_path: Path) -> None:
    analysis = run(tmp_path, "specforge-0.2.0-inkling-dspark-config", target=100)
    [nested] = [f for f in analysis.findings if f.code == "DSP215"]
    assert "markov_rank (in dspark_config)" in nested.message and NO_MARKOV in nested.message


def test_unknown_architecture_gets_the_registry_verdict(tmp_path: Path) -> None:
    def custom(cfg: dict[str, Any]) -> None:
        cfg["architectures"] = ["MyDraftModel"]

    analysis = run(tmp_path, "dflash-0.1.0-dflash", config=custom)
    assert analysis.facts is None and "DSP203" in {f.code for f in analysis.findings}
    assert outcomes(analysis) == expect(*(error("DSP309", "Model architectures ['MyDraftModel'] are not "
                                                          "supported for now."),) * 2)


def test_a_text_model_as_draft_is_not_called_unregistered(tmp_path: Path) -> None:
    def plain(cfg: dict[str, Any]) -> None:
        cfg["architectures"] = ["Qwen3ForCausalLM"]

    verdicts = run(tmp_path, "dflash-0.1.0-dflash", config=plain).verdicts
    # each release keeps its row (issue 42), and none calls the class unregistered: no verdict, and why
    assert verdicts and {v.error.code for v in verdicts if v.error} == {"DSP368"}
    assert all("registered there as a model, not a draft class" in v.error.text for v in verdicts if v.error)
