"""`dspark-ckpt verify` driven as a user would: real files, a real subprocess, JSON and text output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import draft_tensors, make_checkpoint, run_cli

T = 96
CHECK_KEYS = {"source", "family", "draft_vocab_size", "target_vocab_size", "vocab_kind", "tensors", "compatibility",
              "findings"}


@pytest.fixture
def padded(tmp_path: Path) -> Path:
    return make_checkpoint(tmp_path / "inkling-like", vocab=128, draft_vocab=128, target_vocab=T)


def test_json_has_the_check_schema_plus_verify(padded: Path) -> None:
    done = run_cli("verify", str(padded), "--target-vocab-size", str(T), "--format", "json", "--device", "cpu",
                   "--probe", "64", "--seed", "7")
    assert done.returncode == 1, done.stderr  # vLLM 0.29 refuses a padded draft without d2t
    doc = json.loads(done.stdout)
    assert doc["schema_version"] == 1
    (entry,) = doc["checkpoints"]
    assert CHECK_KEYS <= set(entry) and entry["vocab_kind"] == "padded"
    by_version = {e["version"]: e for e in entry["compatibility"]}
    assert by_version["0.29.0"]["loads"] is False and by_version["0.29.0"]["error_code"] == "DSP302"
    assert by_version["0.33.0"]["loads"] is True and "DSP305" in by_version["0.33.0"]["silent_codes"]
    verify = entry["verify"]
    assert verify["device"] == "cpu" and verify["skipped"] is None
    assert set(verify["timings_ms"]) == {"load", "predicate", "mapping", "probe", "total"}
    assert [r["loads"] for r in verify["runtimes"]] == [e["loads"] for e in entry["compatibility"]]
    assert all(m["out_of_range"] == 128 - T for m in verify["mapping"])
    probe = verify["probe"]
    assert probe["ran"] and probe["seed"] == 7 and probe["illegal_rows"] == 128 - T
    assert sum(s["probes"] for s in probe["stats"] if s["logits"] == "lm_head") == 64


def test_text_output_and_runtime_selection(padded: Path) -> None:
    done = run_cli("verify", str(padded), "--target-vocab-size", str(T), "--runtime", "vllm==0.33.0", "--probe", "0")
    assert done.returncode == 0, done.stderr  # DSP305 is a warning; 0.33 loads the draft
    assert "verify on cpu" in done.stdout and "Loaded with torch" in done.stdout
    assert "vllm 0.29.0" not in done.stdout


def test_pruned_draft_with_valid_tables_is_clean(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "pruned", vocab=T, draft_vocab=64, target_vocab=T, d2t=True, t2d=True)
    # every release that registers Qwen3DSparkModel (registry.py @ v0.25.0 L597 first): an older one refuses it
    done = run_cli("verify", str(path), "--target-vocab-size", str(T), "--runtime", "vllm>=0.25.0", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    verify = json.loads(done.stdout)["checkpoints"][0]["verify"]
    assert all(m["t2d_consistent"] and not m["failures"] for m in verify["mapping"])
    assert verify["probe"]["ran"] is False


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_device_without_cuda_is_a_usage_error(padded: Path) -> None:
    done = run_cli("verify", str(padded), "--target-vocab-size", str(T), "--device", "cuda:0")
    assert done.returncode == 2 and "DSP-E041" in done.stderr and "Traceback" not in done.stderr


def test_without_target_verify_is_skipped_not_crashed(padded: Path) -> None:
    done = run_cli("verify", str(padded), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert "target vocab T is unknown" in json.loads(done.stdout)["checkpoints"][0]["verify"]["skipped"]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_check_never_imports_torch(padded: Path) -> None:
    code = ("import sys\nfrom dspark_ckpt.cli.app import main\n"
            f"try:\n    main(['check', {str(padded)!r}, '--target-vocab-size', '{T}'])\nexcept SystemExit:\n    pass\n"
            "print('torch' in sys.modules)")
    assert _python(code).stdout.strip().splitlines()[-1] == "False"


def test_verify_without_torch_says_how_to_install_it(padded: Path) -> None:
    code = ("import sys\nsys.modules['torch'] = None\nfrom dspark_ckpt.cli.app import main\n"
            f"main(['verify', {str(padded)!r}, '--target-vocab-size', '{T}'])")
    done = _python(code)
    assert done.returncode == 2 and "DSP-E040" in done.stderr and "pip install torch" in done.stderr


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_run_matches_the_cpu_run(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=128, draft_vocab=128, target_vocab=T)
    tensors["embed_tokens.weight"][:, 0] = 10.0
    tensors["lm_head.weight"][T:, 0] = 50.0
    path = make_checkpoint(tmp_path / "win", tensors=tensors, vocab=128, draft_vocab=128, target_vocab=T)
    docs = {}
    for device in ("cpu", "cuda"):
        done = run_cli("verify", str(path), "--target-vocab-size", str(T), "--format", "json", "--device", device)
        docs[device] = json.loads(done.stdout)["checkpoints"][0]
    assert docs["cuda"]["verify"]["device"].startswith("cuda:")
    assert docs["cuda"]["compatibility"] == docs["cpu"]["compatibility"]
    strip = (lambda ms: [{k: v for k, v in m.items()} for m in ms])
    assert strip(docs["cuda"]["verify"]["mapping"]) == strip(docs["cpu"]["verify"]["mapping"])
    embed = [s for d in ("cpu", "cuda") for s in docs[d]["verify"]["probe"]["stats"]
             if s["source"] == "embed_tokens" and s["logits"] == "lm_head"]
    assert embed[0]["argmax_illegal"] == embed[1]["argmax_illegal"] == embed[0]["probes"]
    assert np.isfinite(embed[1]["max_margin"])
