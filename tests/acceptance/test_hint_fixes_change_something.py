"""Every fix command a hint names changes something for that checkpoint, and the finding is gone afterwards.

The class, not one example: for each family, vocab kind (equal, padded, padded without lm_head, pruned) and d2t
(absent, zeros, absolute ids, offsets; a pruned draft with and without t2d), `check --format json` is run, and
every fix command any hint names is taken from it (shlex), run, and the result checked for the runtimes it names.
Where no mechanical repair exists the hint names no fix command and says what to re-export.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import draft_tensors, make_checkpoint, mapping_tables, run_cli

T, D = 96, 32
FIX = re.compile(r"`(dspark-ckpt fix [^`]+)`")
FAMILIES = ("qwen3-dspark", "gemma4-dspark", "dflash", "eagle3-llama", "eagle3-qwen3")
KINDS = {"equal": (T, T), "padded": (T + 4, T + 4), "padded-no-lm-head": (T + 4, T + 4), "pruned": (T, D)}
D2T = ("absent", "zeros", "absolute", "offsets")
CASES = [(fam, kind, d2t, t2d) for fam in FAMILIES for kind in KINDS for d2t in D2T
         for t2d in ((False, True) if kind == "pruned" else (False,))]


def build(root: Path, family: str, kind: str, d2t: str, t2d: bool) -> None:
    vocab, draft = KINDS[kind]
    dspark = family.endswith("dspark")
    tensors = draft_tensors(vocab=vocab, draft_vocab=draft, target_vocab=T, lm_head=kind != "padded-no-lm-head",
                            markov=dspark)
    offsets, flags = mapping_tables(D, T) if kind == "pruned" else (np.zeros(draft, dtype=np.int64), None)
    values = {"zeros": np.zeros(draft, dtype=np.int64), "offsets": offsets,
              "absolute": offsets + np.arange(draft, dtype=np.int64)}  # target ids where offsets belong
    if d2t in values:
        tensors["d2t"] = values[d2t]
    if t2d and flags is not None:
        tensors["t2d"] = flags
    make_checkpoint(root, family=family, vocab=vocab, draft_vocab=draft, target_vocab=T, tensors=tensors,
                    config_extra={} if dspark else {"num_hidden_layers": 1})


def check(cwd: Path, *args: str) -> dict[str, Any]:
    result = run_cli("check", *args, "--target-vocab-size", str(T), "--format", "json", "--isolated", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def findings(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for c in doc["checkpoints"] for f in c["findings"]]


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


@pytest.mark.parametrize(("family", "kind", "d2t", "t2d"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}{'-t2d' if c[3] else ''}" for c in CASES])
def test_every_suggested_fix_changes_something_and_clears_the_finding(tmp_path: Path, family: str, kind: str,
                                                                     d2t: str, t2d: bool) -> None:
    build(tmp_path / "draft", family, kind, d2t, t2d)
    before = files(tmp_path / "draft")
    for n, f in enumerate(findings(check(tmp_path, "draft", "--runtime", "vllm"))):
        for command in FIX.findall(f["hint"] or ""):
            argv = shlex.split(command)
            out = f"fixed-{n}"
            fixed = run_cli(*argv[1:], "--out", out, "--isolated", cwd=tmp_path)
            assert fixed.returncode == 0, (f["code"], command, fixed.stdout + fixed.stderr)
            assert files(tmp_path / out) != before, (f["code"], command, "changed nothing")
            runtimes = [w for i, word in enumerate(argv[:-1]) if word == "--for" for w in ("--runtime", argv[i + 1])]
            after = {x["code"] for x in findings(check(tmp_path, out, *runtimes))}
            assert f["code"] not in after, (f["code"], command)
        if f["severity"] == "error" and "fix cannot repair" in (f["hint"] or ""):
            assert "dspark-ckpt fix" not in f["hint"] and "re-export" in f["hint"], f


def test_absolute_d2t_ids_become_offsets(tmp_path: Path) -> None:
    """The issue's reproduction: an EAGLE-3 draft whose d2t holds target ids; the hint names offset-d2t, and the
    d2t written is exactly the offsets (d2t[i] - i), which the original pair describes."""
    build(tmp_path / "draft", "eagle3-llama", "pruned", "absolute", False)
    (hint,) = [f["hint"] for f in findings(check(tmp_path, "draft", "--runtime", "vllm")) if f["code"] == "DSP402"]
    (command,) = FIX.findall(hint)
    assert "--strategy offset-d2t" in command
    result = run_cli(*shlex.split(command)[1:], "--out", "fixed", "--isolated", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    raw = (tmp_path / "fixed" / "model.safetensors").read_bytes()
    n = int.from_bytes(raw[:8], "little")
    begin, end = json.loads(raw[8:8 + n])["d2t"]["data_offsets"]
    written = np.frombuffer(raw[8 + n + begin:8 + n + end], dtype="<i8")
    assert (written == mapping_tables(D, T)[0]).all()


@pytest.mark.parametrize(("build_args", "forced", "would"), [
    (("eagle3-llama", "pruned", "absolute", False), "rebuild-d2t", "offset-d2t applies"),
    (("eagle3-llama", "pruned", "absolute", False), "trim", "offset-d2t applies"),
    (("eagle3-llama", "pruned", "absent", False), "rebuild-d2t", "no strategy applies"),
    (("qwen3-dspark", "padded-no-lm-head", "zeros", False), "trim", "share-target-head applies"),
])
def test_a_forced_strategy_that_does_not_apply_while_errors_remain_exits_1(
        tmp_path: Path, build_args: tuple[str, str, str, bool], forced: str, would: str) -> None:
    build(tmp_path / "draft", *build_args)
    # every vLLM release that registers the family: no repair loads a Qwen3 DSpark draft before 0.25.0
    # (registry.py @ v0.25.0 L597), so `--for vllm` would be refused for every strategy
    runtimes = "vllm>=0.25.0" if build_args[0] == "qwen3-dspark" else "vllm"
    result = run_cli("fix", "draft", "--target-vocab-size", str(T), "--for", runtimes, "--strategy", forced,
                     "--out", "fixed", "--isolated", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "DSP503" in result.stdout and f"{forced} does not apply" in result.stdout and would in result.stdout
    assert not (tmp_path / "fixed").exists()
    if would != "no strategy applies":  # the command it suggests repairs the draft
        (command,) = FIX.findall(result.stdout.split("hint:", 1)[1])
        again = run_cli(*shlex.split(command)[1:], "--out", "fixed", "--isolated", cwd=tmp_path)
        assert again.returncode == 0, again.stdout + again.stderr


def test_a_forced_strategy_that_does_not_apply_to_a_clean_draft_is_nothing_to_do(tmp_path: Path) -> None:
    build(tmp_path / "draft", "eagle3-llama", "pruned", "offsets", True)
    result = run_cli("fix", "draft", "--target-vocab-size", str(T), "--for", "vllm", "--strategy", "trim",
                     "--isolated", cwd=tmp_path)
    assert result.returncode == 0 and "nothing to do" in result.stdout, result.stdout
