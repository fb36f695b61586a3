"""Per vLLM release, the verdict on checkpoints as real producers write them (layouts recorded from their code).

Each expectation follows from the released wheels' code (docs/upstream-notes.md section 10): the speculators
conversion, the registry, the method's architecture rewrite, the model __init__'s attribute reads, then
load_weights. Folder names stay free of `eagle-`/`dflash`/`dspark`, which would steer vLLM's method detection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from producers import T, hoisted, materialise

from dspark_ckpt.check.analysis import Analysis, analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.table import VLLM_VERSIONS
from dspark_ckpt.sources.local import LocalFolder

OLD, NEW = ("0.27.0", "0.28.0"), ("0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0")
NO_MARKOV = "AttributeError: 'Qwen3Config' object has no attribute 'markov_rank'"
DEEPSEEK_V4 = "AttributeError: 'Qwen3Config' object has no attribute 'hc_mult'"
CODEBOOK = m.E_NESTED_WEIGHT.format(name="candidate_selector.predecessor_codebook.weight",
                                    param="candidate_selector.predecessor_codebook")
LOADS: tuple[str | None, str, frozenset[str]] = (None, "", frozenset())


def run(tmp_path: Path, name: str, target: int | None = T, **edits: Any) -> Analysis:
    folder = materialise(tmp_path / "ckpt", name, **edits)
    return analyze(LocalFolder(folder), target=TargetVocab(target, "test") if target else None,
                   runtimes=parse_selectors(["vllm"]))


def outcomes(analysis: Analysis) -> dict[str, tuple[str | None, str, frozenset[str]]]:
    return {v.version: (v.error.code if v.error else None, v.error.text if v.error else "",
                        frozenset(i.code for i in v.silent)) for v in analysis.verdicts}


def expect(old: tuple[str | None, str, frozenset[str]], new: tuple[str | None, str, frozenset[str]],
           v034: tuple[str | None, str, frozenset[str]] | None = None
           ) -> dict[str, tuple[str | None, str, frozenset[str]]]:
    """`old` on 0.27-0.28, `new` from 0.29 on; `v034` where 0.34.0 differs."""
    return {v: old if v in OLD else v034 if v == "0.34.0" and v034 is not None else new for v in VLLM_VERSIONS}



def error(code: str, text: str) -> tuple[str | None, str, frozenset[str]]:
    return code, text, frozenset()


def silent(*codes: str) -> tuple[str | None, str, frozenset[str]]:
    return None, "", frozenset(codes)

# 0.34's update_peagle raises instead of converting (speculators/algos.py L53-55; its registry has no PEagle entry)
PEAGLE_034 = error("DSP330", "P-EAGLE (parallel drafting EAGLE-3) is not supported.")


CASES: list[tuple[str, str, dict[str, Any], int, dict[str, tuple[str | None, str, frozenset[str]]]]] = [
    # speculators 0.9.0: the converter builds the class; T = 96, the verifier's vocabulary.
    ("speculators DSpark, pruned", "speculators-0.9.0-dspark-pruned", {}, T, expect(LOADS, LOADS)),
    ("speculators DSpark, full vocab", "speculators-0.9.0-dspark-equal", {}, T, expect(LOADS, LOADS)),
    ("speculators DFlash, pruned", "speculators-0.9.0-dflash-pruned", {}, T, expect(LOADS, LOADS)),
    ("speculators EAGLE-3 (qwen3 layer)", "speculators-0.9.0-eagle3-qwen3-pruned", {}, T, expect(LOADS, LOADS)),
    ("speculators EAGLE-3 (llama layer)", "speculators-0.9.0-eagle3-llama-pruned", {}, T, expect(LOADS, LOADS)),
    ("speculators P-EAGLE", "speculators-0.9.0-peagle-qwen3-pruned", {}, T, expect(LOADS, LOADS, PEAGLE_034)),
    ("speculators P-EAGLE without mask_hidden", "speculators-0.9.0-peagle-qwen3-pruned", {"drop": ("mask_hidden",)},
     T, expect(error("DSP314", m.E_PARALLEL), error("DSP314", m.E_PARALLEL), PEAGLE_034)),
    ("speculators DFlash2: dflash2 is converted from 0.29", "speculators-0.9.0-dflash2-equal", {}, T,
     expect(("DSP330", ("Expected one of: {'eagle3': <function update_eagle3 at 0x...>, 'peagle': <function "
                       "update_peagle at 0x...>, 'dflash': <function update_dflash at 0x...>, 'dspark': <function "
                       "update_dspark at 0x...>}. Please ensure you're loading a speculators-format model."),
             frozenset()), LOADS)),
    ("speculators convert (EAGLE-3)", "speculators-0.9.0-convert-eagle3", {}, T, expect(LOADS, LOADS)),
    ("speculators convert (DFlash)", "speculators-0.9.0-convert-dflash", {}, T, expect(LOADS, LOADS)),
    # d2t contents are a per-runtime problem wherever the runtime applies the shipped d2t.
    ("EAGLE-3, all-zero d2t", "speculators-0.9.0-eagle3-qwen3-pruned", {"d2t": "zeros"}, T,
     expect(silent("DSP401"), silent("DSP401"))),
    ("EAGLE-3, d2t onto id T", "speculators-0.9.0-eagle3-qwen3-pruned", {"d2t": "out-of-range"}, T,
     expect(silent("DSP402"), silent("DSP402"))),
    ("DSpark, d2t onto id T", "speculators-0.9.0-dspark-pruned", {"d2t": "out-of-range"}, T,
     expect(silent("DSP402"), silent("DSP402"))),
    ("speculators DSpark for a target of 128", "speculators-0.9.0-dspark-pruned", {}, 128,
     expect(silent("DSP327"), silent("DSP327"))),
    # SpecForge 0.2.0: DSparkDraftModel + qwen3 is the DeepSeek-V4 draft on 0.27/0.28; DSpark keys are nested.
    ("SpecForge DSpark", "specforge-0.2.0-dspark-nested", {}, T,
     expect(error("DSP309", DEEPSEEK_V4), error("DSP215", NO_MARKOV))),
    ("SpecForge DSpark, keys at the top", "specforge-0.2.0-dspark-nested", {"config": hoisted}, T,
     expect(error("DSP309", DEEPSEEK_V4), LOADS)),
    ("SpecForge DSpark, declared D", "specforge-0.2.0-dspark-declared-d", {}, T,
     expect(error("DSP309", DEEPSEEK_V4), error("DSP215", NO_MARKOV))),
    ("SpecForge DSpark, declared D, keys at the top", "specforge-0.2.0-dspark-declared-d", {"config": hoisted}, T,
     # 0.34: no lm_head check in load_weights; the D-row lm_head parameter's bare row-count assertion refuses R rows
     expect(error("DSP309", DEEPSEEK_V4), error("DSP216", m.E_LM_HEAD), error("DSP216", "AssertionError"))),
    ("SpecForge Inkling, dspark_config", "specforge-0.2.0-inkling-dspark-config", {}, 100,
     expect(error("DSP309", DEEPSEEK_V4), error("DSP215", NO_MARKOV))),
    ("SpecForge Inkling, padded", "specforge-0.2.0-inkling-padded", {}, 100,
     expect(error("DSP309", DEEPSEEK_V4), error("DSP215", NO_MARKOV))),
    ("SpecForge Inkling, padded, keys at the top", "specforge-0.2.0-inkling-padded", {"config": hoisted}, 100,
     # 0.34: no embed_tokens check; the V-row embedding and the D-row lm_head stay as initialised (V, D > T)
     expect(error("DSP309", DEEPSEEK_V4), error("DSP304", m.E_EMBED), silent("DSP304", "DSP306"))),
    ("SpecForge EAGLE-3 (midlayer names)", "specforge-0.2.0-eagle3", {}, T, expect(LOADS, LOADS)),
    # z-lab dflash 0.1.0
    ("dflash DFlash", "dflash-0.1.0-dflash", {}, T, expect(LOADS, LOADS)),
]


@pytest.mark.parametrize(("case", "name", "edits", "target", "want"), CASES, ids=[c[0] for c in CASES])
def test_verdict_per_release(tmp_path: Path, case: str, name: str, edits: dict[str, Any], target: int,
                             want: dict[str, tuple[str | None, str, frozenset[str]]]) -> None:
    assert outcomes(run(tmp_path, name, target, **edits)) == want


def test_dflash2_from_dflash_save_pretrained(tmp_path: Path) -> None:
    """Not registered in 0.27; from 0.28 its `.weight` codebooks are refused by the nested loader."""
    got = outcomes(run(tmp_path, "dflash-0.1.0-dflash2"))
    assert got["0.27.0"] == error("DSP309", "Model architectures ['DFlash2DraftModel'] are not supported for now.")
    assert all(got[v] == error("DSP331", CODEBOOK) for v in VLLM_VERSIONS if v != "0.27.0")


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
    assert "markov_rank" in built["0.29.0"].reads and "qwen3_dspark.py @ v0.29.0 L160" in built["0.29.0"].source
    speculators = {b.version: b for b in run(tmp_path / "s", "speculators-0.9.0-dspark-pruned").builds}
    assert (speculators["0.27.0"].model_type, speculators["0.27.0"].config_class) == ("speculators",
                                                                                      "SpeculatorsConfig")
    assert speculators["0.27.0"].vocab_size == T and speculators["0.27.0"].draft_vocab_size == 40


def test_target_vocab_from_t2d_when_no_target_is_given(tmp_path: Path) -> None:
    analysis = run(tmp_path, "speculators-0.9.0-dspark-pruned", target=None)
    assert analysis.target is not None and analysis.target.size == T
    assert analysis.target.source == "length of t2d in model.safetensors"
    assert "DSP217" in {f.code for f in analysis.findings} and "DSP206" not in {f.code for f in analysis.findings}
    assert outcomes(analysis) == expect(LOADS, LOADS)


def test_a_contradicting_target_is_flagged_in_every_verdict(tmp_path: Path) -> None:
    analysis = run(tmp_path, "speculators-0.9.0-eagle3-qwen3-pruned", target=128)
    assert all("DSP327" in {i.code for i in v.silent} for v in analysis.verdicts)
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

    assert run(tmp_path, "dflash-0.1.0-dflash", config=plain).verdicts == ()
