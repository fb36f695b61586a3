"""`verify --engine installed` runs SGLang's own first draft step on the loaded draft, through the real CLI.

After SGLang's own class and load_weights, the worker (verify/sglang_worker.py first_step, verify/sglang_step.py)
builds the class afresh, loads the checkpoint's own tensors and runs the release's first draft step on CPU against a
target head of T rows: DSpark's Markov step over the head the release built and loaded (0.5.16+), EAGLE-3's shared
head, logits crop and hot_token_id lookup (0.5.12+). The upstream tier runs each release (its wheel, the
transformers it pins, its import-time deps: tools/sglang_release_model.py's preparation; skipped, saying why, when
that cannot run) and holds the worker's documents to their recording; the hermetic suite replays the recording
(tests/recorded.py, EngineAnswers). check's modelled first step (runtimes/sglang_eval.py from the probe's recorded
tables) must say what the executed step did on every case and release: no DSP605.

    DSPARK_CKPT_RECORD=1 python -m pytest -m upstream -n 0 tests/acceptance/test_verify_engine_sglang_step.py \\
        --releases sglang-0.5.16,sglang-0.5.21,sglang-0.5.22,sglang-0.5.23
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import edit_config, make_checkpoint, run_cli
from recorded import EngineAnswers

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "sglang"))
from test_sglang_eagle3 import midlayer

pytest.importorskip("torch")

T = 96
RELEASES = ("0.5.16", "0.5.21", "0.5.22", "0.5.23")
DSPARK_READY = {"markov_head_type": "vanilla", "mask_token_id": 0}
EAGLE3_READY = {"model_type": "llama", "num_hidden_layers": 1}
# DFlash2 with its grouped convolutions (dflash_config.conv_kernel_size / conv_group_size, which the checkpoint does
# not ship: unwritten, and check says so). Without them 0.5.23 builds no convolution while check's landing still
# predicts its parameters unfilled (a DSP363 disagreement of the load, not of the step: see the report of the branch)
SELECTOR = {"architectures": ["DFlash2DraftModel"], "dflash_config": {
    "selector_rank": 4, "selector_top_k": 8, "conv_kernel_size": 2, "conv_group_size": 4}}


def _dspark(root: Path, vocab: int, draft_vocab: int) -> Path:
    """A DSpark draft whose Markov head has config.vocab_size rows (markov_w1 and markov_w2: SGLang sizes the head
    by vocab_size), draft_vocab_size as given (SGLang's DSpark does not read it for the head)."""
    path = make_checkpoint(root, vocab=vocab, draft_vocab=vocab, target_vocab=T, config_extra=DSPARK_READY)
    return edit_config(path, draft_vocab_size=draft_vocab) if draft_vocab != vocab else path


def _eagle3(root: Path, d2t_length: int | None) -> Path:
    """An EAGLE-3 Llama draft (V = T = 96, D = 64, its own lm_head), with a valid d2t or one cut to d2t_length."""
    tensors = midlayer(vocab=T, draft_vocab=64, target_vocab=T, d2t=True, lm_head=True)
    if d2t_length is not None:
        tensors["d2t"] = tensors["d2t"][:d2t_length]
    return make_checkpoint(root, family="eagle3-llama", vocab=T, draft_vocab=64, markov=False, tensors=tensors,
                           config_extra=EAGLE3_READY)


def _dflash2(root: Path, vocab: int) -> Path:
    """A DFlash2 draft (0.5.19+): the candidate selector's codebooks have config.vocab_size rows."""
    return make_checkpoint(root, family="dflash", vocab=vocab, draft_vocab=vocab, target_vocab=T, markov=False,
                           config_extra=SELECTOR)


# name -> writer: padded (V > W), pruned (V < W), clean; the head sized by vocab_size where draft_vocab_size differs
# (both ways); EAGLE-3 whose step runs, and one whose d2t is shorter than D (the hot_token_id lookup fails); DFlash2
# (0.5.19+ only: DFLASH2_CASES) with codebooks narrower than the target head, and as wide
CASES = {
    "dspark-padded": lambda p: _dspark(p, 128, 128),
    "dspark-pruned": lambda p: _dspark(p, 64, 64),
    "dspark-clean": lambda p: _dspark(p, 96, 96),
    "dspark-v128-d96": lambda p: _dspark(p, 128, 96),
    "dspark-v64-d96": lambda p: _dspark(p, 64, 96),
    "eagle3-clean": lambda p: _eagle3(p, None),
    "eagle3-short-d2t": lambda p: _eagle3(p, 48),
    "dflash2-pruned": lambda p: _dflash2(p, 64),
    "dflash2-clean": lambda p: _dflash2(p, 96),
}
DFLASH2_FIRST = "0.5.19"


def cases(version: str) -> list[str]:
    """The cases a release registers the class of (DFlash2DraftModel from 0.5.19)."""
    old = tuple(map(int, version.split("."))) < tuple(map(int, DFLASH2_FIRST.split(".")))
    return [n for n in CASES if not (old and n.startswith("dflash2"))]


def _release_env(version: str) -> dict[str, str]:
    sys.path.insert(0, str(ROOT / "tools"))
    import sglang_release_model

    try:
        paths, _ = sglang_release_model.release_paths(version)
    except Exception as exc:  # noqa: BLE001 - no package index here: say why
        pytest.skip(f"could not prepare sglang=={version}: {exc}")
    return {"PYTHONPATH": os.pathsep.join([*map(str, paths), *filter(None, [os.environ.get("PYTHONPATH")])])}


PARAMS = [pytest.param(("recorded", v), id=f"recorded-{v}") for v in RELEASES] + [
    pytest.param(("release", v), id=f"release-{v}", marks=pytest.mark.upstream(runtime="sglang", release=v))
    for v in RELEASES]


@pytest.fixture(scope="module", params=PARAMS)
def answered(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[str, dict[str, dict[str, Any]]]:
    """Every case through one `verify --engine installed` run of one release: the JSON entry of each, by name."""
    source, version = request.param
    env = _release_env(version) if source == "release" else {}
    root = tmp_path_factory.mktemp(f"sglang-step-{version}")
    folders = [CASES[name](root / name) for name in cases(version)]
    with EngineAnswers(f"verify-engine-sglang-step-{version}", "sglang", version, source, root / "site", env):
        done = run_cli("verify", *map(str, folders), "--target-vocab-size", str(T), "--device", "cpu", "--probe",
                       "0", "--runtime", f"sglang=={version}", "--engine", "installed", "--format", "json", env=env,
                       timeout=900)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return version, {Path(e["source"]).name: e for e in json.loads(done.stdout)["checkpoints"]}


def _row(entry: dict[str, Any], version: str) -> dict[str, Any]:
    return next(r for r in entry["compatibility"] if r["runtime"] == "sglang" and r["version"] == version)


def _codes(entry: dict[str, Any]) -> set[str]:
    return {f["code"] for f in entry["findings"]}


def _failure(step: dict[str, Any]) -> dict[str, Any] | None:
    """The step's failure in check's order (verify/engine.py Observed.step_failure)."""
    for anchor in ("capture", "outside" if step.get("outside") is not None else "inside", "last"):
        seen = step.get(anchor)
        if isinstance(seen, dict) and (anchor == "capture" or seen.get("stage") != "embed"):
            return seen
    return None


def test_check_agrees_with_the_executed_step_on_every_case(answered: tuple[str, dict[str, dict[str, Any]]]) -> None:
    """Each draft loads, the release's own first step runs on it, and check's first-step finding says what it did
    (its code and the release's words inside check's), or nothing where it ran: no DSP605."""
    version, entries = answered
    assert set(entries) == set(cases(version))
    for name, entry in entries.items():
        doc = entry["verify"]["engine"]
        assert (doc["runtime"], doc["version"], doc["loads"]) == ("sglang", version, True), (name, doc["exception"])
        step = doc["first_step"]
        assert step is not None and "not_run" not in step, (name, step)
        assert doc["disagreement"] is None and "DSP605" not in _codes(entry), (name, doc["disagreement"])
        row = _row(entry, version)
        assert "its own first draft step runs too" in row["source"]
        failed = _failure(step)
        if failed is None:
            assert row["first_step_error_code"] is None, (name, row["first_step_error"])
        else:
            assert failed["where"] is None or failed["where"].startswith("sglang/"), failed
            assert row["first_step_error_code"] in ("DSP340", "DSP342", "DSP324"), (name, row)
            assert failed["text"] in row["first_step_error"], (name, failed, row["first_step_error"])
            assert row["first_step_error_code"] in _codes(entry)


def _dspark_outcomes(step: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(o if not isinstance(o, dict) else (o["raises"], o["text"], o["where"].rsplit(":", 1)[0])
                 for o in (step["capture"], step["inside"], step["outside"]))


def test_dspark_steps_in_the_releases_words(answered: tuple[str, dict[str, dict[str, Any]]]) -> None:
    """V > W (padded): the bias has more columns than the base logits: 0.5.16-0.5.21 `logits + bias` in the head's
    step raises, 0.5.22+ MarkovSampleStep's bare assert. V < W (pruned): 0.5.16-0.5.21 the same add fails at once;
    0.5.22+ masks the narrower bias and only the first id without a markov_w1 row (V) fails, in its lookup (every
    release's lookup fails so). V = W runs. The head has config.vocab_size rows whatever draft_vocab_size says."""
    version, entries = answered
    steps = {n: entries[n]["verify"]["engine"]["first_step"] for n in CASES if n.startswith("dspark")}
    assert {n: (s["family"], s["v"], s["w"]) for n, s in steps.items()} == {
        "dspark-padded": ("dspark", 128, T), "dspark-pruned": ("dspark", 64, T), "dspark-clean": ("dspark", 96, T),
        "dspark-v128-d96": ("dspark", 128, T), "dspark-v64-d96": ("dspark", 64, T)}
    kernel = version in ("0.5.22", "0.5.23")
    assert ("draft_markov_block" in steps["dspark-clean"]["ran"]) == kernel
    assert ("sample_block" in steps["dspark-clean"]["ran"]) == (not kernel)

    def add(v: int) -> tuple[str, str, str]:
        text = f"The size of tensor a ({T}) must match the size of tensor b ({v}) at non-singleton dimension 1"
        return "RuntimeError", text, "sglang/srt/models/dspark.py"

    lookup = ("IndexError", "index out of range in self", "sglang/srt/models/dspark.py")
    wider = ("AssertionError", "AssertionError", "sglang/kernels/ops/speculative/dspark/markov_sample.py") \
        if kernel else add(128)
    narrower = ("ok", "ok", lookup) if kernel else (add(64), add(64), lookup)
    assert _dspark_outcomes(steps["dspark-clean"]) == ("ok", "ok", None)
    assert _dspark_outcomes(steps["dspark-padded"]) == _dspark_outcomes(steps["dspark-v128-d96"]) == \
        (wider, wider, None)
    assert _dspark_outcomes(steps["dspark-pruned"]) == _dspark_outcomes(steps["dspark-v64-d96"]) == narrower
    row = _row(entries["dspark-pruned"], version)
    want = "index out of range in self" if kernel else add(64)[1]
    assert row["first_step_error_code"] == "DSP340" and want in row["first_step_error"]


def test_eagle3_steps_in_the_releases_words(answered: tuple[str, dict[str, dict[str, Any]]]) -> None:
    """A valid d2t: the step runs (the head's last id, 63, maps inside the target). A d2t of 48 entries under a
    head of D = 64: the worker's hot_token_id lookup of id 63 fails (DSP324)."""
    version, entries = answered
    clean = entries["eagle3-clean"]["verify"]["engine"]["first_step"]
    assert (clean["family"], clean["capture"], clean["last"]) == ("eagle3", "ok", "ok")
    short = entries["eagle3-short-d2t"]["verify"]["engine"]["first_step"]
    assert short["capture"] == "ok"
    assert (short["last"]["raises"], short["last"]["stage"]) == ("IndexError", "lookup")
    assert short["last"]["text"] == "index 63 is out of bounds for dimension 0 with size 48"
    assert short["last"]["where"].startswith("sglang/srt/speculative/eagle_worker")
    row = _row(entries["eagle3-short-d2t"], version)
    assert row["first_step_error_code"] == "DSP324" and short["last"]["text"] in row["first_step_error"]


def test_dflash2_selector_steps_in_the_releases_words(answered: tuple[str, dict[str, dict[str, Any]]]) -> None:
    """DFlash2's CandidateSelector.build_lattice on the loaded selector: candidate ids up to W - 1 index codebooks of
    V rows; the first id without a row (V) fails where V < W (DSP340 quotes it); V = W runs."""
    version, entries = answered
    if "dflash2-clean" not in entries:
        pytest.skip(f"SGLang {version} registers no DFlash2DraftModel (from {DFLASH2_FIRST})")
    clean = entries["dflash2-clean"]["verify"]["engine"]["first_step"]
    assert (clean["family"], clean["v"], clean["capture"], clean["inside"], clean["outside"]) == \
        ("dflash2", 96, "ok", "ok", None)
    pruned = entries["dflash2-pruned"]["verify"]["engine"]["first_step"]
    assert (pruned["v"], pruned["capture"], pruned["inside"]) == (64, "ok", "ok")
    assert (pruned["outside"]["raises"], pruned["outside"]["text"]) == (
        "IndexError", "index 64 is out of bounds for dimension 0 with size 64")
    assert pruned["outside"]["where"].startswith("sglang/srt/models/dflash.py:")
    row = _row(entries["dflash2-pruned"], version)
    assert row["first_step_error_code"] == "DSP340" and pruned["outside"]["text"] in row["first_step_error"]


def test_the_text_report_says_what_the_step_did(answered: tuple[str, dict[str, dict[str, Any]]]) -> None:
    """The plain report's engine lines print the executed step's outcome: its failure in the release's words and
    frame, or that it ran."""
    from rich.console import Console

    from dspark_ckpt.output.verify_text import render_engine

    _, entries = answered
    for name, ran in (("dspark-pruned", False), ("dspark-clean", True), ("eagle3-short-d2t", False)):
        console = Console(width=300, no_color=True, record=True)
        render_engine(entries[name]["verify"]["engine"], console)
        text = console.export_text()
        step = entries[name]["verify"]["engine"]["first_step"]
        if ran:
            assert "first draft step: ran (base logits cropped to the target head, the Markov step)" in text
        else:
            failed = _failure(step)
            assert failed is not None
            assert f"first draft step raised: {failed['raises']}: {failed['text']} ({failed['where']})" in text


def test_dsp605_when_checks_first_step_says_otherwise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same recorded steps of 0.5.23 against a check that has lost the release's recorded first step (it falls
    back to its modelled width check, which lets 0.5.22+'s kernel mask a narrower bias): the pruned draft's executed
    lookup failure is not what it says, DSP605 names both sides; the padded draft (the modelled check names the
    kernel's bare assert too), the clean one and EAGLE-3 (its own record) still agree."""
    from dspark_ckpt.runtimes import sglang_eval

    version = "0.5.23"
    monkeypatch.setattr(sglang_eval, "recorded_step", lambda r, step="dspark": None)
    folders = [CASES[name](tmp_path / name) for name in cases(version)]
    with EngineAnswers(f"verify-engine-sglang-step-{version}", "sglang", version, "recorded", tmp_path / "site"):
        done = run_cli("verify", *map(str, folders), "--target-vocab-size", str(T), "--device", "cpu", "--probe",
                       "0", "--runtime", f"sglang=={version}", "--engine", "installed", "--format", "json",
                       timeout=900)
    entries = {Path(e["source"]).name: e for e in json.loads(done.stdout)["checkpoints"]}
    pruned = entries["dspark-pruned"]
    assert pruned["verify"]["engine"]["disagreement"] == (
        "SGLang's first draft step raised IndexError: index out of range in self; check predicts it runs")
    assert "DSP605" in _codes(pruned)
    row = _row(pruned, version)  # the row says what the release did, in its words
    assert (row["first_step_error_code"], row["first_step_error"]) == ("DSP340",
                                                                       "IndexError: index out of range in self")
    padded = _row(entries["dspark-padded"], version)  # the modelled width check names the kernel's bare assert
    assert padded["first_step_error_code"] == "DSP340" and "AssertionError" in padded["first_step_error"]
    for name in ("dspark-padded", "dspark-clean", "eagle3-clean", "eagle3-short-d2t"):
        assert entries[name]["verify"]["engine"]["disagreement"] is None and "DSP605" not in _codes(entries[name])


def _seen(step: dict[str, Any]) -> Any:
    from dspark_ckpt.verify.engine import Observed

    return Observed(True, "A", "sglang.srt.models.a.A", None, None, None, {}, runtime="sglang", first_step=step)


def _raised(text: str, **extra: str) -> dict[str, Any]:
    return {"raises": "IndexError", "text": text, "where": "sglang/srt/x.py:1", **extra}


def test_the_step_is_read_in_checks_order() -> None:
    """Observed.step_failure reads the anchors as check does (runtimes/first_step.py): the capture; the first id
    without a row where it ran (`outside`), else the last id with one; EAGLE-3's `last` unless only the next step's
    embedding failed. Its code is check's for that step; check's words agree when they quote the release's text."""
    from dspark_ckpt.verify.engine import StepSaid, step_agrees, step_disagreement

    both = _seen({"family": "dspark", "capture": "ok", "inside": _raised("in"), "outside": _raised("out")})
    assert (both.step_error, both.step_code) == ("IndexError: out", "DSP340")
    inside = _seen({"family": "dspark", "capture": "ok", "inside": _raised("in"), "outside": None})
    assert inside.step_error == "IndexError: in"
    first = _seen({"family": "dspark", "capture": _raised("cap"), "inside": "ok", "outside": _raised("out")})
    assert first.step_error == "IndexError: cap"
    embed_only = _seen({"family": "eagle3", "capture": "ok", "last": _raised("emb", stage="embed")})
    assert (embed_only.step_failure, embed_only.step_code) == (None, None)
    at_capture = _seen({"family": "eagle3", "capture": _raised("emb", stage="embed"), "last": "ok"})
    assert (at_capture.step_error, at_capture.step_code) == ("IndexError: emb", "DSP324")
    crop = _seen({"family": "eagle3", "capture": "ok", "last": _raised("crop", stage="crop")})
    assert crop.step_code == "DSP342"
    quoted = StepSaid("markov_w1 has 64 rows ... observed: out (a device-side assert on CUDA)", "DSP340", False)
    assert step_agrees(both, quoted) and step_disagreement(both, quoted) is None
    assert not step_agrees(both, StepSaid("observed: in", "DSP340", False))
    assert step_disagreement(both, StepSaid("out", "DSP371")) == \
        "SGLang's first draft step raised IndexError: out; check predicts it runs"  # DSP371 is vLLM's, not SGLang's
    ran = _seen({"family": "dspark", "capture": "ok", "inside": "ok", "outside": None})
    assert step_agrees(ran, StepSaid()) and step_disagreement(ran, StepSaid("AssertionError", "DSP340")) == \
        "SGLang's first draft step ran; check predicts DSP340: AssertionError"
    not_run = _seen({"not_run": "why"})
    assert not not_run.stepped and step_disagreement(not_run, StepSaid("x", "DSP340")) is None
