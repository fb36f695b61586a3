"""Fixture builder: checkpoints laid out exactly as real producers write them.

Each layout in layouts/*.json was recorded from a checkpoint the producer's own released code wrote (speculators
0.9.0's training save path and `convert_model`, SpecForge 0.2.0's export_to_hf / export_to_sglang, z-lab dflash
0.1.0's save_pretrained; tiny sizes, T = 96): config.json as written, and every file's safetensors header (names,
dtypes, shapes, metadata). record_layouts.py is how. `materialise` writes a real checkpoint from a layout: the same
config and header, with deterministic tensor data, and a valid d2t/t2d pair where the layout has them; keyword
arguments make the variants a test needs (a config edit, a dropped tensor, d2t contents).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from conftest import write_safetensors

LAYOUTS = Path(__file__).parent / "layouts"
T = 96  # the recorded producers' target vocabulary (the tiny verifier every run used)


def layout(name: str) -> dict[str, Any]:
    if name == EAGLE1:
        return eagle1_layout()
    doc: dict[str, Any] = json.loads((LAYOUTS / f"{name}.json").read_text())
    return doc


EAGLE1 = "eagle-repo-eagle1"  # built, not recorded: eagle1_layout


def eagle1_layout() -> dict[str, Any]:
    """EAGLE's repo EAGLE-1 head (`eagle/model/cnets1.py` `Model`, as `yuhuili/EAGLE-llama2-chat-7B` ships it):
    `embed_tokens`, `fc` (2H -> H, with bias), one decoder layer `layers.0.*` without `input_layernorm`, no `norm`,
    no `lm_head`, config `LlamaForCausalLM`; built from SpecForge's EAGLE-3 layout's own layer shapes (H = 16)."""
    eagle3 = layout("specforge-0.2.0-eagle3")
    (shard,) = eagle3["shards"].values()
    hidden = eagle3["config"]["hidden_size"]
    tensors: dict[str, Any] = {"embed_tokens.weight": ["BF16", [T, hidden]], "fc.weight": ["BF16", [hidden, 2 * hidden]],
                               "fc.bias": ["BF16", [hidden]]}
    for name, (dtype, shape) in shard["tensors"].items():
        if name.startswith("midlayer.") and not name.endswith(("hidden_norm.weight", "input_layernorm.weight")):
            if name.endswith(("q_proj.weight", "k_proj.weight", "v_proj.weight")):
                shape = [shape[0], hidden]  # EAGLE-3's layer takes [embeds, hidden] (2H); EAGLE-1's takes H
            tensors["layers.0." + name.removeprefix("midlayer.")] = [dtype, shape]
    cfg = {k: v for k, v in eagle3["config"].items() if k != "draft_vocab_size"}
    return {"config": {**cfg, "architectures": ["LlamaForCausalLM"]},
            "shards": {"pytorch_model.safetensors": {"metadata": None, "tensors": tensors}}}


def names() -> list[str]:
    return sorted(p.stem for p in LAYOUTS.glob("*.json"))


def _bf16(values: np.ndarray) -> np.ndarray:
    """float32 -> the upper 16 bits (bfloat16's bit pattern), as uint16."""
    return (np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _mapping(draft: int, target: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The pair EAGLE, SpecForge and speculators build: D sorted target ids, d2t = ids - arange(D)."""
    ids = np.sort(np.random.default_rng(seed).choice(target, size=draft, replace=False)).astype(np.int64)
    t2d = np.zeros(target, dtype=bool)
    t2d[ids] = True
    return ids - np.arange(draft, dtype=np.int64), t2d


def _tensor(name: str, dtype: str, shape: list[int], rng: np.random.Generator,
            mapping: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    if name == "d2t" and mapping is not None:
        return mapping[0]
    if name == "t2d" and mapping is not None:
        return mapping[1]
    if dtype == "BOOL":
        return np.zeros(shape, dtype=bool)
    if dtype == "I64":
        return np.zeros(shape, dtype=np.int64)
    values = rng.standard_normal(shape, dtype=np.float32) * 0.02
    return _bf16(values) if dtype == "BF16" else values.astype(np.float32)


def materialise(root: Path, name: str, *, config: Callable[[dict[str, Any]], None] | None = None,
                drop: tuple[str, ...] = (), d2t: str = "valid", seed: int = 0) -> Path:
    """Write the checkpoint of layout `name` into `root`. `config` edits the config dict in place; `drop` removes
    tensors; `d2t` is "valid" (the producers' mapping), "zeros" (all zero) or "out-of-range" (the last draft id
    mapped to T, one past the target vocabulary)."""
    doc = layout(name)
    root.mkdir(parents=True, exist_ok=True)
    cfg = json.loads(json.dumps(doc["config"]))
    if config is not None:
        config(cfg)
    (root / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")  # transformers' format
    rng = np.random.default_rng(seed)
    for file, shard in doc["shards"].items():
        specs = {n: spec for n, spec in shard["tensors"].items() if n not in drop}
        mapping = None
        if "d2t" in specs and "t2d" in specs:
            mapping = _mapping(specs["d2t"][1][0], specs["t2d"][1][0], seed)
            if d2t == "zeros":
                mapping = (np.zeros_like(mapping[0]), mapping[1])
            elif d2t == "out-of-range":
                bad = mapping[0].copy()
                bad[-1] = specs["t2d"][1][0] - (len(bad) - 1)  # (D - 1) + d2t[-1] == T
                mapping = (bad, mapping[1])
        tensors = {n: _tensor(n, dtype, shape, rng, mapping) for n, (dtype, shape) in specs.items()}
        write_safetensors(root / file, tensors, metadata=shard["metadata"],
                          dtypes={n: dtype for n, (dtype, _) in specs.items()})
    return root


def hoisted(cfg: dict[str, Any]) -> None:
    """The config edit `dspark-ckpt fix --strategy hoist-dspark-settings` makes: nested DSpark keys at the top."""
    for section in ("dflash_config", "dspark_config"):
        for key in ("markov_rank", "markov_head_type", "enable_confidence_head", "confidence_head_with_markov"):
            nested = cfg.get(section) or {}
            if key in nested and key not in cfg:
                cfg[key] = nested[key]
