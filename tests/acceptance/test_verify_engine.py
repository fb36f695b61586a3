"""`verify --engine installed|modelled` through the real CLI.

The fallback is always tested (no vLLM here, or a vLLM whose metadata exists but which cannot be imported). The
installed path runs a real vLLM source tree in the upstream tier, prepared by the maintainer probe's own download
step (`pip download --no-deps vllm==0.30.0`, the .py files extracted, import-time deps installed beside it; skipped,
saying why, when that step cannot run), and holds the worker's documents to their recording; the hermetic suite
installs only vLLM 0.30.0's metadata and replays that recording (tests/recorded.py, EngineAnswers), so everything
after the worker (the comparison with check, the report, the exit code) runs in both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import draft_tensors, make_checkpoint, prepared_vllm_env, run_cli
from recorded import EngineAnswers

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tools" / "probe_runtime.py"
VERSION = "0.30.0"


def with_path(*folders: object) -> dict[str, str]:
    """PYTHONPATH with these folders first, keeping the caller's (the tests may run against another tree)."""
    return {"PYTHONPATH": os.pathsep.join([*map(str, folders), *filter(None, [os.environ.get("PYTHONPATH")])])}


def _doc(done: subprocess.CompletedProcess[str]) -> dict:  # type: ignore[type-arg]
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return json.loads(done.stdout)["checkpoints"][0]


def _verify(draft: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("verify", str(draft), "--target-vocab-size", "96", "--device", "cpu", "--probe", "0", *extra,
                   env=env, timeout=600)


def _codes(entry: dict) -> list[str]:  # type: ignore[type-arg]
    return [f["code"] for f in entry["findings"]]


def test_default_engine_is_modelled(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    entry = _doc(_verify(draft, "--runtime", "vllm==0.30.0", "--format", "json"))
    assert entry["verify"]["engine"] == {"engine": "modelled"}
    assert "DSP606" not in _codes(entry)


def test_fallback_when_vllm_is_not_installed(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    done = _verify(draft, "--runtime", "vllm==0.30.0", "--engine", "installed")
    assert done.returncode == 0, done.stderr  # DSP606 is info: the modelled verdicts decide the exit code
    assert "engine: modelled (--engine installed fell back: neither vLLM nor SGLang is installed" in " ".join(
        done.stdout.split())
    entry = _doc(_verify(draft, "--runtime", "vllm==0.30.0", "--engine", "installed", "--format", "json"))
    assert entry["verify"]["engine"]["fallback"] == "neither vLLM nor SGLang is installed in this environment"
    assert [f["severity"] for f in entry["findings"] if f["code"] == "DSP606"] == ["info"]
    assert entry["compatibility"][0]["loads"] and "installed vLLM" not in entry["compatibility"][0]["source"]


def test_fallback_when_installed_vllm_cannot_be_imported(tmp_path: Path) -> None:
    """Metadata says vLLM 0.31.0 is installed, but its package is broken: the worker reports why, verify goes on."""
    site = tmp_path / "site"
    (site / "vllm-0.31.0.dist-info").mkdir(parents=True)
    (site / "vllm-0.31.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.31.0\n")
    (site / "vllm").mkdir()
    (site / "vllm" / "__init__.py").write_text("raise ImportError('this vllm build needs libcudart.so.12')\n")
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, d2t=False)
    done = _verify(draft, "--runtime", "installed", "--engine", "installed", "--format", "json",
                   env=with_path(site))
    entry = _doc(done)
    assert done.returncode == 1  # the modelled loader still finds the missing d2t
    fallback = entry["verify"]["engine"]["fallback"]
    assert "vLLM 0.31.0 cannot be imported here" in fallback and "libcudart.so.12" in fallback
    assert {"DSP302", "DSP606"} <= set(_codes(entry))
    assert "Traceback" not in done.stderr


def test_an_installed_sglang_without_a_generated_model_falls_back(tmp_path: Path) -> None:
    """SGLang is found by its metadata too; a release no generated model lists the draft classes of is not asked
    (its worker would call every class unregistered)."""
    site = tmp_path / "site"
    (site / "sglang-0.5.0.dist-info").mkdir(parents=True)
    (site / "sglang-0.5.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.0\n")
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    entry = _doc(_verify(draft, "--runtime", "vllm==0.30.0", "--engine", "installed", "--format", "json",
                         env=with_path(site)))
    assert entry["verify"]["engine"]["fallback"] == ("no generated model of SGLang 0.5.0 (runtimes/release_data) "
                                                     "lists its draft classes")
    assert "DSP606" in _codes(entry) and "DSP605" not in _codes(entry)


@pytest.fixture(scope="module", params=["recorded", pytest.param("release", marks=pytest.mark.upstream(
    runtime="vllm", release=VERSION))])
def vllm_source(request: pytest.FixtureRequest) -> tuple[str, dict[str, str]]:
    """The recording, or vLLM 0.30.0 as the probe prepares it (conftest.prepared_vllm_env)."""
    return request.param, prepared_vllm_env(VERSION) if request.param == "release" else {}


@pytest.fixture
def vllm_tree(vllm_source: tuple[str, dict[str, str]], request: pytest.FixtureRequest,
              tmp_path: Path) -> Iterator[dict[str, str]]:
    """vLLM 0.30.0 installed for verify's engine, the CLI in this process (EngineAnswers): the environment its
    worker runs in (the release's tree on PYTHONPATH in the upstream tier; nothing more for the recording)."""
    source, env = vllm_source
    with EngineAnswers(request.node.originalname, "vllm", VERSION, source, tmp_path / "site", env):
        yield env


def test_installed_engine_answers_in_vllms_own_words(tmp_path: Path, vllm_tree: dict[str, str]) -> None:
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, d2t=False)
    done = _verify(draft, "--runtime", "installed", "--engine", "installed", "--format", "json", env=vllm_tree)
    entry = _doc(done)
    engine = entry["verify"]["engine"]
    assert engine["engine"] == "installed" and engine["version"] == VERSION
    assert engine["model_class"] == "vllm.model_executor.models.qwen3_dspark.Qwen3DSparkForCausalLM"
    assert engine["phase"] == "load_weights"
    assert engine["exception"] == ("ValueError: Reduced-vocabulary Qwen3 DSpark checkpoints must include a d2t "
                                   "mapping so sampled draft ids can be converted to target ids.")
    assert engine["state"]["d2t_param"] is True and engine["state"]["d2t_loaded"] is False
    assert engine["disagreement"] is None and "DSP605" not in _codes(entry)
    row = entry["compatibility"][0]
    assert (row["version"], row["loads"], row["error_code"]) == (VERSION, False, "DSP302")
    assert row["source"].startswith(f"installed vLLM {VERSION}: vllm.model_executor.models.qwen3_dspark")
    text = _verify(draft, "--runtime", "installed", "--engine", "installed", env=vllm_tree)
    assert f"engine: installed vLLM {VERSION}" in text.stdout and "raised in load_weights: ValueError" in text.stdout


def test_installed_engine_loads_a_clean_draft(tmp_path: Path, vllm_tree: dict[str, str]) -> None:
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, d2t=True, t2d=True)
    done = _verify(draft, "--runtime", "vllm==0.30.0", "--engine", "installed", "--format", "json", env=vllm_tree)
    entry = _doc(done)
    assert done.returncode == 0, entry["findings"]
    state = entry["verify"]["engine"]["state"]
    assert state["d2t_param"] and state["d2t_loaded"] and state["has_own_lm_head"]
    assert state["d2t"]["length"] == 64 and state["d2t"]["out_of_range"] == 0 and not state["d2t"]["all_zero"]


def test_installed_engine_and_check_agree_on_a_stray_tensor(tmp_path: Path, vllm_tree: dict[str, str]) -> None:
    """A DFlash draft that ships a tensor no family has: the vocab contract alone predicted it loads (DSP605 before
    the engine compared check's whole verdict); the generated release model's landing predicts vLLM 0.30's
    DFlashQwen3Model refuses the name (DSP360), and it does, in those words."""
    tensors = draft_tensors(vocab=96, draft_vocab=96, target_vocab=96, markov=False)
    tensors["extra_proj.weight"] = np.zeros((16, 16), dtype=np.float32)
    draft = make_checkpoint(tmp_path / "dflash", family="dflash", vocab=96, draft_vocab=96, target_vocab=96,
                            tensors=tensors)
    done = _verify(draft, "--runtime", "vllm==0.30.0", "--engine", "installed", "--format", "json", env=vllm_tree)
    entry = _doc(done)
    assert done.returncode == 1
    engine = entry["verify"]["engine"]
    assert "There is no module or parameter named 'extra_proj' in DFlashQwen3Model" in engine["exception"]
    assert engine["disagreement"] is None and engine["table"]["error_code"] == "DSP360"
    assert "DSP360" in _codes(entry) and not {"DSP605", "DSP607"} & set(_codes(entry))
    assert entry["compatibility"][0]["error_code"] == "DSP360" and not entry["compatibility"][0]["loads"]


def test_worker_runs_vllms_own_loader_on_each_family(tmp_path: Path, vllm_tree: dict[str, str]) -> None:
    """The engine worker alone (no CLI): the registered class of every family, vLLM's words for each outcome."""
    from dspark_ckpt.verify.engine import run_worker

    drafts = {
        "qwen3-dspark": make_checkpoint(tmp_path / "q", vocab=96, draft_vocab=64, target_vocab=96, lm_head=False),
        "dflash": make_checkpoint(tmp_path / "f", family="dflash", vocab=96, draft_vocab=96, target_vocab=96,
                                  markov=False, d2t=True),
        "eagle3-llama": make_checkpoint(tmp_path / "e", family="eagle3-llama", vocab=96, draft_vocab=64,
                                        target_vocab=96, markov=False, d2t=True),
    }
    cases = [{"id": family, "folder": str(path), "target_vocab": 96} for family, path in drafts.items()]
    run = run_worker(cases, device="cpu", env={**vllm_tree, **with_path(ROOT)})
    assert run.ok, run.reason
    assert run.version == VERSION and not run.adapter_errors
    q, f, e = (run.observed[k] for k in drafts)
    assert q.error == ("Reduced-vocabulary Qwen3 DSpark checkpoints must include lm_head weights; the full target "
                       "lm_head cannot be shared.") and q.error_type == "ValueError"
    assert f.model_class == "vllm.model_executor.models.qwen3_dflash.DFlashQwen3ForCausalLM"
    assert (f.error or "").startswith("There is no module or parameter named 'draft_id_to_target_id' in "
                                      "DFlashQwen3ForCausalLM. The available parameters belonging to  (")
    assert e.loads and e.state["d2t_param"] and e.state["d2t_loaded"] and e.state["d2t"]["out_of_range"] == 0


def _expanded_eagle3(path: Path) -> Path:
    """An EAGLE-3 Llama draft with an input vocabulary wider than D = T (vocab_size 128, draft_vocab_size 96): no
    d2t parameter, so vLLM 0.30+'s compute_logits asserts the head's width is vocab_size (llama_eagle3.py)."""
    return make_checkpoint(path, family="eagle3-llama", vocab=128, draft_vocab=96, target_vocab=96, markov=False,
                           d2t=False, t2d=False)


STEP_WORDS = "AssertionError: Expected logits to have shape (*, 128), but got torch.Size([2, 96])"


def test_installed_engine_runs_the_first_draft_step(tmp_path: Path, vllm_tree: dict[str, str]) -> None:
    """The draft loads; the release's own first draft step (target sharing, compute_logits, argmax, the embedding's
    lookup) raises, in its words, and check's DSP371 says the same."""
    draft = _expanded_eagle3(tmp_path / "e")
    done = _verify(draft, "--runtime", "vllm==0.30.0", "--engine", "installed", "--format", "json", env=vllm_tree)
    entry = _doc(done)
    assert done.returncode == 1
    engine = entry["verify"]["engine"]
    assert engine["loads"] and engine["exception"] is None
    step = engine["first_step"]
    assert step["family"] == "eagle3-llama"
    assert {a: f"{step[a]['raises']}: {step[a]['text']}" for a in ("capture", "last")} == \
        {"capture": STEP_WORDS, "last": STEP_WORDS}
    assert step["capture"]["where"].startswith("vllm/model_executor/models/llama_eagle3.py:")
    assert engine["disagreement"] is None and not {"DSP605", "DSP607"} & set(_codes(entry))
    row = entry["compatibility"][0]
    assert (row["loads"], row["first_step_error_code"], row["first_step_error"]) == (True, "DSP371", STEP_WORDS)
    assert "first draft step run too" in row["source"] and "DSP371" in _codes(entry)
    text = _verify(draft, "--runtime", "vllm==0.30.0", "--engine", "installed", env=vllm_tree)
    assert "first draft step raised: AssertionError: Expected logits to have shape (*, 128)" in text.stdout


def test_trim_input_makes_the_first_draft_step_run(tmp_path: Path, vllm_tree: dict[str, str]) -> None:
    """fix's trim-input on that draft (vocab_size = T, embed_tokens cut to T rows): the release's own first step
    runs on the repaired draft, as fix's re-check predicted."""
    draft = _expanded_eagle3(tmp_path / "e")
    fixed = tmp_path / "fixed"
    done = run_cli("fix", str(draft), "--target-vocab-size", "96", "--runtime", "vllm==0.30.0", "--out",
                   str(fixed), "--format", "json", env=vllm_tree, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((fixed / "config.json").read_text())["vocab_size"] == 96
    assert "trim-input" in done.stdout
    entry = _doc(_verify(fixed, "--runtime", "vllm==0.30.0", "--engine", "installed", "--format", "json",
                         env=vllm_tree))
    step = entry["verify"]["engine"]["first_step"]
    assert (step["capture"], step["last"]) == ("ok", "ok")
    row = entry["compatibility"][0]
    assert row["loads"] and row["first_step_error_code"] is None and "DSP371" not in _codes(entry)
    assert entry["verify"]["engine"]["disagreement"] is None


def test_installed_engine_runs_a_clean_drafts_first_step(tmp_path: Path, vllm_tree: dict[str, str]) -> None:
    """A clean pruned DSpark draft: its first draft step runs, and the text report says so."""
    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, d2t=True, t2d=True)
    done = _verify(draft, "--runtime", "vllm==0.30.0", "--engine", "installed", env=vllm_tree)
    assert done.returncode == 0 and "first draft step: ran" in done.stdout


def test_unregistered_architecture_is_the_registrys_answer(tmp_path: Path, vllm_tree: dict[str, str]) -> None:
    from dspark_ckpt.verify.engine import run_worker

    draft = make_checkpoint(tmp_path / "x", vocab=96, draft_vocab=96, target_vocab=96,
                            config_extra={"architectures": ["NoSuchDSparkModel"]})
    run = run_worker([{"id": "x", "folder": str(draft), "target_vocab": 96}], device="cpu",
                     env={**vllm_tree, **with_path(ROOT)})
    seen = run.observed["x"]
    assert not seen.registered and not seen.loads
    assert seen.verbatim == "NoSuchDSparkModel is not in this vLLM's _SPECULATIVE_DECODING_MODELS"


def test_worker_without_vllm_says_why(tmp_path: Path) -> None:
    from dspark_ckpt.verify.engine import run_worker

    draft = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96, target_vocab=96)
    run = run_worker([{"id": "d", "folder": str(draft), "target_vocab": 96}], device="cpu")
    assert not run.ok and run.reason is not None and "vllm" in run.reason.lower()


@pytest.mark.upstream(runtime="vllm", release=VERSION)
def test_probe_prints_agreement_figures() -> None:
    """The maintainer probe on the prepared tree, one family: every cell of the fixture matrix agrees (the hermetic
    suite holds check to every release's recorded cells: tests/unit/test_vocab_observed.py)."""
    tree = prepared_vllm_env(VERSION)["PYTHONPATH"].split(os.pathsep)[0]
    done = subprocess.run([sys.executable, str(PROBE), VERSION, "--source", tree, "--family", "qwen3-dspark"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert f"vLLM {VERSION}, project matrix" in done.stdout and "64/64 cells agree" in done.stdout
    assert "DISAGREE" not in done.stdout


OLDER = "0.29.0"


@pytest.fixture(scope="module", params=["recorded", pytest.param("release", marks=pytest.mark.upstream(
    runtime="vllm", release=OLDER))])
def older_source(request: pytest.FixtureRequest) -> tuple[str, dict[str, str]]:
    return request.param, prepared_vllm_env(OLDER) if request.param == "release" else {}


def test_before_030_eagle3_and_dspark_run_their_own_inline_loaders(
        tmp_path: Path, older_source: tuple[str, dict[str, str]], request: pytest.FixtureRequest) -> None:
    """vLLM 0.29.0: EAGLE-3's sharing is load_eagle_model's own (run on the loaded draft); there the expanded draft
    has a d2t parameter (always before 0.30) and its step runs. DSpark's is dspark/utils.py load_dspark_model's,
    run the same way (engine_vllm._load_inline): the pruned draft with its head and d2t runs its step, as check's
    recorded cell says."""
    source, env = older_source
    drafts = {"e": _expanded_eagle3(tmp_path / "e"),
              "q": make_checkpoint(tmp_path / "q", vocab=96, draft_vocab=64, target_vocab=96, d2t=True, t2d=True)}
    with EngineAnswers(request.node.originalname, "vllm", OLDER, source, tmp_path / "site", env):
        entries = {k: _doc(_verify(p, "--runtime", f"vllm=={OLDER}", "--engine", "installed", "--format", "json",
                                   env=env)) for k, p in drafts.items()}
    step = entries["e"]["verify"]["engine"]["first_step"]
    assert (step["family"], step["capture"], step["last"]) == ("eagle3-llama", "ok", "ok")
    assert entries["e"]["verify"]["engine"]["state"]["d2t_param"] is True
    assert entries["e"]["compatibility"][0]["first_step_error_code"] is None
    assert entries["e"]["verify"]["engine"]["disagreement"] is None
    ran = entries["q"]["verify"]["engine"]["first_step"]
    assert (ran["family"], ran["capture"], ran["last"]) == ("qwen3-dspark", "ok", "ok"), ran
    assert entries["q"]["compatibility"][0]["first_step"] == "ran"
    assert entries["q"]["verify"]["engine"]["disagreement"] is None
