"""Each repair end to end through the CLI: fixture before, fixture after, check passing, untouched bytes proven equal."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import make_checkpoint, mapping_tables, run_cli
from listed import vllm_minors
from safetensors import safe_open

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.report import Report
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.output.documents import report_json
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import LocalFolder


@dataclass(frozen=True)
class Case:
    name: str
    strategy: str
    target: int
    build: dict[str, Any]
    runtimes: tuple[str, ...] = ()  # --for; () means the default, all (every vLLM version and SGLang)
    force: bool = False  # pass --strategy
    changed: frozenset[str] = field(default_factory=frozenset)  # tensors whose bytes may change


# SGLang's DSpark needs markov_head_type and mask_token_id in every release that has it (0.5.16+): without them no
# repair could make a draft load there.
SGLANG_READY = {"config_extra": {"markov_head_type": "vanilla", "mask_token_id": 0}}
PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96, **SGLANG_READY)
INKLING = dict(vocab=128, draft_vocab=128, target_vocab=96, **SGLANG_READY)  # V = D > T, as Inkling's 201024/200058
OUTPUT_SIDE = frozenset({"lm_head.weight", "markov_head.markov_w2.weight"})
INPUT_SIDE = frozenset({"embed_tokens.weight", "markov_head.markov_w1.weight"})
# every vLLM release with Qwen3 DSpark (registry.py @ v0.25.0 L597 first): the output-side repairs alone; SGLang
# would need V = T too, or a V-row markov_w2 (pruned)
VLLM = ("vllm>=0.25.0",)
BOTH = (*VLLM, "sglang>=0.5.16")  # every vLLM and every SGLang release with Qwen3 DSpark (registered from 0.5.16)
CASES = {c.name: c for c in (
    Case("trim", "trim", 96, PADDED, VLLM, changed=OUTPUT_SIDE),
    Case("trim-sharded-stray-d2t", "trim", 96, dict(PADDED, shards=3, d2t=True), BOTH,
         changed=OUTPUT_SIDE | INPUT_SIDE | {"d2t"}),
    Case("trim-inkling", "trim", 96, dict(INKLING, shards=2), BOTH, changed=OUTPUT_SIDE | INPUT_SIDE),
    Case("trim-input", "trim-input", 96, dict(vocab=128, draft_vocab=96, target_vocab=96, **SGLANG_READY), BOTH,
         changed=INPUT_SIDE),
    Case("share-target-head", "share-target-head", 96, dict(PADDED, lm_head=False), VLLM,
         changed=frozenset({"markov_head.markov_w2.weight"})),
    Case("share-target-head-input", "share-target-head", 96, dict(PADDED, lm_head=False), BOTH,
         changed=INPUT_SIDE | {"markov_head.markov_w2.weight"}),
    Case("identity-d2t", "identity-d2t", 96, dict(PADDED, shards=2), ("vllm==0.29.0",), force=True,
         changed=frozenset({"d2t"})),
    Case("drop-d2t", "drop-d2t", 96, dict(vocab=96, draft_vocab=96, target_vocab=96, d2t=True, shards=3,
                                         **SGLANG_READY), BOTH, changed=frozenset({"d2t"})),
    Case("rebuild-d2t", "rebuild-d2t", 128, dict(vocab=128, draft_vocab=32, target_vocab=128, t2d=True), VLLM,
         changed=frozenset({"d2t"})),
    Case("rebuild-d2t-all-zero", "rebuild-d2t", 128,
         dict(vocab=128, draft_vocab=32, target_vocab=128, t2d=True, d2t="zeros", shards=2), VLLM,
         changed=frozenset({"d2t"})),
)}


def fix_args(case: Case, folder: Path, *extra: str) -> list[str]:
    args = ["fix", str(folder), "--target-vocab-size", str(case.target)]
    for rt in case.runtimes:
        args += ["--for", rt]
    if case.force:
        args += ["--strategy", case.strategy]
    return [*args, *extra]


def tensor_digests(folder: Path) -> dict[str, str]:
    """sha256 of every tensor's bytes, read through the reference safetensors library."""
    out = {}
    for shard in sorted(folder.glob("*.safetensors")):
        with safe_open(shard, framework="numpy") as f:
            for name in f.keys():
                out[name] = hashlib.sha256(np.ascontiguousarray(f.get_tensor(name)).tobytes()).hexdigest()
    return out


def load_tensor(folder: Path, name: str) -> np.ndarray:
    for shard in folder.glob("*.safetensors"):
        with safe_open(shard, framework="numpy") as f:
            if name in f.keys():
                return f.get_tensor(name)
    raise KeyError(name)


def tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def check_json(folder: Path, case: Case) -> dict[str, Any]:
    """`dspark-ckpt check --format json` for the case's runtimes, through the library (the CLI's own path)."""
    report = Report((inspect_checkpoint(LocalFolder(folder), target=TargetVocab(case.target, "test"),
                                        runtimes=parse_selectors(list(case.runtimes) or None)),))
    doc = report_json(report)["checkpoints"][0]
    doc.pop("source")
    return {"exit": 1 if any(f.severity == "error" for f in report.findings) else 0, **doc}


def build(case: Case, folder: Path) -> Path:
    return make_checkpoint(folder, **case.build)


@pytest.mark.parametrize("name", list(CASES))
def test_repair_out_then_in_place(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    before = build(case, tmp_path / "before")
    original = tree_digest(before)
    assert check_json(before, case)["exit"] == 1

    done = run_cli(*fix_args(case, before, "--out", str(tmp_path / "after")))
    assert done.returncode == 0, done.stdout + done.stderr
    after = tmp_path / "after"
    assert f"strategy {case.strategy}" in done.stdout and "check passes" in done.stdout
    assert tree_digest(before) == original, "--out must not touch the source"
    report = check_json(after, case)
    assert all(c["loads"] for c in report["compatibility"]), report
    errors = {f["code"] for f in report["findings"] if f["severity"] == "error"}
    assert errors == set(), report["findings"]
    # An identity d2t on a padded draft still lets rows [T, D) be proposed: check keeps warning (DSP305).
    warned = {f["code"] for f in report["findings"] if f["severity"] == "warning"}
    assert ("DSP305" in warned) == (case.strategy == "identity-d2t"), report["findings"]
    _assert_bytes(case, before, after)

    again = run_cli(*fix_args(case, after, "--in-place"))
    assert again.returncode == 0 and "nothing to do" in again.stdout, again.stdout

    in_place = run_cli(*fix_args(case, before, "--in-place"))
    assert in_place.returncode == 0, in_place.stdout + in_place.stderr
    assert tree_digest(before) == tree_digest(after), "--in-place and --out give the same files"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no staging folder or lock left"


def _assert_bytes(case: Case, before: Path, after: Path) -> None:
    old, new = tensor_digests(before), tensor_digests(after)
    for name in set(old) - case.changed:
        assert new[name] == old[name], f"{name} changed"
    assert set(new) - set(old) <= case.changed
    config = json.loads((after / "config.json").read_text())
    if case.strategy in ("trim", "share-target-head", "trim-input"):
        original = json.loads((before / "config.json").read_text())
        for key, side in (("draft_vocab_size", OUTPUT_SIDE), ("vocab_size", INPUT_SIDE)):
            assert config[key] == (case.target if case.changed & side else original[key]), key
        for name in case.changed - {"d2t"}:  # a trimmed tensor is exactly the original's first T rows
            head = np.ascontiguousarray(load_tensor(before, name)[: case.target])
            assert load_tensor(after, name).shape == head.shape, name
            assert new[name] == hashlib.sha256(head.tobytes()).hexdigest() != old[name], name
        assert "d2t" not in new
    elif case.strategy == "identity-d2t":
        d2t = load_tensor(after, "d2t")
        assert d2t.dtype == np.int64 and d2t.shape == (case.build["draft_vocab"],) and not d2t.any()
    elif case.strategy == "drop-d2t":
        assert "d2t" not in new
    elif case.strategy == "rebuild-d2t":
        expected = mapping_tables(case.build["draft_vocab"], case.target, 0)[0]
        assert np.array_equal(load_tensor(after, "d2t"), expected)
    changed_shards = {p.name for p in after.glob("*.safetensors")
                      if not (before / p.name).exists() or (before / p.name).read_bytes() != p.read_bytes()}
    assert changed_shards, "a repair rewrites or adds at least one shard"
    for shard in changed_shards:
        with safe_open(after / shard, framework="numpy") as f:
            recorded = json.loads(f.metadata()["dspark_ckpt.fix"])
        assert recorded and all(r["reason"].startswith("DSP") for r in recorded)
    if (after / "model.safetensors.index.json").exists():
        index = json.loads((after / "model.safetensors.index.json").read_text())
        assert set(index["weight_map"]) == set(new)
        assert index["metadata"]["total_size"] == sum(load_tensor(after, n).nbytes for n in new)


def test_out_hard_links_unchanged_shards(tmp_path: Path) -> None:
    case = CASES["identity-d2t"]
    before = build(case, tmp_path / "before")
    assert run_cli(*fix_args(case, before, "--out", str(tmp_path / "after"))).returncode == 0
    for shard in before.glob("*.safetensors"):
        assert os.path.samefile(shard, tmp_path / "after" / shard.name), "unchanged shards are hard links"


def test_dry_run_shows_plan_and_diff_and_writes_nothing(tmp_path: Path) -> None:
    case = CASES["trim"]
    before = build(case, tmp_path / "before")
    original = tree_digest(before)
    result = run_cli(*fix_args(case, before, "--dry-run"))
    assert result.returncode == 1
    assert '-  "draft_vocab_size": 100,\n' in result.stdout and '+  "draft_vocab_size": 96,\n' in result.stdout
    assert "trim lm_head.weight to its first 96 rows" in result.stdout
    assert tree_digest(before) == original and sorted(p.name for p in tmp_path.iterdir()) == ["before"]
    doc = json.loads(run_cli(*fix_args(case, before, "--dry-run", "--format", "json")).stdout)["checkpoints"][0]
    assert doc["status"] == "planned" and doc["strategy"] == "trim" and doc["steps"][0] == "lock"
    assert {a["reason"] for a in doc["actions"]} == {"DSP302"}


def test_dry_run_on_a_clean_draft_exits_zero(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "clean")
    result = run_cli("fix", str(folder), "--target-vocab-size", "96", "--dry-run")
    assert result.returncode == 0 and "nothing to do" in result.stdout


def test_inkling_shaped_draft_fixed_for_all_loads_on_every_runtime_check_knows(tmp_path: Path) -> None:
    """--for all: every vLLM and every SGLang release that has Qwen3 DSpark (vLLM 0.25.0+, SGLang 0.5.16+); the
    earlier releases have no class for it, which no repair changes (DSP505)."""
    before = make_checkpoint(tmp_path / "inkling", **INKLING, shards=2)
    done = run_cli("fix", str(before), "--target-vocab-size", "96", "--out", str(tmp_path / "fixed"), "--for", "all")
    assert done.returncode == 0 and "strategy trim" in done.stdout, done.stdout + done.stderr
    assert "trim embed_tokens.weight to its first 96 rows" in done.stdout and "DSP505" in done.stdout
    checked = run_cli("check", str(tmp_path / "fixed"), "--target-vocab-size", "96", "--format", "json",
                      "--runtime", *VLLM, "--runtime", "sglang>=0.5.16")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    compat = json.loads(checked.stdout)["checkpoints"][0]["compatibility"]
    assert sorted((c["runtime"], c["version"]) for c in compat) == \
        sorted([("vllm", v) for v in vllm_minors("0.25.0")] + [("sglang", f"0.5.{n}") for n in range(16, 24)])
    # SGLang drafts with the target's lm_head and embedding: the draft's own are ignored (DSP307, a warning).
    assert all(c["loads"] and set(c["silent_codes"]) <= ({"DSP307"} if c["runtime"] == "sglang" else set())
               for c in compat), compat
    assert "nothing to do" in run_cli("fix", str(tmp_path / "fixed"), "--target-vocab-size", "96",
                                      "--dry-run", "--for", "all").stdout
    # vLLM never needs V = T: fixed for vLLM only, the same draft gets the plain output-side trim, nothing more.
    plain = json.loads(run_cli("fix", str(before), "--target-vocab-size", "96", "--for", *VLLM, "--dry-run",
                               "--format", "json").stdout)["checkpoints"][0]
    assert plain["strategy"] == "trim" and {a.get("tensor") for a in plain["actions"]} == set(OUTPUT_SIDE) | {None}
    assert [a["key"] for a in plain["actions"] if a["action"] == "set-config"] == ["draft_vocab_size"]
