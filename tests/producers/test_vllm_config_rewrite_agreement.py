"""vLLM's own config rewrites, replayed by check, held against the release (issue 40 item 3): a DFlash2 draft whose
config lists NoPE layers (`no_rope_layers`) is served by vLLM 0.34.0 as `DFlash2RicursiveDraftModel`
(config/speculative.py `hf_config_override` L796-801: recorded by tools/release_config_rewrites.py in
`config_rewrites.json`, `hf_config_override.architectures`, replayed by runtimes/config_rewrites.architecture_override);
0.33.0 has no such branch and no such class, and builds DFlash2. Each case is served by the release's own
SpeculativeConfig from the config.json as shipped (release_worker's served path: the method, the class, then the
whole load), against check's deploy preflight, the class its verdict route builds and its verdict
(test_vllm_whole_agreement.compare). The answers are recorded in tests/data/observed/vllm-rewrites.

    DSPARK_CKPT_RECORD=1 python -m pytest -m upstream -n 0 tests/producers/test_vllm_config_rewrite_agreement.py \
        --releases vllm-0.34.0,vllm-0.33.0
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import write_safetensors
from producers import T, layout
from recorded import observations, sources
from test_landing_agreement import _observe, _read, load_verdict
from test_vllm_whole_agreement import SHARE_STEP, _write, compare, preflight

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.generated_verdict import GENERATED
from dspark_ckpt.runtimes.release_model import architecture_model
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.vllm_rows import BARE_PARAMETERS, DFLASH2_KEYS
from dspark_ckpt.sources.local import local_source

LAYOUT = "dflash-0.1.0-dflash2"  # z-lab dflash 0.1.0's DFlash2 draft (tests/producers/layouts)
RICURSIVE = "DFlash2RicursiveDraftModel"
# the first release whose hf_config_override rewrites it (the generated registry: the only one registering it)
FIRST = "0.34.0"
RELEASES = ("0.34.0", "0.33.0")
MUTATIONS = ("as-shipped", "no-conv", "fc-wide", "no-q-norm", "stray-inv-freq")


def _no_rope(layers: list[int] | None) -> Callable[[dict[str, Any]], None]:
    def edit(cfg: dict[str, Any]) -> None:
        cfg["no_rope_layers"] = layers
    return edit


# tag -> (no_rope_layers, codebooks bare, mutations): non-empty (the rewrite), empty and null (no rewrite: the branch
# tests its truth); the codebooks as z-lab ships them (`.weight`, which every DFlash2 class refuses: a nested weight)
# and bare, as `fix` renames them (so that the rest of the load is judged)
VARIANTS: dict[str, tuple[list[int] | None, bool, tuple[str, ...]]] = {
    "no-rope-0": ([0], False, ("as-shipped",)),
    "no-rope-0-bare": ([0], True, MUTATIONS),
    "no-rope-empty-bare": ([], True, ("as-shipped",)),
    "no-rope-null-bare": (None, True, ("as-shipped",)),
}


def _bare_codebooks(folder: Path) -> None:
    """`candidate_selector.*_codebook.weight` -> `candidate_selector.*_codebook` (vllm_rows.BARE_PARAMETERS)."""
    (file,) = sorted(folder.glob("*.safetensors"))
    found, dtypes = _read(file)
    renamed = {n.removesuffix(".weight") if n.removesuffix(".weight") in BARE_PARAMETERS else n: n for n in found}
    write_safetensors(file, {new: found[old] for new, old in renamed.items()},
                      dtypes={new: dtypes[old] for new, old in renamed.items() if dtypes[old] in ("BF16", "F16")})
SPECULATIVE = {"method": "dflash", "num_speculative_tokens": 1}


def cases_for(tmp_path: Path, release: str) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any],
                                                      dict[str, Any]]:
    """The served cases (as test_vllm_whole_agreement.cases_for builds its SERVED ones), with check's built config
    per case."""
    cases, predicted, served, built_of = [], {}, {}, {}
    for tag, (layers, bare, mutations) in VARIANTS.items():
        for mutation in mutations:
            folder = _write(tmp_path / f"{LAYOUT}--{tag}--{mutation}", LAYOUT, mutation, _no_rope(layers))
            assert folder is not None, (tag, mutation)
            if bare:
                _bare_codebooks(folder)
            analysis = analyze(local_source(folder), target=TargetVocab(T, "test"),
                               runtimes=[RuntimeVersion("vllm", release)], speculative=SPECULATIVE)
            built = analysis.builds[0]
            model = architecture_model("vllm", release, built.architecture or "")
            raw = json.loads((folder / "config.json").read_text())
            shapes = {n: list(t.shape) for n, t in analysis.loaded.tensors.items()}
            cases.append({"id": folder.name, "config": raw, "served": SPECULATIVE, "share_steps": SHARE_STEP,
                          "tensors": shapes, "target_hidden": raw.get("hidden_size", 16), "target_vocab": T})
            served[folder.name] = (preflight(release, folder, SPECULATIVE, analysis.config.family
                                             if analysis.config else None), built.architecture)
            judged = built.hf is not None and built.error is None and model is not None and \
                model.not_built is None and bool(analysis.verdicts)
            found = landing.land(model, built.hf, {n: tuple(s) for n, s in shapes.items()}, target_hidden=None,
                                 target_vocab=T, config_class=built.config_class, family=built.family,
                                 dropped=landing.dropped_unshipped(model, release)) if judged else []
            predicted[folder.name] = (load_verdict(analysis), found,
                                      model if judged else None)
            built_of[folder.name] = built
    return cases, predicted, served, built_of


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("release", RELEASES)
def test_check_serves_the_class_vllm_rewrites_a_dflash2_draft_to(tmp_path: Path, release: str, source: str) -> None:
    cases, predicted, served, built_of = cases_for(tmp_path, release)
    observed = observations("vllm-rewrites", "vllm", release, cases, source,
                            lambda: _observe(release, cases, timeout=1500))
    assert not [c for c in predicted if observed[c].get("adapter_error")], "the stand-ins lack what a step reads"
    for case_id, built in built_of.items():
        rewritten = release == FIRST and "--no-rope-0" in case_id
        # the release settles on the class check's build names: the Ricursive one only where it rewrites
        assert observed[case_id].get("architecture") == built.architecture, case_id
        assert built.architecture == (RICURSIVE if rewritten else "DFlash2DraftModel"), case_id
        assert built.family is (None if rewritten else Family.DFLASH2), case_id
        # the verdict is the rewritten class's generated record's (the rows describe DFlash2 only), its rewrite cited
        assert ("hf_config_override: architectures ['DFlash2DraftModel'] -> ['DFlash2RicursiveDraftModel']"
                in built.source) is rewritten, built.source
        verdict = predicted[case_id][0]
        assert verdict is not None, case_id
        if rewritten:  # judged by the Ricursive class's generated record (ricursive_dflash2.py @ 0.34.0)
            assert verdict.contract.model_class == "RicursiveDFlash2ForCausalLM" and verdict.contract.family is None
            assert "ricursive_dflash2.py" in verdict.contract.source and GENERATED in verdict.contract.source
        else:
            assert (verdict.contract.family, verdict.contract.model_class) == (Family.DFLASH2,
                                                                               "DFlash2Qwen3ForCausalLM")
    wrong = compare(predicted, observed, None, served)
    print(f"vllm {release}: {len(predicted) - len(wrong)}/{len(predicted)} agree")
    assert not wrong, "\n".join(wrong)
    # the cases reach a load and a refusal
    assert any(observed[c].get("error") is None for c in predicted)
    assert any(observed[c].get("error") is not None for c in predicted)


# --- DFlash2's dflash_config entries (vllm_rows.DFLASH2_KEYS, hand-read: the generated records hold no list of the
# entries __init__ indexes; see its comment): each entry z-lab ships left out, served as above ---
ENTRY_RELEASES = ("0.34.0", "0.33.0")


def _without_entry(entry: str) -> Callable[[dict[str, Any]], None]:
    def edit(cfg: dict[str, Any]) -> None:
        del cfg["dflash_config"][entry]
    return edit


def entry_cases(tmp_path: Path, release: str) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """One served case per dflash_config entry of the layout, left out (codebooks bare): check's built config each,
    and, where __init__ builds, check's verdict as cases_for has it."""
    entries = sorted(layout(LAYOUT)["config"]["dflash_config"])
    cases, built_of, predicted = [], {}, {}
    for entry in entries:
        folder = _write(tmp_path / f"{LAYOUT}--without-{entry}", LAYOUT, "as-shipped", _without_entry(entry))
        assert folder is not None, entry
        _bare_codebooks(folder)
        analysis = analyze(local_source(folder), target=TargetVocab(T, "test"),
                           runtimes=[RuntimeVersion("vllm", release)], speculative=SPECULATIVE)
        raw = json.loads((folder / "config.json").read_text())
        shapes = {n: list(t.shape) for n, t in analysis.loaded.tensors.items()}
        cases.append({"id": folder.name, "config": raw, "served": SPECULATIVE, "share_steps": SHARE_STEP,
                      "tensors": shapes, "target_hidden": raw.get("hidden_size", 16), "target_vocab": T})
        built = built_of[folder.name] = analysis.builds[0]
        model = architecture_model("vllm", release, built.architecture or "")
        if built.error is None and model is not None and built.hf is not None and analysis.verdicts:
            found = landing.land(model, built.hf, {n: tuple(s) for n, s in shapes.items()}, target_hidden=None,
                                 target_vocab=T, config_class=built.config_class, family=built.family,
                                 dropped=landing.dropped_unshipped(model, release))
            predicted[folder.name] = (load_verdict(analysis), found, model)
    return cases, built_of, predicted


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("release", ENTRY_RELEASES)
def test_the_dflash2_entries_init_indexes_are_the_hand_list(tmp_path: Path, release: str, source: str) -> None:
    """The release's DFlash2 __init__ raises `KeyError: '<entry>'` (its words, check's DSP333) for exactly the
    entries of DFLASH2_KEYS left out; every other entry z-lab ships is optional there (its absence is no __init__
    raise)."""
    cases, built_of, predicted = entry_cases(tmp_path, release)
    observed = observations("vllm-dflash2-entries", "vllm", release, cases, source,
                            lambda: _observe(release, cases, timeout=1500))
    raised = {}
    for case_id, built in built_of.items():
        entry = case_id.rsplit("--without-", 1)[1]
        seen = observed[case_id]
        assert seen.get("architecture") == "DFlash2DraftModel", (case_id, seen.get("architecture"))
        error = seen.get("error") if seen.get("phase") == "init" else None
        said = f"{error['type']}: {error['message']}" if error else None
        raised[entry] = said
        assert (built.error.text if built.error is not None else None) == said, (case_id, built.error, said)
        if said is not None:
            assert built.error is not None and built.error.code == "DSP333" and not built.before_validation
    assert {e for e, said in raised.items() if said} == set(DFLASH2_KEYS), raised
    assert all(raised[e] == f"KeyError: '{e}'" for e in DFLASH2_KEYS), raised
    # the other entries left out: check's verdict is the release's whole load (a target-layer list gone: fc's width)
    assert {c.rsplit("--without-", 1)[1] for c in predicted} == {e for e, said in raised.items() if said is None}
    wrong = compare(predicted, {c: observed[c] for c in predicted}, None,
                    {c: (preflight(release, tmp_path / c, SPECULATIVE, Family.DFLASH2), built_of[c].architecture)
                     for c in predicted})
    assert not wrong, "\n".join(wrong)
