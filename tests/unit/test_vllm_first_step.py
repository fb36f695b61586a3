"""vLLM's first draft step as each release's own code ran it over the probe's matrix (tools/probe_vllm_first_step.py,
release_data/vllm-X/first_step.json, 0.30.0-0.34.0): check reports a recorded failure as DSP371 in the release's
words, at the draft's own sizes, and nothing where the step ran. Read from the committed data only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.release_store import DATA
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source

RECORDED = sorted(p.parent.name.removeprefix("vllm-") for p in DATA.glob("vllm-*/first_step.json"))


def vllm_row(path: Path, t: int, release: str):  # type: ignore[no-untyped-def]
    report = inspect_checkpoint(local_source(path), target=TargetVocab(t, "test"),
                                runtimes=parse_selectors([f"vllm=={release}"]))
    (row,) = [e for e in report.compatibility if e.runtime == "vllm"]
    return row


def test_the_recorded_releases_and_their_cells() -> None:
    assert {"0.30.0", "0.34.0"} <= set(RECORDED)
    for release in RECORDED:
        doc = json.loads((DATA / f"vllm-{release}" / "first_step.json").read_text(encoding="utf-8"))
        assert (doc["runtime"], doc["release"], doc["target_vocab"]) == ("vllm", release, 96)
        assert len(doc["cells"]) == 192  # 3 families x 4 kinds x 16 shipped subsets


@pytest.mark.parametrize("release", RECORDED)
@pytest.mark.parametrize(("t", "v"), [(96, 128), (80, 112)])  # the recorded sizes, and others
def test_an_expanded_eagle3_draft_loads_then_fails_compute_logits(tmp_path: Path, release: str, t: int,
                                                                  v: int) -> None:
    path = make_checkpoint(tmp_path / "d", family="eagle3-llama", vocab=v, draft_vocab=t, target_vocab=t,
                           markov=False)
    row = vllm_row(path, t, release)
    assert row.error_code is None and row.first_step_error_code == "DSP371", row
    assert row.first_step_error == (f"AssertionError: Expected logits to have shape (*, {v}), but got "
                                    f"torch.Size([2, {t}])")


@pytest.mark.parametrize("release", RECORDED)
@pytest.mark.parametrize("family", ["eagle3-llama", "dflash", "qwen3-dspark"])
def test_a_pruned_draft_with_its_head_and_d2t_runs_its_first_step(tmp_path: Path, release: str,
                                                                  family: str) -> None:
    path = make_checkpoint(tmp_path / "d", family=family, vocab=96, draft_vocab=64, target_vocab=96, d2t=True,
                           markov=family == "qwen3-dspark")
    row = vllm_row(path, 96, release)
    assert row.first_step_error_code is None, row
