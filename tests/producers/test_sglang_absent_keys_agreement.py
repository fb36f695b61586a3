"""A key the draft's config leaves out, held against SGLang's own code (issue 42, gap 1): z-lab's DFlash2 export
(`dflash-0.1.0-dflash2`) with and without its grouped convolutions. SGLang reads `dflash_config.conv_kernel_size`
and `conv_group_size` with `.get(key, 0)` and builds no grouped convolution where the kernel size is 0
(speculative/dflash_utils.py parse_dflash_draft_config, models/dflash.py `grouped_conv`, L718-726 @ 0.5.23), so a
DFlash2 draft without them and without their tensors loads complete, while one that sets them and lacks a
convolution's tensors leaves it unwritten (DSP363). The release model records what leaving a key out builds
(`absent_keys`, release_worker.absent_keys); check judges each case by it. SGLang 0.5.23 and 0.5.19 (the first
release with DFlash2) execute each case on CPU (their own get_config, __init__ and load_weights: the worker's load
mode, as in test_sglang_whole_classes_agreement.py); the answers are recorded in tests/data/observed/sglang-absent-keys
(tests/recorded.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from producers import materialise
from recorded import observations, sources
from test_sglang_whole_agreement import _compare
from test_sglang_whole_classes_agreement import _observe

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.release_model import architecture_model, generated_releases
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.local import local_source

RELEASES = ("0.5.23", "0.5.19")
LAYOUT = "dflash-0.1.0-dflash2"
T = 96
CONV = ("attention_conv.base_kernel", "attention_conv.kernel_projection.weight", "mlp_conv.base_kernel",
        "mlp_conv.kernel_projection.weight")


def _without(*keys: str) -> Callable[[dict[str, Any]], None]:
    def edit(cfg: dict[str, Any]) -> None:
        for key in keys:
            cfg["dflash_config"].pop(key)
    return edit


# name -> (config edit, tensors dropped by suffix)
CASES: dict[str, tuple[Callable[[dict[str, Any]], None] | None, tuple[str, ...]]] = {
    "as-shipped": (None, ()),
    "no-conv-keys-no-conv-tensors": (_without("conv_kernel_size", "conv_group_size"), CONV),
    "conv-keys-no-conv-tensors": (None, CONV),
    "conv-keys-no-attention-conv": (None, CONV[:2]),
    "no-conv-keys-no-selector": (_without("conv_kernel_size", "conv_group_size"),
                                 (*CONV, "candidate_selector.hidden_projection.weight")),
}


def judged(folder: Path, name: str, release: str) -> tuple[dict[str, Any], tuple[Any, Any, Any]]:
    """A draft written in `folder`: the case the release's own code is fed (its config and tensor shapes), and check's
    answer on it (the verdict, the landing on the release's record, the record); shared by the SGLang agreement tests
    of key absence, of a refused key, and of the Domino projector."""
    analysis = analyze(local_source(folder), target=TargetVocab(T, "test"), runtimes=[RuntimeVersion("sglang", release)])
    built = analysis.builds[0]
    model = architecture_model("sglang", release, built.architecture or "")
    assert built.hf is not None and model is not None and model.not_built is None
    shapes = {n: list(t.shape) for n, t in analysis.loaded.tensors.items()}
    found = landing.land(model, built.hf, {n: tuple(s) for n, s in shapes.items()}, target_hidden=None,
                         target_vocab=T, config_class=built.config_class, family=built.family)
    raw = json.loads((folder / "config.json").read_text())
    case = {"id": name, "architecture": built.architecture, "config": raw, "tensors": shapes,
            "target_hidden": 16, "target_vocab": T, "bare": False, "read_config": True}
    return case, (analysis.verdicts[0], found, model)


def _cases(tmp_path: Path, release: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    cases, predicted = [], {}
    for name, (edit, dropped) in CASES.items():
        folder = tmp_path / name
        materialise(folder, LAYOUT, config=edit, drop=tuple(f"layers.0.{s}" if not s.startswith("candidate") else s
                                                           for s in dropped))
        case, predicted[name] = judged(folder, name, release)
        cases.append(case)
    return cases, predicted


@pytest.mark.parametrize("source", sources("sglang"))
@pytest.mark.parametrize("release", RELEASES)
def test_check_agrees_with_sglang_on_a_dflash2_draft_without_its_convolutions(tmp_path: Path, release: str,
                                                                              source: str) -> None:
    assert release in generated_releases("sglang")
    cases, predicted = _cases(tmp_path, release)
    observed = observations("sglang-absent-keys", "sglang", release, cases, source, lambda: _observe(release, cases))
    assert _compare(predicted, observed) == []
    # what the release did: without the keys it builds no convolution, so it leaves unwritten no more than the
    # export as shipped does (its codebooks, shipped as `<name>.weight`, land nowhere); with them a convolution no
    # tensor fills stays as initialised, and check names it (DSP363)
    assert all(seen["error"] is None for seen in observed.values()), observed
    shipped = set(observed["as-shipped"]["unwritten"])
    assert not any("_conv." in p for p in shipped)
    assert set(observed["no-conv-keys-no-conv-tensors"]["unwritten"]) == shipped
    assert set(observed["conv-keys-no-conv-tensors"]["unwritten"]) == shipped | {f"layers.0.{s}" for s in CONV}
    verdict = {name: predicted[name][0] for name in CASES}
    assert "_conv." not in " ".join(i.text for i in verdict["no-conv-keys-no-conv-tensors"].silent)
    said = " ".join(i.text for i in verdict["conv-keys-no-conv-tensors"].silent if i.code == "DSP363")
    assert all(f"layers.0.{s}" in said for s in CONV), said
