#!/usr/bin/env python3
"""Maintainer probe: run a vLLM release's own EAGLE-3 classes on CPU over the aux-hidden-state cases and print
where `check` disagrees (the fc shape each config makes vLLM build, and whether fc.weight loads).

    python tools/probe_eagle3_aux.py 0.33.0        # the tree tools/probe_runtime.py --prepare-only fetched

A speculators-format case is converted first by that release's own update_eagle3 (algos.py, imported alone), as
SpeculatorsConfig does; the worker (dspark_ckpt/verify/engine_vllm.py) then runs the class's __init__ and
load_weights. Exit 0 when every case agrees, 1 on a disagreement, 2 when the probe cannot run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tools")]

H, T = 16, 96
LLAMA = {"architectures": ["Eagle3LlamaForCausalLM"], "model_type": "llama"}
QWEN3 = {"architectures": ["Eagle3Qwen3ForCausalLM"], "model_type": "qwen3"}
IDS4 = [1, 5, 9, 13]
# name -> (config keys beyond the family's, fc.weight columns, speculators format)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any], int, bool]] = {
    "llama-top4-fc4": (LLAMA, {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H, False),
    "llama-top4-fc3": (LLAMA, {"eagle_aux_hidden_state_layer_ids": IDS4}, 3 * H, False),
    "llama-nested4-fc4": (LLAMA, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 4 * H, False),
    "llama-count4-top4-fc4": (LLAMA, {"num_aux_hidden_states": 4, "eagle_aux_hidden_state_layer_ids": IDS4},
                              4 * H, False),
    "llama-absent-fc3": (LLAMA, {}, 3 * H, False),
    "llama-absent-fc4": (LLAMA, {}, 4 * H, False),
    "llama-target24-fc72": (LLAMA, {"target_hidden_size": 24}, 3 * 24, False),
    "llama-target24-fc48": (LLAMA, {"target_hidden_size": 24}, 3 * H, False),
    "llama-noaux-fc4": (LLAMA, {"eagle_config": {"use_aux_hidden_state": False}}, 4 * H, False),
    "qwen3-top4-fc4": (QWEN3, {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H, False),
    "qwen3-layers4-fc3": (QWEN3, {"num_aux_layers": 4}, 3 * H, False),
    "qwen3-nested4-fc4": (QWEN3, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 4 * H, False),
    "qwen3-target24-fc48": (QWEN3, {"target_hidden_size": 24}, 3 * H, False),
    "spec-llama-top4-fc4": (LLAMA, {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H, True),
    "spec-llama-count4-fc4": (LLAMA, {"num_aux_hidden_states": 4, "eagle_aux_hidden_state_layer_ids": IDS4},
                              4 * H, True),
    "spec-llama-target24-fc72": (LLAMA, {"target_hidden_size": 24}, 3 * 24, True),
    "spec-qwen3-top4-fc4": (QWEN3, {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H, True),
}


def case_config(family: dict[str, Any], extra: dict[str, Any], speculators: bool) -> dict[str, Any]:
    """config.json as a producer writes it (speculators: the layer config nested, the EAGLE-3 keys on top)."""
    layer = {**family, "vocab_size": T, "hidden_size": H, "num_hidden_layers": 1, "num_attention_heads": 2,
             "num_key_value_heads": 2, "intermediate_size": 32, "rms_norm_eps": 1e-6}
    if not speculators:
        return {**layer, "draft_vocab_size": T, **extra}
    layer.pop("architectures")
    top = {k: v for k, v in extra.items() if k != "num_aux_hidden_states"}
    if "num_aux_hidden_states" in extra:  # a layer-config key: the conversion keeps it
        layer["num_aux_hidden_states"] = extra["num_aux_hidden_states"]
    return {"architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3", "draft_vocab_size": T,
            "speculators_config": {"proposal_methods": [{"speculative_tokens": 3}],
                                   "verifier": {"name_or_path": "target"}},
            "transformer_layer_config": layer, **top}


def write_case(folder: Path, name: str) -> Path:
    from conftest import draft_tensors, write_safetensors

    family, extra, fc_cols, speculators = CASES[name]
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(case_config(family, extra, speculators)))
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, hidden=H, markov=False)
    tensors["fc.weight"] = np.zeros((H, fc_cols), dtype=np.float32)
    write_safetensors(folder / "model.safetensors", tensors)
    return folder


def converted(tree: Path, raw: dict[str, Any]) -> dict[str, Any]:
    """The release's own update_eagle3 applied as SpeculatorsConfig.extract_transformers_pre_trained_config does."""
    path = tree / "vllm" / "transformers_utils" / "configs" / "speculators" / "algos.py"
    spec = importlib.util.spec_from_file_location("release_algos", path)
    assert spec is not None and spec.loader is not None
    algos = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(algos)
    hf = dict(raw.get("transformer_layer_config", {}))
    algos.update_eagle3(config_dict=raw, pre_trained_config=hf)
    return hf


def main(argv: list[str]) -> int:
    from probe_runtime import DEFAULT_CACHE, ensure_deps

    from dspark_ckpt.check.analysis import analyze
    from dspark_ckpt.model.target import TargetVocab
    from dspark_ckpt.runtimes.selectors import RuntimeVersion
    from dspark_ckpt.sources.local import local_source
    from dspark_ckpt.verify.engine import run_worker

    version = argv[0]
    tree = DEFAULT_CACHE / f"vllm-{version}"
    if not (tree / "vllm" / "__init__.py").exists():
        print(f"probe: no tree at {tree}; run tools/probe_runtime.py {version} --prepare-only", file=sys.stderr)
        return 2
    deps = ensure_deps(DEFAULT_CACHE)
    with tempfile.TemporaryDirectory(prefix="dspark-aux-") as tmp:
        cases, folders = [], {}
        for name in CASES:
            folder = write_case(Path(tmp) / name, name)
            folders[name] = folder
            run_folder = folder
            if CASES[name][3]:  # the worker builds from the converted config, as vLLM's hf_config is
                run_folder = Path(tmp) / f"{name}.hf"
                run_folder.mkdir()
                raw = json.loads((folder / "config.json").read_text())
                (run_folder / "config.json").write_text(json.dumps(converted(tree, raw)))
                (run_folder / "model.safetensors").symlink_to(folder / "model.safetensors")
            cases.append({"id": name, "folder": str(run_folder), "target_vocab": T})
        env = {"PYTHONPATH": os.pathsep.join([str(tree), str(deps), str(ROOT)]), "VLLM_TARGET_DEVICE": "cpu"}
        run = run_worker(cases, device="cpu", env=env, timeout=900)
        if not run.ok:
            print(f"probe: vLLM {version} could not be run: {run.reason}", file=sys.stderr)
            return 2
        agree = 0
        for name, folder in folders.items():
            seen = run.observed.get(name)
            analysis = analyze(local_source(folder), target=TargetVocab(T, "probe"),
                               runtimes=[RuntimeVersion("vllm", version)])
            verdict = analysis.verdicts[0] if analysis.verdicts else None
            said = verdict.error.text if verdict and verdict.error else None
            observed = seen.error if seen is not None else f"adapter: {run.adapter_errors.get(name)}"
            ok = seen is not None and observed == said
            agree += ok
            step = verdict.first_step.text[:60] if verdict and verdict.first_step else ""
            print(f"{'ok ' if ok else 'BAD'} {name:28} vllm: {observed!s:90.90} check: {said!s:.90} {step}")
        print(f"vLLM {run.version}: {agree}/{len(folders)} agree")
        return 0 if agree == len(folders) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
