"""A config that declares far more layers than ship (a slip of a digit, a hostile file): check's work grows with the
checkpoint, not with the numbers its config.json states. The real CLI, under the hostile corpus's limits (2 GiB of
address space, 5 s of CPU: limits.py), on producers' real layouts with their layer count set to 10**9 and 2**40,
for every release of both runtimes (`--runtime all`), in every format's document path (JSON). Before the landing
named the layers past the shipped ones as one range (runtimes/landing.py `visit`), each of these ran until killed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from limits import assert_contained, finding_codes, run_limited, strict_json

sys.path.insert(0, str(Path(__file__).parents[1] / "producers"))
from producers import T, materialise

# (layout, where its layer count lives)
LAYOUTS = (("dflash-0.1.0-dflash2", ()), ("specforge-0.2.0-eagle3", ()),
           ("specforge-0.2.0-dspark-declared-d", ()),
           ("speculators-0.9.0-dflash-pruned", ("transformer_layer_config",)))


def _declare(layers: int, where: tuple[str, ...]) -> Any:
    def edit(cfg: dict[str, Any]) -> None:
        section = cfg
        for key in where:
            section = section[key]
        section["num_hidden_layers"] = layers
    return edit


@pytest.mark.parametrize("layers", [10**9, 2**40], ids=["1e9", "2**40"])
@pytest.mark.parametrize(("name", "where"), LAYOUTS, ids=[n for n, _ in LAYOUTS])
def test_a_huge_layer_count_is_judged_in_bounded_time(name: str, where: tuple[str, ...], layers: int,
                                                      tmp_path: Path) -> None:
    draft = materialise(tmp_path / name, name, config=_declare(layers, where))
    run = run_limited("check", str(draft), "--target-vocab-size", str(T), "--runtime", "all", "--format", "json")
    assert_contained(run)
    assert run.returncode in (0, 1), run.output[-3000:]
    doc = strict_json(run.stdout)
    assert finding_codes(doc)  # a layer count the shipped tensors do not fill is never clean
    for row in (r for c in doc["checkpoints"] for r in c["compatibility"] if "DSP363" in r["silent_codes"]):
        # a release that loads it leaves every parameter of each declared layer past the shipped ones unwritten,
        # and says how many
        [text] = [s for s, code in zip(row["silent"], row["silent_codes"], strict=True) if code == "DSP363"]
        assert _count(text) >= layers - 1, (row["version"], text)


def _count(text: str) -> int:
    return int(text.split(" parameter", 1)[0].rsplit(" ", 1)[-1])


def test_layers_past_the_shipped_ones_are_named_then_counted(tmp_path: Path) -> None:
    """SGLang 0.5.23 builds every declared DFlash2 layer and loads the one shipped: the finding names the first
    unwritten parameters and counts every one of the 999 layers past it (runtimes/landing.py names
    NAMED_PAST_SHIPPED of them one by one and the rest as one range)."""
    layers = 1000
    draft = materialise(tmp_path / "d", "dflash-0.1.0-dflash2", config=_declare(layers, ()))
    run = run_limited("check", str(draft), "--target-vocab-size", str(T), "--runtime", "sglang==0.5.23",
                      "--format", "json")
    assert_contained(run)
    doc = strict_json(run.stdout)
    [unfilled] = [f for c in doc["checkpoints"] for f in c["findings"] if f["code"] == "DSP363"]
    text = unfilled["message"]
    count = _count(text)
    # every per-layer parameter of the 999 unshipped layers (12 each on 0.5.23), and the selector's two codebooks,
    # which SGLang skips under the export's `.weight` names
    assert count % (layers - 1) == 2 and count > 2 * (layers - 1), text
    assert f"and {count - 6} more" in text, text
    names = text.split("initial values: ", 1)[1]
    first = "candidate_selector.predecessor_codebook, candidate_selector.successor_codebook, layers.1."
    assert names.startswith(first), text  # sorted: layer 1 is the first unshipped one


@pytest.mark.parametrize(("name", "where"), LAYOUTS[:2], ids=[n for n, _ in LAYOUTS[:2]])
def test_verify_loads_a_huge_layer_count_in_bounded_memory(name: str, where: tuple[str, ...],
                                                           tmp_path: Path) -> None:
    """verify's torch loader (verify/landing_load.py) makes a row mask per parameter it loads into: one per layer of
    the config's count before, out of memory or killed; now per shipped layer and the few past them, and it agrees
    with check's landing (no DSP605) on the rest."""
    layers = 10**9
    draft = materialise(tmp_path / name, name, config=_declare(layers, where))
    run = run_limited("verify", str(draft), "--target-vocab-size", str(T), "--runtime", "vllm==0.34.0",
                      "--runtime", "sglang==0.5.23", "--format", "json")
    assert_contained(run)
    assert run.returncode in (0, 1), run.output[-3000:]
    doc = strict_json(run.stdout)
    assert "DSP605" not in finding_codes(doc), run.stdout[-3000:]
    assert "DSP363" in finding_codes(doc)


@pytest.mark.parametrize(("heads", "layers"), [(10**9, 1), (2, 10**9), (10**9, 10**9)], ids=["heads", "layers", "both"])
def test_a_huge_head_count_is_judged_in_bounded_time(heads: int, layers: int, tmp_path: Path) -> None:
    """A Medusa config (vLLM's own names: `blocks.{h}.layers.{i}`, `lm_heads.{h}`) declaring 10**9 heads or layers
    and shipping one of each: vLLM 0.30.0's loader refuses every parameter left unwritten in one set, which check
    names as the shipped indices, the few past them, and the rest as ranges; check and verify end in the limits."""
    import numpy as np
    from conftest import write_safetensors

    draft = tmp_path / "medusa"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps({"architectures": ["MedusaModel"], "model_type": "medusa",
                                                   "hidden_size": 16, "vocab_size": T, "num_heads": heads,
                                                   "num_hidden_layers": layers}))
    write_safetensors(draft / "model.safetensors", {"blocks.0.layers.0.weight": np.zeros((16, 16), np.float32),
                                                    "lm_heads.0.weight": np.zeros((T, 16), np.float32)})
    for command in ("check", "verify"):
        run = run_limited(command, str(draft), "--target-vocab-size", str(T), "--runtime", "vllm==0.30.0",
                          "--format", "json")
        assert_contained(run)
        assert run.returncode in (0, 1), run.output[-3000:]
        doc = strict_json(run.stdout)
        if command == "check":
            [row] = [r for c in doc["checkpoints"] for r in c["compatibility"]]
            assert row["error_code"] == "DSP367" and f"{heads - 1 if heads > 2 else layers - 1}}}" in row["error"], row
