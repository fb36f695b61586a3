"""The loader's passes (runtimes/load_phases.py) are hand-read: held here to the SGLang classes the generated records
build, so a new DSpark class with the bucketed loader, or a listed one that stops building a Markov head, fails."""

from __future__ import annotations

import json
from pathlib import Path

from dspark_ckpt.runtimes import load_phases
from dspark_ckpt.runtimes.release_model import architecture_model, generated_releases

DATA = Path(load_phases.__file__).parent / "release_data"
OWN_LOADER = {"DSparkMiniMaxDraftModel"}  # models/dspark_minimax.py: one pass over every name, its own prefixes


def _markov_classes() -> set[str]:
    found = set()
    for release in generated_releases("sglang"):
        listing = DATA / f"sglang-{release}" / "release.json"
        registry = json.loads(listing.read_text()).get("registry", {}) if listing.is_file() else {}
        for arch in registry:
            model = architecture_model("sglang", release, arch)
            if model is not None and model.not_built is None and \
                    any(p.startswith("markov_head.") for p in model.parameters):
                found.add(arch)
    return found


def test_every_sglang_class_with_a_markov_head_is_listed_or_has_its_own_loader() -> None:
    listed = {arch for runtime, arch in load_phases.BUCKETS if runtime == "sglang"}
    assert _markov_classes() - OWN_LOADER == listed


def test_the_markov_bucket_loads_after_the_backbone_and_before_the_confidence_head() -> None:
    at = load_phases.position
    names = ["markov_head.markov_w1.weight", "norm.weight", "confidence_head.proj.weight", "fc.weight",
             "model.markov_head.markov_w1.weight"]
    order = sorted(names, key=lambda n: at("sglang", "DSparkDraftModel", n))
    assert order == ["fc.weight", "model.markov_head.markov_w1.weight", "norm.weight",
                     "markov_head.markov_w1.weight", "confidence_head.proj.weight"]
    assert sorted(names, key=lambda n: at("vllm", "Qwen3DSparkModel", n)) == sorted(names)  # no buckets listed


def test_the_markov_heads_known_names_are_what_each_release_builds() -> None:
    """sglang_config.MARKOV_PARAMS (the names an unknown-Markov-weight check knows, DSP344) is held to the records:
    the vanilla head's factors, plus what each other head type's sample added (markov_head_type's `values`)."""
    from dspark_ckpt.runtimes.sglang_config import HEAD_TYPES, MARKOV_PARAMS

    assert set(MARKOV_PARAMS) == set(HEAD_TYPES)
    checked = 0
    for release in generated_releases("sglang"):
        for arch in sorted({arch for _, arch in load_phases.BUCKETS}):
            model = architecture_model("sglang", release, arch)
            if model is None or model.not_built is not None:
                continue
            base = {p.removeprefix("markov_head.") for p in model.parameters if p.startswith("markov_head.")}
            values = model.structural["markov_head_type"]["values"]
            for kind, (_, known) in MARKOV_PARAMS.items():
                added = {p.removeprefix("markov_head.") for p in values.get(kind, {}).get("appears", ())}
                assert known == base | added, (release, arch, kind)
            checked += 1
    assert checked >= 20
