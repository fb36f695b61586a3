"""Rebuild the example checkpoints shipped in examples/ (run from the repo root: python examples/build_examples.py).

Inkling-Small-shaped padded DSpark draft: T = 200058 (target text vocab), D = V = 201024 (physical rows),
with a tiny hidden size so the files stay small. Weights are zero: `check` never reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header

HERE = Path(__file__).parent
T, D, H, R = 200058, 201024, 8, 2
MASK = T - 1  # the id the draft feeds its masked slots, as every producer writes one (vLLM's proposer needs it: DSP373)
TARGET_HIDDEN = 4096


def write_zero_checkpoint(path: Path, specs: list[TensorSpec]) -> None:
    with open(path, "wb") as f:
        f.write(encode_header(specs, {"format": "pt"}))
        for spec in specs:
            f.write(bytes(spec.nbytes))


def main() -> None:
    draft = HERE / "inkling-small-dspark"
    draft.mkdir(exist_ok=True)
    (draft / "config.json").write_text(json.dumps({
        "architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "vocab_size": D, "draft_vocab_size": D,
        "hidden_size": H, "target_hidden_size": TARGET_HIDDEN, "markov_rank": R, "block_size": 8, "target_layer_ids": [1, 2, 3],
        "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": H // 2,
        "intermediate_size": H, "mask_token_id": MASK,
    }, indent=2) + "\n")
    layer = [  # one complete Qwen3 decoder layer, as vLLM's Qwen3DSparkModel loads it (runtimes/release_data)
        TensorSpec(f"layers.0.self_attn.{name}.weight", "BF16", shape) for name, shape in (
            ("q_proj", (H, H)), ("k_proj", (H // 2, H)), ("v_proj", (H // 2, H)), ("o_proj", (H, H)),
            ("q_norm", (H // 2,)), ("k_norm", (H // 2,)))] + [
        TensorSpec(f"layers.0.{name}.weight", "BF16", shape) for name, shape in (
            ("mlp.gate_proj", (H, H)), ("mlp.up_proj", (H, H)), ("mlp.down_proj", (H, H)),
            ("input_layernorm", (H,)), ("post_attention_layernorm", (H,)))]
    write_zero_checkpoint(draft / "model.safetensors", [
        TensorSpec("embed_tokens.weight", "BF16", (D, H)),
        TensorSpec("fc.weight", "BF16", (H, 3 * TARGET_HIDDEN)),
        TensorSpec("hidden_norm.weight", "BF16", (H,)),
        *layer,
        TensorSpec("norm.weight", "BF16", (H,)),
        TensorSpec("markov_head.markov_w1.weight", "BF16", (D, R)),
        TensorSpec("markov_head.markov_w2.weight", "BF16", (D, R)),
        TensorSpec("lm_head.weight", "BF16", (D, H)),
    ])
    target = HERE / "inkling-small-target"
    target.mkdir(exist_ok=True)
    (target / "config.json").write_text(json.dumps({
        "architectures": ["InklingForConditionalGeneration"], "model_type": "inkling",
        "text_config": {"vocab_size": T, "hidden_size": TARGET_HIDDEN}, "vision_config": {"hidden_size": 1024},
    }, indent=2) + "\n")


if __name__ == "__main__":
    main()
