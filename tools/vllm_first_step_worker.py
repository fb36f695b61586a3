"""Worker (run under one vLLM release's PYTHONPATH, tools/probe_vllm_first_step.py starts it): each checkpoint
through the release's own build and load (dspark_ckpt/verify/engine_vllm.py: registered class, real __init__,
real load_weights on the checkpoint's data), then its sharing and first draft step on CPU (engine_vllm.first_step,
the step `verify --engine installed` runs too):
v1/worker/gpu/spec_decode/eagle/utils.py maybe_share_target_embed and _should_share under each loader's condition
(dspark/utils.py `draft_output_vocab_size == target_vocab_size`; dflash/utils.py `not config.has_own_lm_head`
from 0.31; before 0.30 the release's own load_eagle_model, load_dflash_model, load_dspark_model run on the loaded
draft: engine_vllm._load_eagle_model, _load_inline) against a target of T rows (the release's VocabParallelEmbedding / ParallelLMHead), then
compute_logits (EAGLE-3, DFlash: the d2t scatter) or compute_draft_logits + markov_embed + markov_bias +
map_draft_to_target (Qwen3 DSpark, dspark/speculator.py's greedy path), the argmax, and the target embedding's
lookup of the proposed ids. `python vllm_first_step_worker.py REQUEST OUT`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _engine() -> Any:
    spec = importlib.util.spec_from_file_location("engine_vllm", ROOT / "dspark_ckpt" / "verify" / "engine_vllm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
                if not seen.get("registered"):  # the registry's answer, in the engine's words (verify/engine.py)
                    out["load"] = {"error": {"type": None, "message": f"{seen.get('architecture')} is not in this "
                                                                      "vLLM's _SPECULATIVE_DECODING_MODELS"},
                                   "unregistered": True}
                    results.append(out)
                    continue
                if seen.get("error") is not None or model is None:
                    out["load"] = {"error": seen.get("error")}
                    results.append(out)
                    continue
                # a fresh model for the data pass: the marker pass prefilled every parameter with NaN
                model = engine.stepped_model(worker, release, case, seen["architecture"])
            except Exception as exc:  # noqa: BLE001 - refused at load: not a first step
                out["load"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                results.append(out)
                continue
            out.update(engine.step_outcomes(release, model, case["family"], int(case["target_vocab"]),
                                            bool(request.get("dflash_flag"))))
            results.append(out)
    Path(argv[1]).write_text(json.dumps({"version": release.version, "stubbed": release.stubbed,
                                         "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-2:]))
