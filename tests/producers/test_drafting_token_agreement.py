"""vLLM's proposer and the masked slots' token id (DSP373), held against the release's own functions: producers'
DFlash, DFlash2, DSpark and P-EAGLE drafts (z-lab dflash 0.1.0, SpecForge 0.2.0, speculators 0.9.0), as shipped and
with the mask token as users lose, move or mistype it (left out, null, moved to the top level or into dflash_config,
renamed to pard_token or dspark_noise_token_id, a text, digits in a string, a fraction, a list), and EAGLE-3 drafts
(SpecForge, speculators) served with the deploy's own `parallel_drafting: true` (P-EAGLE). For each, check's verdict on vLLM 0.25.0 (whose V1 proposer reads fewer keys
than its Model Runner V2), 0.28.0, 0.33.0 and 0.34.0 against what the release's `_init_parallel_drafting_params` and
`get_parallel_drafting_token_id` do with the draft's hf_config as check builds it (compiled alone from the wheel's
files and called, as tools/release_drafting_token.py does; the methods that run them, and which function runs on the
deploy's flag alone, read from its spec.json). The draft fails to start where every function that runs for it refuses
its config (which runner a deployment gets depends on the release and its features; Model Runner V2 hands parallel
drafting for EAGLE to V1); check then quotes them. Recorded in tests/data/observed/drafting-token.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from producers import materialise
from recorded import observations, sources

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import drafting_token, spec_facts
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.local import local_source

ROOT = Path(__file__).resolve().parents[2]
RELEASES = ("0.25.0", "0.28.0", "0.33.0", "0.34.0")
T = 96
LAYOUTS = ("dflash-0.1.0-dflash", "dflash-0.1.0-dflash2", "specforge-0.2.0-dspark-declared-d",
           "speculators-0.9.0-dspark-equal", "speculators-0.9.0-dflash-pruned", "speculators-0.9.0-peagle-qwen3-pruned")
MASK_KEYS = ("mask_token_id", "dspark_noise_token_id", "pard_token", "ptd_token_id")
Edit = Callable[[dict[str, Any]], None]


def _mask(cfg: dict[str, Any]) -> Any:
    nested = cfg.get("dflash_config") if isinstance(cfg.get("dflash_config"), dict) else {}
    return nested.get("mask_token_id", cfg.get("mask_token_id", 95))


def _drop(cfg: dict[str, Any]) -> None:
    for key in MASK_KEYS:
        cfg.pop(key, None)
    if isinstance(cfg.get("dflash_config"), dict):
        cfg["dflash_config"].pop("mask_token_id", None)


def _put(where: str, value: Any = None, *, keep_value: bool = True) -> Edit:
    def edit(cfg: dict[str, Any]) -> None:
        token = _mask(cfg) if keep_value else value
        _drop(cfg)
        if where == "dflash_config":
            cfg["dflash_config"] = {**(cfg.get("dflash_config") or {}), "mask_token_id": token}
        else:
            cfg[where] = token
    return edit


MUTATIONS: dict[str, Edit | None] = {
    "as-shipped": None,
    "no-mask": _drop,
    "null-mask": _put("mask_token_id", None, keep_value=False),
    "null-nested-mask": _put("dflash_config", None, keep_value=False),
    "top-level-mask": _put("mask_token_id"),
    "nested-mask": _put("dflash_config"),
    "pard-token": _put("pard_token"),
    "noise-token": _put("dspark_noise_token_id"),
    "text-mask": _put("mask_token_id", "mask", keep_value=False),
    "text-nested-mask": _put("dflash_config", "<mask>", keep_value=False),
    "digits-mask": _put("mask_token_id", "95", keep_value=False),
    "fraction-mask": _put("mask_token_id", 95.5, keep_value=False),
    "list-mask": _put("dflash_config", [95], keep_value=False),
}
# EAGLE-3 drafts served with the deploy's own flag (P-EAGLE): only the function the proposer calls on it runs
SERVED = {"specforge-0.2.0-eagle3": {"method": "eagle3", "parallel_drafting": True, "num_speculative_tokens": 3},
          "speculators-0.9.0-eagle3-llama-pruned": {"method": "eagle3", "parallel_drafting": True,
                                                    "num_speculative_tokens": 3}}
SERVED_MUTATIONS = ("as-shipped", "top-level-mask", "pard-token", "null-mask", "text-mask")


def _cases(tmp_path: Path, release: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each layout x mutation the release builds (no registry or __init__ refusal first): the hf_config check builds (what the
    release's functions are given), the method it is served with, and check's verdict."""
    cases, said = [], {}
    chosen = [(layout, mutation, None) for layout in LAYOUTS for mutation in MUTATIONS] + \
        [(layout, mutation, spec) for layout, spec in SERVED.items() for mutation in SERVED_MUTATIONS]
    for layout, mutation, spec in chosen:
        edit = MUTATIONS[mutation]
        folder = tmp_path / f"{layout}--{mutation}{'--served' if spec else ''}"
        edited = (lambda cfg, edit=edit: edit(cfg)) if edit is not None else None
        materialise(folder, layout, config=edited)
        analysis = analyze(local_source(folder), target=TargetVocab(T, "test"),
                           runtimes=[RuntimeVersion("vllm", release)], speculative=spec)
        built = analysis.builds[0] if analysis.builds else None
        if built is None or built.hf is None or built.error is not None or not analysis.verdicts:
            continue
        parallel = built.parallel_drafting if built.parallel_drafting is not None else \
            bool(analysis.facts and analysis.facts.parallel_drafting)
        cases.append({"id": folder.name, "hf": copy.deepcopy(dict(built.hf)), "method": built.method,
                      "parallel": parallel})
        said[folder.name] = analysis.verdicts[0]
    return cases, said


def _run(release: str, cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The release's own functions, compiled alone from its wheel's files, called on each case's hf_config."""
    sys.path.insert(0, str(ROOT / "tools"))
    sys.path.insert(0, str(ROOT / "tests"))
    import release_drafting_token as probe
    from released_sources import release_tree

    tree = release_tree("vllm", release)
    record = spec_facts.drafting_token(release)
    assert record is not None
    calls = {}
    for r in record["resolvers"]:
        found = probe.resolver(tree, r["file"], r["function"])
        assert found is not None, r
        calls[r["function"]] = found[1]
    out: dict[str, dict[str, Any]] = {}
    for case in cases:
        runs = {}
        if case["method"] in record["methods"] or case["parallel"]:
            for function, call in calls.items():
                kind, seen = probe.outcome(call, case["hf"])
                runs[function] = seen if kind == "raises" else {"id": seen}
        out[case["id"]] = {"id": case["id"], "runs": runs}
    return out


def _running(release: str, case: dict[str, Any], runs: dict[str, Any]) -> dict[str, Any]:
    """The functions the release calls for the case: every one where its method turns parallel drafting on; where
    only the flag is set, the one its proposer calls on the flag (the record's `called`, read from the wheel)."""
    record = spec_facts.drafting_token(release)
    assert record is not None
    if case["method"] in record["methods"]:
        return runs
    on_flag = {r["function"] for r in record["resolvers"] if r["called"]["on_flag"]}
    return {f: seen for f, seen in runs.items() if f in on_flag}


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("release", RELEASES)
def test_check_says_the_proposer_refuses_exactly_where_the_release_does(tmp_path: Path, release: str,
                                                                      source: str) -> None:
    cases, said = _cases(tmp_path, release)
    assert len(cases) >= 20, len(cases)  # the rest refused before any proposer (registry, conversion, __init__)
    observed = observations("drafting-token", "vllm", release, cases, source, lambda: _run(release, cases))
    wrong, refused = [], 0
    by_id = {case["id"]: case for case in cases}
    for case_id, seen in observed.items():
        runs = _running(release, by_id[case_id], seen["runs"])
        refuses = bool(runs) and all("raises" in r for r in runs.values())
        verdict = said[case_id]
        reported = verdict.error is not None and verdict.error.code == drafting_token.CODE
        refused += refuses
        if refuses != reported:
            wrong.append(f"{case_id}: release {'refuses' if refuses else 'starts'}, check "
                         f"{verdict.error.code if verdict.error else 'loads'}")
        elif refuses:  # every function's words, quoted whole
            for r in runs.values():
                assert f"{r['raises']}: {r['message']}" in verdict.error.text, (case_id, verdict.error.text)
    assert not wrong, "\n".join(wrong)
    assert refused >= 3, "no case the release refuses: the test proves nothing"
