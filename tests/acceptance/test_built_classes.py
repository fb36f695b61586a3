"""The draft classes the generated release model did not build before (issue 40 item 5), now built from each
release's own code: Medusa (its own config class, whose from_pretrained the probe replays), Qwen3 XPress (its raw
`mix.L`), DFlash2 for Beam (vLLM's BeamConfig: sliding layers) and Laguna's DFlash (the target's vocabulary tied to
the draft's, which it refuses to differ). Each through the CLI: a checkpoint in the layout its record names, at sizes
other than the probe's, and the mutations users hit; the truth is what the release's own `__init__` and
`load_weights` did with the same folders (tools/release_model_worker.py's load mode, through vLLM's
DefaultModelLoader), recorded in tests/data/observed/built-classes (tests/recorded.py). A class the release cannot
build on CPU stays registered, not modelled, and the row says why (EAGLE-3 for DeepSeek/Kimi on vLLM 0.28.0)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import layout_checkpoint, run_cli, with_drafting_token, write_safetensors
from recorded import observations, sources

from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.release_model import architecture_model

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import release_model as fitting
import release_model_worker as worker

T = 192
# the draft's own sizes: none of them the probe's base, so every expression is evaluated at values it did not see
SIZES = {"hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
         "intermediate_size": 48, "vocab_size": T, "draft_vocab_size": T, "num_hidden_layers": 2,
         "target_hidden_size": 32, "target.hidden_size": 32, "target.vocab_size": T}
# (release, class): the releases each was named unbuilt in, and the oldest and newest of Medusa's
CLASSES = (("0.33.0", "Qwen3XPressModel"), ("0.33.0", "DFlashQwen3XPressModel"), ("0.33.0", "DFlash2BeamDraftModel"),
           ("0.34.0", "DFlash2BeamDraftModel"), ("0.33.0", "DFlashLagunaForCausalLM"),
           ("0.34.0", "DFlashLagunaForCausalLM"), ("0.32.0", "MedusaModel"), ("0.12.0", "MedusaModel"))
RELEASES = sorted({r for r, _ in CLASSES})
REQUEST = {"default_recipe": fitting.DEFAULT_RECIPE, "recipe_rules": fitting.RECIPES}


# Laguna's config makes every layer after the first a MoE one (transformers' mlp_layer_types default), and the record
# generalises a layer's names from the first layer: one layer (docs/upstream-notes.md section 25)
ONE_LAYER = frozenset({"DFlashLagunaForCausalLM"})


def _config(arch: str, **changed: Any) -> dict[str, Any]:
    recipe = worker.recipe_for(arch, REQUEST)
    sizes = {**SIZES, **({"num_hidden_layers": 1} if arch in ONE_LAYER else {})}
    return {**worker.config_for(recipe, sizes), **changed}


def _required(model: Any, tensors: dict[str, tuple[int, ...]]) -> str:
    """A shipped tensor whose parameter the release refuses to leave unwritten (its `missing`), else a norm."""
    for name in tensors:
        rule = model.tensors.get(landing.normal(name))
        if rule is not None and rule.parameter in model.missing:
            return name
    return next(n for n, s in tensors.items() if len(s) == 1 and "norm" in n)


def _cases(release: str, arch: str) -> dict[str, tuple[dict[str, Any], dict[str, tuple[int, ...]]]]:
    """case -> (config, tensors): the class as built, one required tensor missing, one projection a column wider, a
    stray tensor; Laguna's DFlash with a draft vocabulary other than the target's."""
    model = architecture_model("vllm", release, arch)
    assert model is not None and model.not_built is None, f"{arch} is not built on vLLM {release}"
    config = with_drafting_token(_config(arch), release, arch)  # the proposer starts (DSP373), as a producer's does
    values = landing.variables(model, config, target_hidden=SIZES["target.hidden_size"], target_vocab=T)
    tensors = layout_checkpoint(model, values)
    assert tensors, f"{arch} @ {release}: no layout at these sizes"
    wide = next(n for n, s in tensors.items() if len(s) == 2 and "layers." in n)
    out = {"as-built": (config, tensors),
           "one-missing": (config, {n: s for n, s in tensors.items() if n != _required(model, tensors)}),
           "one-wider": (config, {**tensors, wide: (tensors[wide][0], tensors[wide][1] + 1)}),
           "stray": (config, {**tensors, "layers.0.stray_norm.weight": (4,)})}
    if "draft_vocab_size" in model.reads and "lm_head.weight" in tensors:  # D != T, lm_head sized for D
        smaller = {**tensors, "lm_head.weight": (T - 64, tensors["lm_head.weight"][1])}
        out["draft-vocab-differs"] = (with_drafting_token(_config(arch, draft_vocab_size=T - 64), release, arch),
                                      smaller)
    return out


def _write(folder: Path, config: dict[str, Any], tensors: dict[str, tuple[int, ...]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    write_safetensors(folder / "model.safetensors", {n: np.zeros(s, np.float32) for n, s in tensors.items()})
    return folder


def _row(folder: Path, release: str) -> dict[str, Any]:
    target = folder.parent / "target.json"  # the target's config: its vocabulary and hidden size
    if not target.is_file():
        target.write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": T,
                                      "hidden_size": SIZES["target.hidden_size"], "num_hidden_layers": 4}))
    done = run_cli("check", str(folder), "--target", str(target), "--runtime", f"vllm=={release}", "--format", "json")
    assert "Traceback" not in done.stderr, done.stderr
    (doc,) = json.loads(done.stdout)["checkpoints"]
    (row,) = [c for c in doc["compatibility"] if (c["runtime"], c["version"]) == ("vllm", release)]
    return row


def _observe(release: str, cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    sys.path.insert(0, str(ROOT / "tests" / "producers"))  # the release's own load (the upstream tier only)
    from test_landing_agreement import _observe as run

    return run(release, cases)


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("release", RELEASES)
def test_check_agrees_with_the_release_on_each_class_it_now_builds(tmp_path: Path, release: str,
                                                                    source: str) -> None:
    cases, rows = [], {}
    for arch in sorted(a for r, a in CLASSES if r == release):
        for mutation, (config, tensors) in _cases(release, arch).items():
            folder = _write(tmp_path / f"{arch}--{mutation}", config, tensors)
            rows[folder.name] = _row(folder, release)
            cases.append({"id": folder.name, "architecture": arch, "config": config,
                          "tensors": {n: list(s) for n, s in tensors.items()}, "target_hidden": 32,
                          "target_vocab": T, "bare": False})
    observed = observations("built-classes", "vllm", release, cases, source, lambda: _observe(release, cases))
    disagree = []
    for case_id, row in rows.items():
        seen = observed[case_id]
        if (seen["error"] is None) != bool(row["loads"]):
            said = "loads" if seen["error"] is None else seen["error"]["message"][:160]
            disagree.append(f"{case_id}: vLLM {release} {said}; check {row.get('error') or 'loads'}")
        elif seen["error"] is not None and landing.sorted_sets(seen["error"]["message"])[:60] not in row["error"]:
            disagree.append(f"{case_id}: vLLM says {seen['error']['message'][:160]!r}; check {row['error']!r}")
    assert any(o["error"] is None for o in observed.values()) and any(o["error"] for o in observed.values())
    assert not disagree, "\n".join(disagree)


def test_a_class_its_release_cannot_build_on_cpu_says_why(tmp_path: Path) -> None:
    """EAGLE-3 for DeepSeek/Kimi on vLLM 0.28.0: its MLA prefill backend imports a FlashAttention API that release's
    CPU branch does not define, so its own code stops before any parameter exists: registered, not modelled, with
    the release's words, on the row and in DSP232; a pass it is not."""
    config = {"architectures": ["Eagle3DeepseekV2ForCausalLM"], "model_type": "kimi_k2", "vocab_size": T,
              "hidden_size": 32, "num_hidden_layers": 1}
    folder = _write(tmp_path / "mla", config, {"embed_tokens.weight": (T, 32)})
    done = run_cli("check", str(folder), "--target-vocab-size", str(T), "--runtime", "vllm==0.28.0",
                   "--format", "json")
    (doc,) = json.loads(done.stdout)["checkpoints"]
    (row,) = doc["compatibility"]
    assert row["loads"] is None and row["error_code"] == "DSP368", row
    assert "registered, not modelled" in row["error"] and "compile_flash_attn_varlen_func_from_specs" in row["error"]
    note = next(f for f in doc["findings"] if f["code"] == "DSP232")
    assert "vllm 0.28.0's own code stops building Eagle3DeepseekV2ForCausalLM on CPU" in note["message"]
    assert done.returncode == 1
