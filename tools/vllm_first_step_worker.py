"""Worker (run under one vLLM release's PYTHONPATH, tools/probe_vllm_first_step.py starts it): each checkpoint
through the release's own build and load (dspark_ckpt/verify/engine_vllm.py: registered class, real __init__,
real load_weights on the checkpoint's data), then its sharing and first draft step on CPU:
v1/worker/gpu/spec_decode/eagle/utils.py maybe_share_target_embed and _should_share under each loader's condition
(dspark/utils.py `draft_output_vocab_size == target_vocab_size`; dflash/utils.py `not config.has_own_lm_head`
from 0.31) against a target of T rows (the release's VocabParallelEmbedding / ParallelLMHead), then
compute_logits (EAGLE-3, DFlash: the d2t scatter) or compute_draft_logits + markov_embed + markov_bias +
map_draft_to_target (Qwen3 DSpark, dspark/speculator.py's greedy path), the argmax, and the target embedding's
lookup of the proposed ids. `python vllm_first_step_worker.py REQUEST OUT`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _engine() -> Any:
    spec = importlib.util.spec_from_file_location("engine_vllm", ROOT / "dspark_ckpt" / "verify" / "engine_vllm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _where(exc: BaseException) -> str | None:
    inside = [f for f in traceback.extract_tb(exc.__traceback__) if "/vllm/" in f.filename]
    if not inside:
        return None
    path = inside[-1].filename
    return f"{path[path.rindex('/vllm/') + 1:]}:{inside[-1].lineno}"


def _rising(torch: Any, rows: int, hidden: int) -> Any:
    return (torch.arange(rows, dtype=torch.float32)[:, None].expand(rows, hidden) / rows).contiguous()


def first_step(release: Any, model: Any, family: str, t: int, anchor: str, dflash_flag: bool) -> str:
    """The stage reached: `ok`; raises where the release raises."""
    torch = release.torch
    from vllm.model_executor.layers.vocab_parallel_embedding import (  # type: ignore[import-not-found]
        ParallelLMHead,
        VocabParallelEmbedding,
    )
    from vllm.v1.worker.gpu.spec_decode.eagle import utils  # type: ignore[import-not-found]

    hidden_size = model.config.hidden_size
    with release.set_current(release.VllmConfig()), torch.device("cpu"):
        target_head, target_embed = ParallelLMHead(t, hidden_size), VocabParallelEmbedding(t, hidden_size)
    for layer in (target_head, target_embed):  # rows padded to a multiple of 64 (vocab_parallel_embedding.py)
        layer.weight.data.copy_(_rising(torch, layer.weight.shape[0], hidden_size))
    # what model_loader/utils.py process_weights_after_loading does once a model has loaded (on CPU: the GEMM
    # dispatch, layer.cpu_linear), for the draft and for the target's head
    for module in [*model.modules(), target_head, target_embed]:
        method = getattr(module, "quant_method", None)
        if method is not None and hasattr(method, "process_weights_after_loading") and not hasattr(module,
                                                                                                   "cpu_linear"):
            method.process_weights_after_loading(module)
    draft_vocab = model.config.vocab_size
    d_out = getattr(model.config, "draft_vocab_size", None) or draft_vocab
    own = getattr(model, "lm_head", None)
    if own is not None and hasattr(own, "weight"):
        own.weight.data.copy_(_rising(torch, own.weight.shape[0], hidden_size))
    if family != "qwen3-dspark" or draft_vocab <= t:  # dspark/utils.py: embeddings shared only where V <= T
        utils.maybe_share_target_embed(model, model.model, SimpleNamespace(embed_tokens=target_embed))
    # the head: each loader's condition, then _should_share (eagle/utils.py load_eagle_model, 0.30-0.33 inline,
    # 0.34 share_target_lm_head; dspark/utils.py: draft_output_vocab_size == target_vocab_size; dflash/utils.py:
    # not config.has_own_lm_head from 0.31)
    can = (d_out == t if family == "qwen3-dspark" else
           not getattr(model.config, "has_own_lm_head", False) if family == "dflash" and dflash_flag else True)
    if can and utils._should_share(model, "has_own_lm_head", own, target_head):
        if own is not None:
            del model.lm_head
        model.lm_head = target_head
    hidden = (torch.zeros if anchor == "capture" else torch.ones)(2, hidden_size)
    if family == "qwen3-dspark":
        logits = model.compute_draft_logits(hidden)
        prev = torch.full((2,), 0 if anchor == "capture" else t - 1, dtype=torch.long)
        logits = logits + model.markov_bias(model.markov_embed(prev))
        ids = model.map_draft_to_target(logits.argmax(dim=-1))
    else:
        ids = model.compute_logits(hidden).argmax(dim=-1)
    model.model.embed_tokens(ids)
    return "ok"


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text())
    engine = _engine()
    worker = engine.release_worker()
    results = []
    with tempfile.TemporaryDirectory() as pg:
        release = worker.Release(pg)
        for case in request["cases"]:
            out: dict[str, Any] = {"id": case["id"]}
            try:
                seen, model = worker.engine_case(release, case)
                if seen.get("error") is not None or model is None:
                    out["load"] = {"error": seen.get("error")}
                    results.append(out)
                    continue
                # a fresh model for the data pass: the marker pass prefilled every parameter with NaN
                raw = json.loads((Path(case["folder"]) / "config.json").read_text())
                model, _, _ = release.build(release.model_class(seen["architecture"]), raw,
                                            {"target.hidden_size": worker._hidden(raw),
                                             "target.vocab_size": int(case["target_vocab"]), "bare": 0})
                release.load_weights(model, engine._real_weights(Path(case["folder"]), set()))
            except Exception as exc:  # noqa: BLE001 - refused at load: not a first step
                out["load"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                results.append(out)
                continue
            for anchor in ("capture", "last"):
                try:
                    out[anchor] = first_step(release, model, case["family"], int(case["target_vocab"]), anchor,
                                             bool(request.get("dflash_flag")))
                except Exception as exc:  # noqa: BLE001 - the release's own exception is the observation
                    out[anchor] = {"raises": type(exc).__name__, "text": (str(exc) or type(exc).__name__)[:400],
                                   "where": _where(exc)}
            results.append(out)
    Path(argv[1]).write_text(json.dumps({"version": release.version, "stubbed": release.stubbed,
                                         "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-2:]))
