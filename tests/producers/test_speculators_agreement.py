"""One speculators conversion (runtimes/speculators.py) for check and the deploy preflight, held against vLLM's own code.

Issue 20: a speculators EAGLE-3 config that carries `"model_type": "speculators"` was 'not supported' (DSP309) in check
and 'starts' in deploy, in one report. vLLM's HFConfigParser.parse converts it (model_type "speculators" is in
_SPECULATIVE_DECODING_CONFIGS), so both now call one detection and one conversion; these tests run each release's own
detection lines and its algos.py update_* functions (docs/upstream-notes.md section 2): as recorded from each wheel in
the hermetic suite, read in the wheel in the upstream tier (tests/wheel_excerpts.py).
"""

from __future__ import annotations

import copy
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from producers import T, layout, materialise, names
from recorded import sources
from wheel_excerpts import wheel

from dspark_ckpt.model.draft_config import is_speculators_format
from dspark_ckpt.runtimes import speculative_config as sc
from dspark_ckpt.runtimes import speculators, vllm_release
from dspark_ckpt.runtimes.config_build import build_config
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

SPECULATORS = [n for n in names() if n.startswith("speculators-")]
METHOD = {"eagle3": "eagle3", "peagle": "eagle3", "dflash": "dflash", "dflash2": "dflash", "dspark": "dspark"}


def _with_model_type(cfg: dict[str, Any], model_type: str | None) -> dict[str, Any]:
    edited = copy.deepcopy(cfg)
    if model_type is not None:
        edited["model_type"] = model_type
    return edited


CONFIG = "vllm/transformers_utils/config.py"


def _vllm_detects(release: str, source: str, config_dict: dict[str, Any]) -> bool:
    """Run the release's own detection lines of HFConfigParser.parse, then its `in _SPECULATIVE_DECODING_CONFIGS`;
    a release without that set (0.18: config.py L194 @ v0.18.0 `if model_type in _CONFIG_REGISTRY`) converts the
    model types its _CONFIG_REGISTRY maps to SpeculatorsConfig (L106 @ v0.18.0 `speculators="SpeculatorsConfig"`)."""
    w = wheel("vllm", release, source)
    first = w.find(CONFIG, 'model_type = config_dict.get("model_type")')
    assert first is not None, release
    last = w.find(CONFIG, ")", "is", first)
    assert last is not None, release
    scope: dict[str, Any] = {"config_dict": config_dict}
    exec(textwrap.dedent("\n".join(w.lines(CONFIG, first, last))), scope)  # noqa: S102 - the release's own lines
    configs = w.find(CONFIG, "_SPECULATIVE_DECODING_CONFIGS", "startswith")
    if configs is not None:
        exec(w.line(CONFIG, configs), scope)  # noqa: S102
        return scope["model_type"] in scope["_SPECULATIVE_DECODING_CONFIGS"]
    start = w.find(CONFIG, "_CONFIG_REGISTRY", "startswith")
    assert start is not None, release
    end = w.find(CONFIG, ")", "line", start)
    assert end is not None, release
    assert w.find(CONFIG, "if model_type in _CONFIG_REGISTRY:", "is", last) is not None, release
    registry = dict(re.findall(r"^\s+(\w+)=\"(\w+)\",?$", "\n".join(w.lines(CONFIG, start + 1, end - 1)),
                               re.MULTILINE))
    assert registry.get("speculators") == "SpeculatorsConfig", release
    return registry.get(scope["model_type"]) == "SpeculatorsConfig"


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_the_detection_is_the_releases(release: str, source: str) -> None:
    cases = [{"speculators_config": {}}, {"model_type": "speculators"}, {"model_type": "speculators",
             "speculators_config": {}}, {"model_type": "llama", "speculators_config": {}}, {}, {"model_type": None}]
    for cfg in cases:
        assert is_speculators_format(cfg) == _vllm_detects(release, source, dict(cfg)), cfg


def _algos(release: str, source: str) -> dict[str, Any]:
    scope: dict[str, Any] = {}
    path = vllm_release.ALGOS_FILE
    text = wheel("vllm", release, source).text(path)
    exec(compile(text, f"vllm-{release}/{path}", "exec"), scope)  # noqa: S102 - algos.py imports nothing
    types: dict[str, Any] = scope["SUPPORTED_SPECULATORS_TYPES"]
    return types


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_the_conversion_is_the_releases_algos(release: str, source: str) -> None:
    """Every recorded speculators layout: our hf_config == transformer_layer_config after the release's update_*."""
    rules, exact = vllm_release.nearest_rules(release)
    assert exact
    updaters = _algos(release, source)
    assert tuple(updaters) == rules.speculators_types
    for name in SPECULATORS:
        cfg = layout(name)["config"]
        kind = cfg["speculators_model_type"]
        converted = speculators.convert(cfg, rules)
        if kind not in updaters:
            assert converted.error is not None and converted.error.code == "DSP330", (name, release)
            continue
        theirs = copy.deepcopy(cfg.get("transformer_layer_config", {}))
        try:
            updaters[kind](copy.deepcopy(cfg), theirs)  # positional: 0.15 names the second `vllm_config`
        except ValueError as refused:  # 0.34's update_peagle: the conversion raises, in the release's words
            assert converted.error is not None and converted.error.text == str(refused), (name, release)
            continue
        theirs["model_type"] = "speculators"  # SpeculatorsConfig.__init__ drops the key; the class variable holds
        assert converted.error is None and converted.hf == theirs, (name, release)


@pytest.mark.parametrize("model_type", [None, "speculators"])
@pytest.mark.parametrize("name", SPECULATORS)
def test_check_and_deploy_build_the_same_class(name: str, model_type: str | None) -> None:
    """Per release: where check's build fails before validation, deploy does not start; where it builds a class,
    deploy names the same class."""
    cfg = _with_model_type(layout(name)["config"], model_type)
    spec = {"model": "ckpt", "method": METHOD[cfg["speculators_model_type"]], "num_speculative_tokens": 3}
    for release in VLLM_RELEASES:
        built = build_config(cfg, "vllm", release)
        outcome = sc.evaluate(vllm_release.RELEASE_RULES[release], sc.DeployInput(spec, "ckpt", cfg))
        if built.error is not None and built.before_validation:
            assert outcome.error is not None, (name, release, built.error)
            continue
        model_class = vllm_release.RELEASE_RULES[release].model_class(built.architecture or "")
        assert model_class is not None and outcome.model_class == model_class, (name, release)


def test_the_issues_report_agrees_with_itself(tmp_path: Path) -> None:
    """The issue's draft: architectures ['Eagle3Speculator'], model_type 'speculators'. One report, every release:
    check loads it as Eagle3LlamaForCausalLM and deploy starts it with that class."""
    def edit(cfg: dict[str, Any]) -> None:
        cfg.update(model_type="speculators", architectures=["Eagle3Speculator"])
    folder = materialise(tmp_path / "ckpt", "speculators-0.9.0-eagle3-llama-pruned", config=edit)
    spec = {"model": str(folder), "method": "eagle3", "num_speculative_tokens": 3}
    done = run_cli("check", str(folder), "--target-vocab-size", str(T), "--runtime", "vllm", "--isolated",
                   "--format", "json", "--speculative-config", json.dumps(spec))
    (checkpoint,) = json.loads(done.stdout)["checkpoints"]
    assert checkpoint["family"] == "eagle3-llama"
    loads = {v["version"]: v for v in checkpoint["compatibility"] if v["runtime"] == "vllm"}
    starts = {r["version"]: r for r in checkpoint["deploy"]["runtimes"]}
    assert sorted(loads) == sorted(starts) == sorted(VLLM_RELEASES)
    for release in VLLM_RELEASES:
        assert loads[release]["error_code"] not in ("DSP309", "DSP330"), loads[release]
        assert loads[release]["loads"] == starts[release]["starts"] is True, release
        assert starts[release]["model_class"] == "Eagle3LlamaForCausalLM"
