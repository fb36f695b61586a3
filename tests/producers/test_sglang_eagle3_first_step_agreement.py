"""The upstream tier: check's SGLang EAGLE-3 first-step verdict against each release's own step executed live at the
very sizes of the checkpoint (tools/probe_first_step_eagle3.py's cut of the release: the head statements of
LlamaForCausalLMEagle3.__init__, load_weights' d2t, set_embed(_and_head), the logits crop, fast_topk, draft_forward's
hot_token_id lookup, the next step's embedding), with the capture's zero hidden state, then one whose argmax is the
head's last id. Not the recorded table: the sizes here are the checkpoint's own. A failure is the capture's, or the
last id's in the crop or the lookup (its embedding at the next step needs the draft to pick it: not counted)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.release_store import DATA
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from probe_first_step import _frame
from probe_first_step_eagle3 import _stage, release_eagle3
from probe_runtime import DEFAULT_CACHE
from sglang_release_model import fetch_sources

pytestmark = pytest.mark.upstream(runtime="sglang")
T = 96
READY = {"model_type": "llama", "num_hidden_layers": 1}
RECORDED = sorted(p.parent.name.removeprefix("sglang-") for p in DATA.glob("sglang-*/first_step.json")
                  if '"eagle3"' in p.read_text(encoding="utf-8"))
# (tied, V, D or None, target head rows R, d2t length or None): sizes the recording's scales never used
CASES = [(False, 96, d, r, n) for d in (32, 96, 120) for r in (96, 104) for n in (None, d, d - 7, d + 9)]
CASES += [(False, v, None, r, n) for v in (96, 100) for r in (96, 104) for n in (None, 90, v)]
CASES += [(True, 96, d, r, n) for d in (32, 96) for r in (96, 104) for n in (None, 20, d)]
CASES += [(True, 96, None, r, None) for r in (96, 104)]


def executed(run: object, tied: bool, v: int, d: int | None, r: int, n: int | None, tree: Path) -> str | None:
    for anchor in ("capture", "last"):
        try:
            run(tied, d, v, r, n, anchor)  # type: ignore[operator]
        except Exception as exc:  # noqa: BLE001 - the release's own exception is the observation
            if anchor == "capture" or _stage(exc, tree, _frame) != "embed":
                return str(exc) or type(exc).__name__
    return None


def checkpoint(root: Path, tied: bool, v: int, d: int | None, n: int | None) -> Path:
    from test_sglang_eagle3 import midlayer  # tests/sglang: the layer as SGLang's exports name it

    tensors = midlayer(vocab=v, draft_vocab=d or v, target_vocab=T, d2t=n is not None, lm_head=not tied)
    if n is not None:
        rows = d or v
        tensors["d2t"] = tensors["d2t"][:n] if n <= rows else np.concatenate(
            [tensors["d2t"], np.zeros(n - rows, dtype=tensors["d2t"].dtype)])
    return make_checkpoint(root, family="eagle3-llama", vocab=v, draft_vocab=d or v, target_vocab=T, markov=False,
                           tensors=tensors, config_extra={**READY, "tie_word_embeddings": tied,
                                                          **({"draft_vocab_size": None} if d is None else {})})


@pytest.mark.parametrize("release", RECORDED)
def test_check_agrees_with_the_release_s_eagle3_step_executed_at_the_checkpoint_s_sizes(tmp_path: Path,
                                                                                        release: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sglang"))
    tree = fetch_sources(release, DEFAULT_CACHE)
    run = release_eagle3(tree)
    assert run is not None, release
    missed, compared = [], 0
    for i, (tied, v, d, r, n) in enumerate(CASES):
        report = inspect_checkpoint(local_source(checkpoint(tmp_path / f"d{i}", tied, v, d, n)),
                                    target=TargetVocab(T, "test", head_rows=r if r != T else None),
                                    runtimes=parse_selectors([f"sglang=={release}"]))
        (row,) = [e for e in report.compatibility if e.runtime == "sglang"]
        if row.error_code is not None:  # refused before the step
            continue
        compared += 1
        theirs = executed(run, tied, v, d, r, n, tree)
        agrees = (row.first_step_error_code is None if theirs is None
                  else row.first_step_error_code in ("DSP324", "DSP342") and theirs in (row.first_step_error or ""))
        if not agrees:
            missed.append((tied, v, d, r, n, theirs, row.first_step_error))
    assert compared and not missed, f"{len(missed)} of {compared} differ: {missed[:4]}"
