"""Class 6: `verify` on configs whose sizes would make torch allocate absurd tensors is refused before anything is
allocated (DSP-E013, exit 2), by the real CLI under RLIMIT_AS 2 GiB; an honest tiny draft still verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_checkpoint
from limits import assert_contained, assert_outcome, run_limited

pytest.importorskip("torch")

ABSURD = {
    "vocab-2-pow-34": {"vocab_size": 2**34, "draft_vocab_size": 2**34},
    "draft-vocab-2-pow-34": {"draft_vocab_size": 2**34},
    "hidden-2-pow-30": {"hidden_size": 2**30},
    "markov-rank-2-pow-34": {"markov_rank": 2**34},
    "vocab-2-pow-40": {"vocab_size": 2**40, "draft_vocab_size": 2**40},
}


def verify(folder: Path, *extra: str, env: dict[str, str] | None = None):
    return run_limited("verify", str(folder), "--target-vocab-size", "96", "--device", "cpu", "--runtime", "vllm",
                       *extra, env=env)


def with_config(tmp_path: Path, changes: dict[str, int]) -> Path:
    folder = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))
    return folder


@pytest.mark.parametrize("name", sorted(ABSURD))
def test_absurd_sizes_are_refused_before_allocating(name: str, tmp_path: Path) -> None:
    run = verify(with_config(tmp_path, ABSURD[name]))
    assert_outcome(run, "DSP-E013", 2)
    assert "memory budget" in run.stderr and "nothing was allocated" in run.stderr


def test_the_budget_is_stated_and_can_be_set(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    ok = verify(folder)
    assert_contained(ok)
    assert ok.returncode in (0, 1), ok.output[-2000:]
    tight = verify(folder, env={"DSPARK_CKPT_VERIFY_MEMORY": "1K"})
    assert_outcome(tight, "DSP-E013", 2)
    assert "DSPARK_CKPT_VERIFY_MEMORY" in tight.stderr
    wrong = verify(folder, env={"DSPARK_CKPT_VERIFY_MEMORY": "lots"})
    assert_outcome(wrong, "DSP-E013", 2)
