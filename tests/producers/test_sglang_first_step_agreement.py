"""The upstream tier: check's SGLang first-step verdict against each release's own step executed live at the very
sizes of the checkpoint (tools/probe_first_step.py's cut of the release: build_markov_head, the crop, the draft step),
with the previous tokens a server meets: the capture's 0, then the largest id the target proposes, min(T, W) - 1.
Not the recorded table: the sizes, head types and tokens here are the checkpoint's own."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
from conftest import make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.release_store import DATA
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from probe_first_step import release_step
from probe_runtime import DEFAULT_CACHE
from sglang_release_model import fetch_sources

pytestmark = pytest.mark.upstream(runtime="sglang")
T = 96
DSPARK_READY = {"markov_head_type": "vanilla", "mask_token_id": 0}  # what SGLang's DSpark parser and worker require
# the releases whose first_step.json records a DSpark step (0.5.12-0.5.15 hold only EAGLE-3's: no DSpark class)
RECORDED = sorted(p.parent.name.removeprefix("sglang-") for p in DATA.glob("sglang-*/first_step.json")
                  if "dspark" in json.loads(p.read_text(encoding="utf-8")))
CASES = [(h, v, w) for h in ("vanilla", "gated", "rnn") for v in (48, 95, 96, 97, 128) for w in (96, 128)]


def executed(release: str, head_type: str, v: int, w: int) -> str | None:
    found = release_step(fetch_sources(release, DEFAULT_CACHE))
    assert found is not None, release
    build, crop, step, _ = found
    for token in (0, min(T, w) - 1):
        try:
            step(build(head_type, v), crop(torch.randn(4, w + 8), w).view(2, 2, w),
                 torch.full((2,), token, dtype=torch.long), torch.randn(2, 2, 16))
        except Exception as exc:  # noqa: BLE001 - the release's own exception is the observation
            return str(exc) or type(exc).__name__
    return None


@pytest.mark.parametrize("release", RECORDED)
def test_check_agrees_with_the_release_executed_at_the_checkpoint_s_sizes(tmp_path: Path, release: str) -> None:
    missed = []
    for i, (head_type, v, w) in enumerate(CASES):
        path = make_checkpoint(tmp_path / f"d{i}", vocab=v, draft_vocab=v, target_vocab=T,
                               config_extra={**DSPARK_READY, "markov_head_type": head_type})
        report = inspect_checkpoint(local_source(path), target=TargetVocab(T, "test", head_rows=w if w != T else None),
                                    runtimes=parse_selectors([f"sglang=={release}"]))
        (row,) = [e for e in report.compatibility if e.runtime == "sglang"]
        theirs = executed(release, head_type, v, w)
        agrees = row.error_code is None and (
            row.first_step_error_code is None if theirs is None
            else row.first_step_error_code == "DSP340" and theirs in (row.first_step_error or ""))
        if not agrees:
            missed.append((head_type, v, w, theirs, row.first_step_error))
    assert not missed, f"{len(missed)} of {len(CASES)} differ: {missed[:4]}"
