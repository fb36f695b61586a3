"""Through the CLI: an EAGLE-3 draft that SGLang loads and whose first draft step then fails, in the words each
release's own step raised when it was run (`eagle3` in release_data/sglang-X/first_step.json,
tools/probe_first_step_eagle3.py, 0.5.12+): a pruned draft whose d2t is shorter than its head (hot_token_id indexed
with the head's last id), and a tied draft with `draft_vocab_size: null` (the crop compares with None, 0.5.15+). fix
rebuilds the short d2t from its t2d; the tied null one it does not repair (which D was meant is not in the files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import draft_tensors, make_checkpoint, run_cli

from dspark_ckpt.runtimes.release_store import DATA
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS

T, D, SHORT = 96, 64, 40
READY = {"model_type": "llama", "num_hidden_layers": 1}
EAGLE3 = {v: json.loads(p.read_text(encoding="utf-8"))["eagle3"]["steps"] for v in SGLANG_VERSIONS
          if (p := DATA / f"sglang-{v}" / "first_step.json").is_file() and '"eagle3"' in p.read_text(encoding="utf-8")}


def recorded(version: str, kind: str, order: str, anchor: str) -> Any:
    return EAGLE3[version][kind][order][anchor]  # "ok" or {raises, stage, text, where}


def rows(tmp_path: Path, draft: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    result = run_cli("check", str(draft), "--target-vocab-size", str(T), "--runtime", "sglang", "--format", "json",
                     cwd=tmp_path)
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    return result.returncode, {c["version"]: c for c in checkpoint["compatibility"]}


def short_d2t_draft(root: Path) -> Path:
    tensors = draft_tensors(vocab=T, draft_vocab=D, target_vocab=T, d2t=True, t2d=True, markov=False)
    tensors["d2t"] = tensors["d2t"][:SHORT]
    return make_checkpoint(root, family="eagle3-llama", vocab=T, draft_vocab=D, target_vocab=T, markov=False,
                           tensors=tensors, config_extra=READY)


def test_a_short_d2t_loads_then_fails_at_the_first_draft_step_in_the_release_s_words(tmp_path: Path) -> None:
    draft = short_d2t_draft(tmp_path / "short")
    code, found = rows(tmp_path, draft)
    assert code == 1 and {"0.5.12", "0.5.23"} <= set(EAGLE3)
    for version in EAGLE3:
        row, seen = found[version], recorded(version, "own", "L<C=R" if D == T else "L<C<R", "last")
        assert row["loads"] and row["first_step_error_code"] == "DSP324", (version, row)
        words = seen["text"].replace("{c-1}", str(D - 1)).replace("{l}", str(SHORT))
        assert words == f"index {D - 1} is out of bounds for dimension 0 with size {SHORT}"
        assert words in row["first_step_error"], (version, row["first_step_error"])
    text = run_cli("check", str(draft), "--target-vocab-size", str(T), "--runtime", "sglang==0.5.23", "-v",
                   cwd=tmp_path)
    assert (f"1st step DSP324: fails at the first draft step: hot_token_id (d2t + arange(len(d2t)), {SHORT} entries) "
            f"is indexed with draft ids up to {D - 1}: index {D - 1} is out of bounds for dimension 0 with size "
            f"{SHORT}") in " ".join(text.stdout.split())


def test_fix_rebuilds_the_short_d2t_from_its_t2d(tmp_path: Path) -> None:
    draft, out = short_d2t_draft(tmp_path / "short"), tmp_path / "fixed"
    done = run_cli("fix", str(draft), "--target-vocab-size", str(T), "--for", "sglang==0.5.12", "--for",
                   "sglang==0.5.23", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    _, found = rows(tmp_path, out)
    assert all(found[v]["loads"] and found[v]["first_step_error_code"] is None for v in EAGLE3), found["0.5.23"]


def test_a_tied_draft_with_a_null_draft_vocab_size_fails_the_crop_from_0_5_15(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, lm_head=False, markov=False)
    draft = make_checkpoint(tmp_path / "tied", family="eagle3-llama", vocab=T, draft_vocab=T, target_vocab=T,
                            markov=False, tensors=tensors,
                            config_extra={**READY, "tie_word_embeddings": True, "draft_vocab_size": None})
    _, found = rows(tmp_path, draft)
    for version in EAGLE3:
        seen = recorded(version, "tied-null", "C=R", "capture")
        row = found[version]
        if seen == "ok":  # 0.5.12-0.5.14 slice with None: no crop
            assert row["first_step_error_code"] is None, (version, row)
        else:
            assert seen["stage"] == "crop" and seen["where"].startswith("sglang/srt/layers/logits_processor.py:")
            assert (row["first_step_error_code"], row["first_step_error"]) == ("DSP342", seen["text"]), version
    assert recorded("0.5.14", "tied-null", "C=R", "capture") == "ok" != recorded("0.5.15", "tied-null", "C=R",
                                                                               "capture")
