"""The installed vLLM's own draft code run on a whole checkpoint without an engine (verify's worker subprocess).

The model class comes from vLLM's registry and is built with its real `__init__`, layers and all, exactly as the
release-model probe builds it (verify/release_worker.py: a 1-rank gloo group, a real `VllmConfig` whose draft
config is the one vLLM builds from config.json, the target's vocab and hidden size); then its real `load_weights`
runs twice. First over every tensor of the checkpoint as a marker tensor of its shape, into parameters prefilled with
NaN (release_worker.observe_load, the agreement tests' load mode): the exception it raises, the parameters no tensor
wrote (or wrote only in part), the tensors cut to fit. Then over the checkpoint's own data for the vocabulary tensors
(lm_head, embed_tokens, d2t, t2d, the Markov and confidence heads; zeros of their shape for the rest), for the state
it leaves: `has_own_lm_head`, `has_own_embed_tokens`, what `draft_id_to_target_id` holds. `python engine_vllm.py
REQUEST OUT` reads a JSON request and writes one JSON result per case. Only the standard library, torch and vLLM (and
what vLLM imports) are used: the file runs as a script, and loads release_worker.py beside it by path.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

# The tensors whose data the second pass reads from the checkpoint (verify/runtime_load.py needs_data).
VOCAB_PARTS = ("lm_head", "embed_tokens", "d2t", "t2d", "markov_head.", "confidence_head.")


def release_worker() -> ModuleType:
    """verify/release_worker.py, beside this file (loaded by path: this script imports nothing of dspark_ckpt)."""
    name = "release_model_worker"  # the name tools/release_model_worker.py gives it
    found = sys.modules.get(name)
    if found is None or getattr(found, "__file__", None) != str(Path(__file__).with_name("release_worker.py")):
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("release_worker.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _real_weights(folder: Path, shipped: set[str]) -> Iterator[tuple[str, Any]]:
    """The checkpoint in vLLM's order (files naturally sorted, names sorted): the vocabulary tensors' own data,
    zeros of their shape for the rest (the marker pass has already observed where those land)."""
    import re

    import torch
    from safetensors import safe_open

    def natural(name: str) -> list[Any]:
        return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]

    for file in sorted((p.name for p in folder.glob("*.safetensors")), key=natural):
        with safe_open(str(folder / file), framework="pt", device="cpu") as handle:
            for name in sorted(handle.keys()):
                shipped.add(name)
                if any(part in name for part in VOCAB_PARTS):
                    yield name, handle.get_tensor(name)
                else:
                    piece = handle.get_slice(name)
                    kind = torch.int64 if name.rsplit(".", 1)[-1] in ("d2t", "t2d") else torch.float32
                    yield name, torch.zeros(piece.get_shape(), dtype=kind)


def _state(model: Any, shipped: set[str], config: dict[str, Any], target_vocab: int) -> dict[str, Any]:
    d2t = getattr(model, "draft_id_to_target_id", None)
    summary = None
    if d2t is not None:
        import torch

        ids = torch.arange(d2t.numel(), device=d2t.device) + d2t.detach().to(torch.long)
        summary = {"length": int(d2t.numel()), "all_zero": bool((d2t == 0).all()),
                   "max_target_id": int(ids.max()) if ids.numel() else None,
                   "out_of_range": int((ids >= target_vocab).sum())}
    head = getattr(model, "lm_head", None)
    return {
        "d2t_param": d2t is not None, "d2t_loaded": d2t is not None and any("d2t" in n for n in shipped),
        "d2t": summary, "has_own_lm_head": bool(getattr(model, "has_own_lm_head", False)),
        "has_own_embed_tokens": bool(getattr(model, "has_own_embed_tokens", False)),
        "lm_head_rows": getattr(head, "org_vocab_size", None), "draft_vocab_size": config.get("draft_vocab_size"),
    }


def run_case(worker: ModuleType, release: Any, case: dict[str, Any]) -> dict[str, Any]:
    """Build the registered class for the draft's architecture; run its load_weights on every tensor."""
    found: tuple[dict[str, Any], Any] = worker.engine_case(release, case)
    out, model = found
    config = out.pop("config", {})
    error = out.get("error")
    if error is not None and error["phase"] == "init" and error["type"] == "AttributeError" \
            and "SimpleNamespace" in error["message"]:
        return {**out, "error": None, "adapter_error": error}  # our stand-in config lacks what it reads
    if model is None:
        return out
    shipped: set[str] = set()
    try:
        model.load_weights(_real_weights(Path(case["folder"]), shipped))
    except Exception as exc:  # noqa: BLE001 - raised already in the marker pass: the state is what it left
        out["data_error"] = worker._error(exc)
    out["state"] = _state(model, shipped, config, int(case["target_vocab"]))
    return out


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text())
    results: list[dict[str, Any]] = []
    try:
        worker = release_worker()
        with tempfile.TemporaryDirectory() as pg:
            release = worker.Release(pg)
            import vllm  # type: ignore[import-not-found, unused-ignore]

            for case in request["cases"]:
                try:
                    results.append({"id": case["id"], **run_case(worker, release, case)})
                except Exception as exc:  # noqa: BLE001 - an adapter failure, reported per case
                    results.append({"id": case["id"], "adapter_error": {"phase": "adapter", **worker._error(exc)}})
        doc = {"ok": True, "vllm_version": release.version, "vllm_file": getattr(vllm, "__file__", None),
               "stubbed": release.stubbed, "results": results}
    except Exception as exc:  # noqa: BLE001 - vLLM cannot be imported or set up here: say why
        doc = {"ok": False, "reason": f"{type(exc).__name__}: {exc}", "results": results}
    Path(argv[1]).write_text(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-2:]))  # REQUEST OUT (run as a script, or through runpy by engine.run_worker)
