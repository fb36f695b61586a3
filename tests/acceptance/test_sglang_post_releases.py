"""Every SGLang post release read (versions.SGLANG_POSTS_READ: its files that matter here equal those of the listed
release it follows) gets, through the real `check`, the verdict and the cited lines of that listed release: its base,
or the post release listed before it (0.5.4.post3: 0.5.4.post2). Issue 40: the EAGLE-3 aux-state lines had no key
for a 0.5.x post release and answered from 0.5.1 (fc fixed at 3), so a correct 4-aux-layer draft failed on
0.5.12.post1, 0.5.13.post1 and 0.5.15.post1 and loaded on their bases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import draft_tensors, make_checkpoint, run_cli
from packaging.version import Version

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes import eagle3_aux_sglang
from dspark_ckpt.runtimes.release import How, resolve
from dspark_ckpt.runtimes.versions import SGLANG_POSTS_READ, SGLANG_RELEASES

H, T = 16, 96
IDS4 = [1, 5, 9, 13]


def listed_before(post: str) -> str:
    """The listed release whose code a post release carries, by packaging's reading (independent of release.py):
    the newest listed release with the same release numbers at or before it."""
    v = Version(post)
    same = [r for r in SGLANG_RELEASES if Version(r).release == v.release and Version(r) <= v]
    return max(same, key=Version)


PAIRS = {post: listed_before(post) for post in SGLANG_POSTS_READ}
RELEASES = sorted(set(PAIRS) | set(PAIRS.values()), key=Version)


def test_the_one_policy_answers_each_post_release_with_the_release_it_follows() -> None:
    assert len(PAIRS) == len(SGLANG_POSTS_READ) > 40
    assert {p: PAIRS[p] for p in ("0.5.12.post1", "0.5.13.post1", "0.5.15.post1")} == \
        {"0.5.12.post1": "0.5.12", "0.5.13.post1": "0.5.13", "0.5.15.post1": "0.5.15"}
    answers = {p: (r.name, r.how) for p in PAIRS if (r := resolve("sglang", p, SGLANG_RELEASES)) is not None}
    assert answers == {p: (b, How.LINE) for p, b in PAIRS.items()}


def eagle3(root: Path, config: dict[str, Any], aux: int) -> Path:
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, hidden=H, markov=False)
    tensors["fc.weight"] = np.zeros((H, aux * H), dtype=np.float32)
    return make_checkpoint(root, family="eagle3-llama", vocab=T, draft_vocab=T, target_vocab=T, hidden=H,
                           config_extra={"num_hidden_layers": 1, **config}, tensors=tensors)


CASES: dict[str, Any] = {
    "eagle3, 3 aux layers": lambda root: eagle3(root, {}, 3),
    "eagle3, 4 aux layers read from eagle_config": lambda root: eagle3(
        root, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 4),
    "eagle3, 4 aux layers counted, fc for 4": lambda root: eagle3(
        root, {"num_aux_hidden_states": 4, "eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 4),
    "eagle3, 4 ids but fc for 3": lambda root: eagle3(
        root, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 3),
    "eagle3, 4 top-level ids only": lambda root: eagle3(root, {"eagle_aux_hidden_state_layer_ids": IDS4}, 4),
    "dflash": lambda root: make_checkpoint(root, family="dflash", markov=False),
    "qwen3-dspark": lambda root: make_checkpoint(root, config_extra={"markov_head_type": "vanilla"}),
    "gemma4-dspark": lambda root: make_checkpoint(root, family="gemma4-dspark"),
}


def check(path: Path, releases: list[str]) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    argv = [a for r in releases for a in ("--runtime", f"sglang=={r}")]
    result = run_cli("check", str(path), "--target-vocab-size", str(T), *argv, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    (ckpt,) = json.loads(result.stdout)["checkpoints"]
    return {e["version"]: {k: v for k, v in e.items() if k != "version"} for e in ckpt["compatibility"]}, \
        ckpt["findings"]


@pytest.mark.parametrize("case", CASES)
def test_a_post_release_is_judged_as_the_release_it_follows(tmp_path: Path, case: str) -> None:
    entries, said = check(CASES[case](tmp_path / "draft"), RELEASES)
    assert set(entries) == set(RELEASES)
    differ = {post: base for post, base in PAIRS.items() if entries[post] != entries[base]}
    assert differ == {}
    assert "DSP220" not in {f["code"] for f in said}  # every post release here was read: nothing is assumed


def test_a_correct_four_aux_layer_draft_loads_on_the_named_post_releases(tmp_path: Path) -> None:
    """The reproduction from the issue: fc sized for 4, eagle_config naming 4 layers: SGLang 0.5.12 reads both."""
    named = ["0.5.12", "0.5.12.post1", "0.5.13", "0.5.13.post1", "0.5.15", "0.5.15.post1", "0.5.11"]
    entries, _ = check(CASES["eagle3, 4 aux layers read from eagle_config"](tmp_path / "draft"), named)
    assert {r: (e["loads"], e["error_code"]) for r, e in entries.items()} == {
        **{r: (True, None) for r in named[:-1]}, "0.5.11": (False, entries["0.5.11"]["error_code"])}
    assert entries["0.5.11"]["error_code"] is not None


@pytest.mark.parametrize("post", SGLANG_POSTS_READ)
def test_a_post_release_cites_the_lines_of_the_release_it_follows(tmp_path: Path, post: str) -> None:
    """The findings' words (the aux lines cited included) for `post` alone are those for the release it follows,
    with the release named."""
    base = PAIRS[post]
    path = CASES["eagle3, 4 ids but fc for 3"](tmp_path / "draft")
    _, said = check(path, [post])
    _, said_base = check(path, [base])
    assert [(f["code"], f["message"].replace(post, base)) for f in said] == \
        [(f["code"], f["message"]) for f in said_base]
    raw = {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}, "hidden_size": H}
    read, read_base = (eagle3_aux_sglang.read_aux(raw, Family.EAGLE3_LLAMA, r) for r in (post, base))
    assert read is not None and read_base is not None
    assert read == read_base  # the same release's lines read, the same citation
