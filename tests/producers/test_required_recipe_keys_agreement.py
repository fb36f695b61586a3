"""A key a recipe sets that the class's own __init__ requires, left out of a draft's config.json (issue 40 item 4 /
42): check reports the release's refusal, as the release does. The keys are the generated records' own
(`absent_keys.<key>.required`, which release_worker.absent_keys records for a recipe with REQUIRES: vLLM's Ricursive
DFlash2 `no_rope_layers`, MiniMax M3's DSpark `dspark_ffn_hidden_size`, Muse Spark's DSpark `target_layer_ids`,
`mask_token_id`, `enable_confidence_head`; SGLang's MiniMax DSpark `block_size`, `use_gemma_norm`,
`dense_intermediate_size`, Gemma 4's assistant `backbone_hidden_size`): each class's as-built checkpoint of
test_every_architecture_agreement.py with one such key left out, beside the as-built one. The release's answers:
its own __init__ + load_weights on CPU in the upstream tier, recorded in tests/data/observed/required-recipe-keys.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from recorded import observations, only_known_misses, sources
from test_every_architecture_agreement import _observed, build_cases
from test_landing_agreement import disagreements, load_verdict

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.release_model import architecture_model, generated_releases
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.local import local_source

# runtime -> the releases compared: the newest, and one older that registers a class with a required recipe key
RELEASES = {"vllm": ("0.34.0", "0.33.0"), "sglang": ("0.5.23", "0.5.16")}


def _cases(tmp_path: Path, runtime: str, release: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each as-built case of a class whose record requires a key the config holds, and that case less each such
    key; check's verdict on each."""
    every, every_predicted, _ = build_cases(tmp_path, runtime, release)
    cases, predicted = [], {}
    for case in every:
        arch, mutation = case["id"].split("--", 1)
        model = architecture_model(runtime, release, arch)
        if mutation != "as-built" or model is None or not model.required_keys:
            continue
        cases.append(case)
        predicted[case["id"]] = every_predicted[case["id"]]
        for key in sorted(k for k in model.required_keys if k in case["config"]):
            config = {k: v for k, v in case["config"].items() if k != key}
            folder = tmp_path / f"{arch}--no-{key}"
            folder.mkdir(parents=True)
            (folder / "config.json").write_text(json.dumps(config, indent=2))
            (folder / "model.safetensors").write_bytes((tmp_path / case["id"] / "model.safetensors").read_bytes())
            analysis = analyze(local_source(folder), target=TargetVocab(case["target_vocab"], "test"),
                               runtimes=[RuntimeVersion(runtime, release)])
            cases.append({**case, "id": folder.name, "config": config})
            predicted[folder.name] = (load_verdict(analysis), [], model)
    return cases, predicted


def _params() -> list[Any]:
    """(runtime, release, source) for each release: the recording, and the release's own code (upstream)."""
    out = []
    for runtime, releases in RELEASES.items():
        for release in releases:
            for source in sources(runtime):
                if isinstance(source, str):
                    out.append(pytest.param(runtime, release, source, id=f"{runtime}-{release}-{source}"))
                else:
                    out.append(pytest.param(runtime, release, *source.values, marks=source.marks,
                                            id=f"{runtime}-{release}-{source.values[0]}"))
    return out


@pytest.mark.parametrize(("runtime", "release", "source"), _params())
def test_check_reports_a_required_recipe_key_left_out(tmp_path: Path, runtime: str, release: str,
                                                      source: str) -> None:
    assert release in generated_releases(runtime)
    cases, predicted = _cases(tmp_path, runtime, release)
    left_out = [c["id"] for c in cases if "--no-" in c["id"]]
    assert left_out, f"no class of {runtime} {release} records a required recipe key"
    observed = observations("required-recipe-keys", runtime, release, cases, source,
                            lambda: _observed(runtime, release, cases))
    for case_id in left_out:  # the release refuses each in __init__, naming the key; check says so in its words
        key = case_id.split("--no-", 1)[1]
        said = observed[case_id]["error"]
        assert said is not None and said["type"] == "AttributeError" and f"'{key}'" in said["message"], said
        verdict = predicted[case_id][0]
        assert not verdict.loads and verdict.error is not None, case_id
        assert verdict.error.text.endswith(f"object has no attribute '{key}'"), verdict.error.text
    disagree = disagreements(predicted, observed)
    print(f"{runtime} {release}: {len(predicted) - len(disagree)}/{len(predicted)} agree ({len(left_out)} with a "
          f"required recipe key left out)")
    only_known_misses(disagree, frozenset(), len(predicted))
