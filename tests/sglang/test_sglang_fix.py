"""`fix --for sglang` plans what SGLang needs, through the real CLI: a padded DSpark draft gets V = T with
markov_w1/markov_w2 trimmed (it loads and then fails the first draft step as it is), and releases no repair can
satisfy are left out (DSP505) unless named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from sglang_support import DSPARK_READY, Drafts, T, check, expect

from dspark_ckpt.repair import plan_fix
from dspark_ckpt.repair.actions import SetConfig, TrimRows
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS

BEFORE = ("0.4.2", "0.5.15")
ALL_DSPARK = ("0.5.16", "0.5.23")


@pytest.fixture
def drafts(tmp_path: Path) -> Drafts:
    return Drafts(tmp_path)


def test_a_padded_draft_is_trimmed_on_both_sides_for_sglang(drafts: Drafts, tmp_path: Path) -> None:
    path = drafts(vocab=128, draft_vocab=128, config_extra=DSPARK_READY)
    expect(check(path), {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("first-step", "DSP340")})
    p = plan_fix(path, target_vocab_size=T, runtimes=["sglang"])
    assert p.refusal is None and p.strategy == "trim"
    trims = {x.tensor: x.rows for x in p.actions if isinstance(x, TrimRows)}
    assert trims == {"lm_head.weight": T, "markov_head.markov_w2.weight": T, "embed_tokens.weight": T,
                     "markov_head.markov_w1.weight": T}
    assert {x.key: x.new for x in p.actions if isinstance(x, SetConfig)} == {"draft_vocab_size": T, "vocab_size": T}
    assert [o.error_code for o in p.before] == ["DSP340"] * 8 and all(o.loads for o in p.after)
    assert p.not_repaired_for == tuple(f"sglang=={v}" for v in SGLANG_VERSIONS[:SGLANG_VERSIONS.index("0.5.16")])
    assert p.not_repaired_for[0] == "sglang==0.4.2" and "sglang==0.5.4.post2" in p.not_repaired_for
    out = tmp_path / "fixed"
    result = run_cli("fix", str(path), "--target-vocab-size", str(T), "--for", "sglang", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fix for sglang 0.5.16-0.5.23" in result.stdout and "DSP505" in result.stdout
    # the releases left out, as one range: older than the draft's architecture, as check's gate leaves them (issue 41)
    assert "not repaired for sglang 0.4.2-0.5.15, older than the draft's architecture" in " ".join(result.stdout.split())
    expect(check(out), {BEFORE: ("error", "DSP309"), ALL_DSPARK: ("loads", frozenset({"DSP307"}))})
    config = json.loads((out / "config.json").read_text())
    assert (config["vocab_size"], config["draft_vocab_size"]) == (T, T)


def test_for_vllm_the_output_side_alone_is_trimmed(drafts: Drafts) -> None:
    path = drafts(vocab=128, draft_vocab=128, config_extra=DSPARK_READY)
    p = plan_fix(path, target_vocab_size=T, runtimes=["vllm>=0.25.0"])  # Qwen3DSparkModel's (registry.py @ v0.25.0)
    assert {x.tensor for x in p.actions if isinstance(x, TrimRows)} == {"lm_head.weight",
                                                                        "markov_head.markov_w2.weight"}


def test_a_release_named_with_double_equals_is_required(drafts: Drafts) -> None:
    path = drafts(vocab=128, draft_vocab=128, config_extra=DSPARK_READY)
    p = plan_fix(path, target_vocab_size=T, runtimes=["sglang==0.5.10", "sglang==0.5.23"])
    assert p.refusal is not None and p.refusal.code == "DSP502" and not p.actions
    assert p.refusal.message.startswith("no repair makes this draft load on sglang==0.5.10: as it is it fails with "
                                        "DSP309")


def test_a_config_sglang_refuses_is_not_repaired_by_trimming(drafts: Drafts) -> None:
    """Without markov_head_type every release with DSpark refuses the config: no release is left to repair for."""
    path = drafts(vocab=128, draft_vocab=128)
    p = plan_fix(path, target_vocab_size=T, runtimes=["sglang"])
    assert p.refusal is not None and p.refusal.code == "DSP502" and not p.actions
    assert "sglang 0.5.16-0.5.23: as it is it fails with DSP344" in p.refusal.message
