"""`verify --engine installed` on whole checkpoints of draft classes beyond the vocab families, through the real CLI,
with a real vLLM release (0.33.0, prepared by the maintainer probe's own download step, as the landing agreement
test prepares it; skipped, saying why, when that step cannot run) in the upstream tier, which holds the worker's
documents to their recording; the hermetic suite replays that recording (tests/recorded.py, EngineAnswers).

Each checkpoint is written from the release's generated record of its class (tests/producers/
test_every_architecture_agreement.py's writer: the recipe's config at the worker's base sizes, every tensor of the
layout that fills the most parameters), as built and with the mutations users hit: one backbone tensor missing, a
stray tensor, one backbone tensor a column wider. One CLI run loads all of them through the release's own class,
layers and all (one worker imports vLLM once); the engine's observation is asserted, and check's verdict agrees with
it (no DSP605). Then the same observations against a deliberately wrong landing record: DSP605 fires.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import prepared_vllm_env, run_cli, with_drafting_token
from recorded import EngineAnswers

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "producers"))
from test_every_architecture_agreement import RECIPES, _mutated, _tensors, _write, worker

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import generated_verdict as generated
from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.release_model import ArchitectureModel, architecture_model
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.verify import engine

VERSION = "0.33.0"
T = worker.BASE["target.vocab_size"]
# EAGLE-1 Llama, EAGLE-3 for DeepSeek (MLA attention, MoE layers), DFlash: the class vLLM's registry resolves
CLASSES = {"EagleLlamaForCausalLM": "vllm.model_executor.models.llama_eagle.EagleLlamaForCausalLM",
           "Eagle3DeepseekV2ForCausalLM": "vllm.model_executor.models.deepseek_eagle3.Eagle3DeepseekV2ForCausalLM",
           "DFlashDraftModel": "vllm.model_executor.models.qwen3_dflash.DFlashQwen3ForCausalLM"}
MUTATIONS = ("as-built", "one-missing", "stray-tensor", "one-wider")
EDITED = "layers.0.mlp.down_proj.weight"  # the backbone tensor the missing and wider mutations edit (asserted)


@pytest.fixture(scope="module", params=["recorded", pytest.param("release", marks=pytest.mark.upstream(
    runtime="vllm", release=VERSION))])
def vllm_env(request: pytest.FixtureRequest) -> tuple[str, dict[str, str]]:
    """The recording, or vLLM 0.33.0 as the probe prepares it (conftest.prepared_vllm_env)."""
    return request.param, prepared_vllm_env(VERSION) if request.param == "release" else {}


def _whole(runtime: str, release: str, architecture: str) -> tuple[ArchitectureModel, dict[str, Any],
                                                                   dict[str, tuple[int, ...]]]:
    """The built class's record, its recipe's config at the worker's base sizes, and every tensor of its layout."""
    model = architecture_model(runtime, release, architecture)
    assert model is not None and model.not_built is None
    config = worker.config_for(worker.recipe_for(architecture, RECIPES[runtime]), dict(worker.BASE))
    config = with_drafting_token(config, release, architecture)  # the proposer starts, as for a producer's draft
    if config.get("model_type") == "deepseek_v3":  # vLLM's hf_config_override would make it DeepSeekMTPModel
        config["model_type"] = "kimi_k2"  # (tests/acceptance/test_serving_method.py); Kimi's EAGLE-3 keeps the class
    tensors = _tensors(model, landing.variables(model, config, target_hidden=worker.BASE["target.hidden_size"],
                                                target_vocab=T))
    assert tensors is not None
    return model, config, tensors


def _write_case(root: Path, architecture: str, mutation: str) -> Path:
    model, config, tensors = _whole("vllm", VERSION, architecture)
    shipped = _mutated(mutation, model, tensors)
    assert shipped is not None
    if mutation in ("one-missing", "one-wider"):
        assert (EDITED in shipped) == (mutation == "one-wider") and EDITED in tensors
    folder = root / f"{architecture}--{mutation}"
    _write(folder, config, shipped)
    return folder


@pytest.fixture(scope="module")
def answered(vllm_env: tuple[str, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, dict[str, Any]]:
    """Every case through one `verify --engine installed` run: the JSON entry of each, by folder name."""
    root = tmp_path_factory.mktemp("engine-architectures")
    folders = [_write_case(root, arch, mutation) for arch in CLASSES for mutation in MUTATIONS]
    source, env = vllm_env
    with EngineAnswers("verify-engine-architectures-vllm", "vllm", VERSION, source, root / "site", env):
        done = run_cli("verify", *map(str, folders), "--target-vocab-size", str(T), "--device", "cpu", "--probe",
                       "0", "--runtime", f"vllm=={VERSION}", "--engine", "installed", "--format", "json", env=env,
                       timeout=900)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    entries = json.loads(done.stdout)["checkpoints"]
    return {Path(e["source"]).name: e for e in entries}


def _vllm_row(entry: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in entry["compatibility"] if r["runtime"] == "vllm" and r["version"] == VERSION)


def _codes(entry: dict[str, Any]) -> set[str]:
    return {f["code"] for f in entry["findings"]}


@pytest.mark.parametrize("architecture", CLASSES)
def test_the_release_builds_the_class_with_its_layers(answered: dict[str, dict[str, Any]],
                                                      architecture: str) -> None:
    entry = answered[f"{architecture}--as-built"]
    doc = entry["verify"]["engine"]
    assert (doc["engine"], doc["version"], doc["model_class"]) == ("installed", VERSION, CLASSES[architecture])
    assert doc["loads"] and doc["exception"] is None and doc["disagreement"] is None
    # every backbone parameter written (by the release's own load_weights into its real layers), none cut
    assert doc["landing"] == {"unwritten": [], "cut": [], "check_unfilled": [], "check_cut": []}
    assert not any("layers." in p for p in doc["unwritten"] + doc["partly"]), doc["unwritten"]
    assert "DSP605" not in _codes(entry) and "DSP607" not in _codes(entry)
    row = _vllm_row(entry)
    assert row["loads"] and row["source"].startswith(f"installed vLLM {VERSION}: {CLASSES[architecture]}")


@pytest.mark.parametrize("architecture", CLASSES)
def test_a_missing_backbone_tensor_leaves_its_parameter_unwritten(answered: dict[str, dict[str, Any]],
                                                                  architecture: str) -> None:
    entry = answered[f"{architecture}--one-missing"]
    doc = entry["verify"]["engine"]
    assert doc["loads"] and doc["disagreement"] is None
    assert doc["landing"]["unwritten"] == doc["landing"]["check_unfilled"] == ["model.layers.0.mlp.down_proj.weight"]
    assert "model.layers.0.mlp.down_proj.weight" in doc["unwritten"]
    assert "DSP363" in _vllm_row(entry)["silent_codes"] and "DSP363" in _codes(entry)
    assert "DSP605" not in _codes(entry)


@pytest.mark.parametrize("architecture", CLASSES)
def test_a_wider_backbone_tensor_is_cut_to_fit(answered: dict[str, dict[str, Any]], architecture: str) -> None:
    entry = answered[f"{architecture}--one-wider"]
    doc = entry["verify"]["engine"]
    assert doc["loads"] and doc["disagreement"] is None
    assert doc["cut"] == [EDITED] and doc["landing"]["check_cut"] == [EDITED]
    assert "DSP362" in _vllm_row(entry)["silent_codes"] and "DSP605" not in _codes(entry)


@pytest.mark.parametrize("architecture", CLASSES)
def test_a_stray_tensor_is_refused_in_vllms_words(answered: dict[str, dict[str, Any]], architecture: str) -> None:
    entry = answered[f"{architecture}--stray-tensor"]
    doc = entry["verify"]["engine"]
    assert not doc["loads"] and doc["phase"] == "load_weights" and doc["disagreement"] is None
    assert doc["exception"].startswith("ValueError: There is no module or parameter named 'layers.0.stray_norm' in ")
    assert doc["table"]["error_code"] == "DSP360"
    row = _vllm_row(entry)
    assert (row["loads"], row["error_code"]) == (False, "DSP360")
    assert "DSP360" in _codes(entry) and not {"DSP605", "DSP607"} & _codes(entry)


def _seen(doc: dict[str, Any]) -> engine.Observed:
    """The engine's observation, as the JSON report carries it."""
    return engine.Observed(doc["registered"], doc["architecture"], doc["model_class"], doc["phase"],
                           doc["error_type"], doc["error"], doc["state"], tuple(doc["unwritten"]),
                           tuple(doc["partly"]), tuple(doc["cut"]), doc["where"])


def _against(folder: Path, record: Any, seen: engine.Observed, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, dict]:
    """The real observation compared with check's verdict as `record` would make it (the engine's own path)."""
    monkeypatch.setattr(engine, "built_model", lambda *a: record)  # a built record (not_built is None)
    monkeypatch.setattr(generated, "built_model", lambda *a: record)
    monkeypatch.setattr(generated, "architecture_model", lambda *a: record)
    analysis = analyze(local_source(folder), target=TargetVocab(T, "test"), runtimes=[RuntimeVersion("vllm", VERSION)])
    built = analysis.builds[0]
    shapes = {n: tuple(t.shape) for n, t in analysis.tensors.items()}
    verdict = generated.generated_verdict(built, shapes, target_hidden=None, target_vocab=T)
    subject = engine.Subject(analysis.report, folder, None, False, {"vllm": built}, {"vllm": verdict}, shapes, T)
    return engine._answered(subject, seen, VERSION, None)


def test_dsp605_when_check_and_the_release_disagree(answered: dict[str, dict[str, Any]], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """EAGLE-1 Llama's real record agrees with vLLM's own load; a record that is wrong about it does not."""
    arch = "EagleLlamaForCausalLM"
    real = architecture_model("vllm", VERSION, arch)
    assert real is not None
    cases = {m: (_write_case(tmp_path, arch, m), _seen(answered[f"{arch}--{m}"]["verify"]["engine"]))
             for m in ("stray-tensor", "one-wider", "as-built")}
    for folder, seen in cases.values():  # the control: the real record
        report, doc = _against(folder, real, seen, monkeypatch)
        assert doc["disagreement"] is None and "DSP605" not in {f.code for f in report.findings}
    # a record that says the release skips a name it has no parameter for: check predicts the stray tensor loads
    skips = dataclasses.replace(real, unknown={k: dataclasses.replace(v, raises=None) for k, v in real.unknown.items()})
    report, doc = _against(cases["stray-tensor"][0], skips, cases["stray-tensor"][1], monkeypatch)
    assert doc["disagreement"].startswith("vLLM raised ValueError: There is no module or parameter named "
                                          "'layers.0.stray_norm'") and "check predicts it loads" in doc["disagreement"]
    assert {"DSP605", "DSP607"} <= {f.code for f in report.findings}
    # a record that says a column too many raises: check predicts DSP361, vLLM cuts the tensor and loads
    rule = real.tensors["layers.{i}.mlp.down_proj.weight"]
    raising = dataclasses.replace(rule, off_by_one={**rule.off_by_one, "1+": dataclasses.replace(
        rule.off_by_one["1+"], raises="AssertionError", message="", cuts=False)})
    strict = dataclasses.replace(real, tensors={**real.tensors, "layers.{i}.mlp.down_proj.weight": raising})
    report, doc = _against(cases["one-wider"][0], strict, cases["one-wider"][1], monkeypatch)
    assert doc["disagreement"].startswith("vLLM loads it, check predicts DSP361")
    assert "DSP605" in {f.code for f in report.findings}
    # a record that maps down_proj's tensor onto o_proj: check predicts down_proj unfilled, vLLM wrote it
    moved = dataclasses.replace(rule, parameter="model.layers.{i}.self_attn.o_proj.weight")
    wrong = dataclasses.replace(real, tensors={**real.tensors, "layers.{i}.mlp.down_proj.weight": moved})
    report, doc = _against(cases["as-built"][0], wrong, cases["as-built"][1], monkeypatch)
    assert doc["disagreement"] == ("vLLM's load_weights left none unwritten, check predicts "
                                   "model.layers.0.mlp.down_proj.weight (DSP363)")
    assert "DSP605" in {f.code for f in report.findings}


# --- SGLang: the installed SGLang's own classes (0.5.23, as the every-architecture agreement test fetches it) ------

SGLANG = "0.5.23"
SGLANG_CLASSES = {"LlamaForCausalLMEagle": "sglang.srt.models.llama_eagle.LlamaForCausalLMEagle",
                  "Eagle3DeepseekV2ForCausalLM": "sglang.srt.models.kimi_k25_eagle3.Eagle3DeepseekV2ForCausalLM",
                  "DFlashDraftModel": "sglang.srt.models.dflash.DFlashDraftModel"}


def _sglang_env() -> dict[str, str]:
    """SGLang 0.5.23 on the path (its wheel, the transformers it pins, its import-time deps:
    tools/sglang_release_model.py's own preparation)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import sglang_release_model

    try:
        paths, _ = sglang_release_model.release_paths(SGLANG)
    except Exception as exc:  # noqa: BLE001 - no package index here: say why
        pytest.skip(f"could not prepare sglang=={SGLANG}: {exc}")
    return {"PYTHONPATH": os.pathsep.join([*map(str, paths), *filter(None, [os.environ.get("PYTHONPATH")])])}


@pytest.fixture(scope="module", params=["recorded", pytest.param("release", marks=pytest.mark.upstream(
    runtime="sglang", release=SGLANG))])
def sglang_answered(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                    ) -> dict[str, dict[str, Any]]:
    """Every SGLang case through one `verify --engine installed` run: the recording, or SGLang itself."""
    env = _sglang_env() if request.param == "release" else {}
    root = tmp_path_factory.mktemp("engine-sglang")
    folders = []
    for arch in SGLANG_CLASSES:
        model, config, tensors = _whole("sglang", SGLANG, arch)
        for mutation in MUTATIONS:
            shipped = _mutated(mutation, model, tensors)
            if shipped is not None:
                folders.append(root / f"{arch}--{mutation}")
                _write(folders[-1], config, shipped)
    with EngineAnswers("verify-engine-architectures-sglang", "sglang", SGLANG, request.param, root / "site", env):
        done = run_cli("verify", *map(str, folders), "--target-vocab-size", str(T), "--device", "cpu", "--probe",
                       "0", "--runtime", f"sglang=={SGLANG}", "--engine", "installed", "--format", "json", env=env,
                       timeout=900)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return {Path(e["source"]).name: e for e in json.loads(done.stdout)["checkpoints"]}


def test_sglang_runs_its_own_classes_on_every_tensor(sglang_answered: dict[str, dict[str, Any]]) -> None:
    seen = {}
    for name, entry in sglang_answered.items():
        doc = entry["verify"]["engine"]
        arch = name.split("--")[0]
        assert (doc["engine"], doc["runtime"], doc["version"]) == ("installed", "sglang", SGLANG), doc
        assert doc["model_class"] == SGLANG_CLASSES[arch]
        assert doc["disagreement"] is None and "DSP605" not in _codes(entry), (name, doc["disagreement"])
        row = next(r for r in entry["compatibility"] if r["runtime"] == "sglang")
        assert row["source"].startswith(f"installed SGLang {SGLANG}: {SGLANG_CLASSES[arch]}")
        seen[name] = (doc["loads"], doc["landing"]["unwritten"], doc["landing"]["cut"], row["silent_codes"])
    # SGLang's loaders skip a name they have no parameter for (`if name in params_dict`): the stray tensor loads
    for arch in SGLANG_CLASSES:
        assert seen[f"{arch}--as-built"] == (True, [], [], [])
        assert seen[f"{arch}--stray-tensor"] == (True, [], [], [])
    for arch in ("LlamaForCausalLMEagle", "DFlashDraftModel"):  # MLA's layers have no 2-D down_proj to edit
        prefix = "model." if arch == "LlamaForCausalLMEagle" else ""
        assert seen[f"{arch}--one-missing"] == (True, [f"{prefix}{EDITED}"], [], ["DSP363"])
        assert seen[f"{arch}--one-wider"] == (True, [], [EDITED], ["DSP362"])
