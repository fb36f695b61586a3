"""`verify` on long work, as a user meets it: the probe count fits the device (auto: a time budget on CPU) and is
stated, progress shows on a terminal only, a bad checkpoint does not stop the others, a Hub id fails at once."""

from __future__ import annotations

import json
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from conftest import make_checkpoint, run_cli, run_on_a_terminal

T = 96
REPO = Path(__file__).parents[2]


@pytest.fixture
def padded(tmp_path: Path) -> Path:
    """Padded (D = 128 > T): loads with its own lm_head on vLLM 0.30+, so the padded-row probe runs."""
    return make_checkpoint(tmp_path / "padded", vocab=128, draft_vocab=128, target_vocab=T)


def verify_json(*args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    done = run_cli("verify", *args, "--target-vocab-size", str(T), "--device", "cpu", "--format", "json",
                   "--isolated", cwd=cwd)
    return done, json.loads(done.stdout)


def probe_of(doc: dict[str, object], i: int = 0) -> dict[str, object]:
    return doc["checkpoints"][i]["verify"]["probe"]  # type: ignore[index,no-any-return]


def test_auto_is_a_time_budget_on_cpu_and_says_how_many_ran(padded: Path) -> None:
    start = time.monotonic()
    done, doc = verify_json(str(padded), "--runtime", "vllm==0.33.0")
    elapsed = time.monotonic() - start
    probe = probe_of(doc)
    assert done.returncode in (0, 1), done.stderr
    assert probe["ran"] and probe["probes"] >= 2 and probe["probes"] % 2 == 0
    assert sum(s["probes"] for s in probe["stats"] if s["logits"] == "lm_head") == probe["probes"]
    assert probe["probes_why"].startswith("--probe auto on CPU: a 5 s budget at ")
    assert elapsed < 60  # the 5 s budget plus start-up, on a loaded 2-core machine; it was unbounded before


def test_an_exact_count_runs_exactly_that(padded: Path) -> None:
    _, doc = verify_json(str(padded), "--runtime", "vllm==0.33.0", "--probe", "64")
    probe = probe_of(doc)
    assert probe["probes"] == 64 and probe["probes_why"] == "--probe 64"
    assert [s["probes"] for s in probe["stats"]] == [32, 32, 32, 32]  # embed and Gaussian, each with/without Markov


def test_a_seconds_budget_is_stated(padded: Path) -> None:
    _, doc = verify_json(str(padded), "--runtime", "vllm==0.33.0", "--probe", "0.5s")
    assert probe_of(doc)["probes_why"].startswith("--probe 0.5s: a 0.5 s budget at ")


@pytest.mark.parametrize("bad", ["many", "-3", "0s", "5 m"])
def test_a_bad_probe_value_is_a_usage_error(padded: Path, bad: str) -> None:
    done = run_cli("verify", str(padded), "--target-vocab-size", str(T), "--probe", bad)
    assert done.returncode == 2 and "--probe" in done.stderr and done.stdout == ""


def test_text_states_the_probe_count_and_ends_with_the_verdict(padded: Path) -> None:
    done = run_cli("verify", str(padded), "--target-vocab-size", str(T), "--device", "cpu", "--probe", "64",
                   "--runtime", "vllm==0.33.0", "--isolated")
    lines = done.stdout.rstrip().splitlines()
    assert "64 probes: --probe 64" in done.stdout
    assert lines[-1].startswith("1 checkpoint(s): ")  # after verify's own sections, not between them
    assert done.stdout.index("Padded-row probe") < done.stdout.index(lines[-1])
    assert "read 5 vocab tensor(s), " in done.stdout and " KiB;" in done.stdout  # human-readable bytes


def test_a_bad_checkpoint_does_not_stop_the_others(padded: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text("{}")
    done, doc = verify_json("missing-draft", str(padded), "notes.json", "--runtime", "vllm==0.33.0", "--probe", "0",
                            cwd=tmp_path)
    assert done.returncode == 2  # a checkpoint that could not be verified is never a pass
    first, second, third = doc["checkpoints"]  # type: ignore[misc]
    assert first["findings"][0]["code"] == "DSP702" and "[DSP-E010]" in first["findings"][0]["message"]
    assert first["verify"]["skipped"].startswith("[DSP-E010]")
    assert second["verify"]["skipped"] is None and second["verify"]["runtimes"]
    assert "[DSP-E110]" in third["findings"][0]["message"]
    assert "dspark-ckpt: error [DSP-E010]" in done.stderr and "dspark-ckpt: error [DSP-E110]" in done.stderr


def test_a_hub_repo_id_is_refused_before_any_request(padded: Path, tmp_path: Path) -> None:
    # An endpoint that would hang if contacted: the answer must come from the argument alone.
    env = {"HF_ENDPOINT": "http://10.255.255.1:9", "DSPARK_CKPT_HUB_TIMEOUT": "30"}
    start = time.monotonic()
    done = run_cli("verify", "some-org/some-draft", "--target-vocab-size", str(T), "--device", "cpu", env=env,
                   cwd=tmp_path)
    assert time.monotonic() - start < 30
    assert done.returncode == 2 and "[DSP-E042]" in done.stderr and "needs a local checkpoint" in done.stderr
    assert "hf download some-org/some-draft --local-dir DIR" in done.stderr


def test_one_shard_verifies_the_folder(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "draft", vocab=128, draft_vocab=128, target_vocab=T, shards=2)
    done, doc = verify_json("draft/model-00001-of-00002.safetensors", "--runtime", "vllm==0.33.0", "--probe", "0",
                            cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # verified (padded: DSP305 may warn), not a usage error
    entry = doc["checkpoints"][0]  # type: ignore[index]
    assert entry["source"] == "draft" and "DSP230" in [f["code"] for f in entry["findings"]]
    assert {r["lm_head"] for r in entry["verify"]["runtimes"]} == {"own"}  # lm_head came from the other shard


def test_progress_on_a_terminal_only_and_never_with_quiet(padded: Path) -> None:
    # A short relative path: the bar's description is cut to the terminal's width, and a long temp path
    # (pytest-xdist workers add a level) would push "probing padded rows" past it.
    args = ["verify", padded.name, "--target-vocab-size", str(T), "--device", "cpu", "--probe", "20000",
            "--runtime", "vllm==0.33.0", "--format", "json", "--isolated"]
    rc, out, err = run_on_a_terminal(*args, cwd=padded.parent)
    assert rc in (0, 1) and json.loads(out)["checkpoints"][0]["verify"]["probe"]["probes"] == 20000
    assert "probing padded rows" in err  # the bar, on the terminal
    rc, out, err = run_on_a_terminal(*args, "-q", cwd=padded.parent)
    assert json.loads(out) and err == ""
    piped = run_cli(*args, cwd=padded.parent)  # stderr not a terminal: no bar at all
    assert "probing" not in piped.stderr


def test_the_torch_extra_installs_numpy() -> None:
    """torch warns "Failed to initialize NumPy" on every run without it; the extra must bring it."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(req.split(">")[0].split("=")[0].strip() == "numpy" for req in extras["torch"])
