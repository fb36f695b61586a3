"""The draft's max_position_embeddings against the served max_model_len (issue 21 item 3), through the real CLI.

Each expectation is what that release's start-up does (runtimes/draft_context.py, docs/upstream-notes.md section
9.1), observed by running 0.27.1, 0.28.0, 0.30.0 and 0.33.0's SpeculativeConfig on CPU with these configs: 0.27-0.32
raise a short draft's max_position_embeddings to the served max_model_len for eagle and eagle3 only (DSP827), so a
DSpark or DFlash draft keeps it and is indexed past its rotary cache (DSP826); 0.33 raises it for every method but
draft_model, whose short draft makes the V2 runner lower the served max_model_len (DSP826). The speculative config's
own max_model_len above the draft's or the served one is a start-up error in every release (DSP825).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint, run_cli
from listed import vllm_before

from dspark_ckpt.runtimes import draft_context as dc
from dspark_ckpt.runtimes import speculative_config as sc
from dspark_ckpt.runtimes import vllm_release

V = vllm_release.VERSIONS
OLD = V[:V.index("0.33.0")]  # before 0.33: no raise (before 0.27), or only eagle and eagle3 get it raised (0.27-0.32)
NEWER = V[V.index("0.33.0"):]  # 0.33 (SpeculativeConfig) and 0.34 (each SpeculatorConfig but draft_model's)
# Before 0.27 no release raises a draft's max_position_embeddings: none in speculative.py (v0.18.0 .. v0.26.0), the
# proposer uses the target's max_model_len (llm_base_proposer.py L77 @ v0.20.0, L86 @ v0.26.0) and the rotary cache is
# the checkpoint's (models/llama.py L268 @ v0.20.0); 0.27 raises it for eagle/eagle3 (speculative.py @ v0.27.0 L924-931)
NO_RAISE = vllm_before("0.27.0")
# method "dspark" is no SpeculativeMethod before 0.25 (speculative.py @ v0.24.0 L60-69): refused first (DSP804)
NO_DSPARK = vllm_before("0.25.0")
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}


@dataclass(frozen=True)
class Case:
    family: str
    config: dict[str, Any]  # added to the draft's config.json
    spec: dict[str, Any]  # the speculative config, without `model`
    args: tuple[str, ...]  # --max-model-len, or nothing
    notes: dict[str, tuple[str, ...]]  # version -> note codes of the deploy record
    errors: dict[str, str | None] = field(default_factory=dict)  # version -> error code (default None: starts)
    says: dict[str, str] = field(default_factory=dict)  # code -> a substring of its finding
    target: str = "target"


def _all(codes: tuple[str, ...], versions: tuple[str, ...] = V) -> dict[str, tuple[str, ...]]:
    return dict.fromkeys(versions, codes)


def _dspark(notes: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """A dspark case's notes: none where method "dspark" is refused (NO_DSPARK)."""
    return {v: () if v in NO_DSPARK else codes for v, codes in notes.items()}


REFUSED = dict.fromkeys(NO_DSPARK, "DSP804")  # a dspark case's errors before 0.25
# 0.16 and older have no default method (speculative.py L339-343 @ v0.17.0 first): an EAGLE-3 draft in an unmarked
# folder with no method given ends in `Unsupported speculative method: 'None'` (L391-431 @ v0.16.0)
NO_DEFAULT = vllm_before("0.17.0")
UNDETECTED = dict.fromkeys(NO_DEFAULT, "DSP810")
# method "dflash" is none before 0.20 either (speculative.py L52-60 @ v0.19.1; DFlashModelTypes from L53 @ v0.20.0)
NO_DFLASH = vllm_before("0.20.0")


DSPARK = {"method": "dspark", "num_speculative_tokens": 8}
EAGLE3 = {"method": "eagle3", "num_speculative_tokens": 3}
SERVED = ("--max-model-len", "8192")
CASES: dict[str, Case] = {
    "dspark-below": Case("qwen3-dspark", {"max_position_embeddings": 2048}, DSPARK, SERVED,
                         _dspark({**_all(("DSP826",), OLD), **_all(("DSP827",), NEWER)}), REFUSED,
                         says={"DSP826": "max_position_embeddings is 2048, below the served max_model_len 8192 "
                                         "(--max-model-len), and this release raises the draft's "
                                         "max_position_embeddings only for methods eagle and eagle3, not 'dspark'",
                               "DSP827": "on vllm==0.33.0, vllm==0.34.0: the draft's max_position_embeddings is "
                                         "2048"}),
    "dspark-equal": Case("qwen3-dspark", {"max_position_embeddings": 8192}, DSPARK, SERVED, _all(()), REFUSED),
    "dspark-above": Case("qwen3-dspark", {"max_position_embeddings": 16384}, DSPARK, SERVED, _all(()), REFUSED),
    # The transformers default of the config class applies (Qwen3Config 32768): not known here, not judged.
    "dspark-key-missing": Case("qwen3-dspark", {}, DSPARK, SERVED, _all(()), REFUSED),
    "dspark-no-served-length": Case("qwen3-dspark", {"max_position_embeddings": 2048}, DSPARK, (), _all(()), REFUSED),
    "dflash-below": Case("dflash", {"max_position_embeddings": 2048}, {"method": "dflash", "num_speculative_tokens": 8},
                         SERVED, {**_all(("DSP826",), OLD), **_all(("DSP827",), NEWER), **_all((), NO_DFLASH)},
                         dict.fromkeys(NO_DFLASH, "DSP804")),
    "eagle3-below": Case("eagle3-llama", {"model_type": "llama", "max_position_embeddings": 2048}, EAGLE3, SERVED,
                         {**_all(("DSP827",)), **_all(("DSP826",), NO_RAISE)},
                         says={"DSP827": "vLLM raises it to 8192 for method 'eagle3' (logged at info level only)",
                               "DSP826": "and this release never raises the draft's max_position_embeddings"}),
    "eagle3-llama3-rope": Case("eagle3-llama", {"model_type": "llama", "max_position_embeddings": 2048,
                                                "rope_scaling": LLAMA3}, EAGLE3, SERVED,
                               {**_all(("DSP827",)), **_all(("DSP826",), NO_RAISE)}),
    # yarn's length differs by release (0.27-0.29 multiply original_max_position_embeddings by its factor): skipped.
    "dspark-yarn-skipped": Case("qwen3-dspark", {"max_position_embeddings": 2048, "rope_scaling": YARN}, DSPARK,
                                SERVED, _all(()), REFUSED),
    "dspark-other-length-key-skipped": Case("qwen3-dspark", {"max_position_embeddings": 2048, "seq_length": 4096},
                                            DSPARK, SERVED, _all(()), REFUSED),
    # No method: an EAGLE-3 architecture is not detected, so vLLM runs it as draft_model, which no release raises.
    "draft-model-below": Case("eagle3-llama", {"model_type": "llama", "max_position_embeddings": 2048},
                              {"num_speculative_tokens": 3}, SERVED,
                              {**_all(("DSP807", "DSP826"), OLD), **_all(("DSP807", "DSP826"), NEWER),
                               **_all((), NO_DEFAULT)}, errors=UNDETECTED,
                              says={"DSP826": "with the V2 model runner VllmConfig lowers the served max_model_len to "
                                              "2048 (a warning in the log; longer requests are refused); on the V1 "
                                              "runner, from position 2048 on"}),
    "draft-model-own-length": Case("eagle3-llama", {"model_type": "llama", "max_position_embeddings": 16384},
                                   {"num_speculative_tokens": 3, "max_model_len": 4096}, SERVED,
                                   {**_all(("DSP807",), OLD), **_all(("DSP807", "DSP826"), NEWER),
                                    **_all((), NO_DEFAULT)}, errors=UNDETECTED,
                                   says={"DSP826": "the draft's max_model_len is 4096, below the served max_model_len "
                                                   "8192"}),
    "spec-length-above-draft": Case("qwen3-dspark", {"max_position_embeddings": 2048}, {**DSPARK, "max_model_len": 4096},
                                    (), _all(()), errors={**dict.fromkeys(V, "DSP825"), **REFUSED},
                                    says={"DSP825": dc.M_DERIVED.format(s=4096, key="max_position_embeddings",
                                                                        derived=2048.0)}),
    # The same on a DFlash draft, which every listed release knows: 0.21-0.26 pass the speculative max_model_len to
    # the draft's ModelConfig, which refuses it above the derived length (config/model.py L2174-2200 @ v0.21.0);
    # 0.20 builds that config without it and refuses it in _maybe_override_draft_max_model_len (speculative.py
    # L769-773 @ v0.20.0)
    "dflash-spec-length-above-draft": Case("dflash", {"max_position_embeddings": 2048},
                                           {"method": "dflash", "num_speculative_tokens": 8, "max_model_len": 4096},
                                           (), _all(()),
                                           errors={**dict.fromkeys(V, "DSP825"), **dict.fromkeys(NO_DFLASH, "DSP804")},
                                           says={"DSP825": "speculative_max_model_len=4096 cannot be larger than "
                                                           "draft_max_model_len=2048"}),
    "spec-length-above-served": Case("qwen3-dspark", {"max_position_embeddings": 16384},
                                     {**DSPARK, "max_model_len": 8192}, ("--max-model-len", "4096"), _all(()),
                                     errors={**dict.fromkeys(V, "DSP825"), **REFUSED},
                                     says={"DSP825": "speculative_max_model_len=8192 cannot be larger than "
                                                     "target_max_model_len=4096 (vllm/config/speculative.py @ v0.25.0 "
                                                     "L1003-1045"}),
    "spec-length-within-both": Case("qwen3-dspark", {"max_position_embeddings": 16384},
                                    {**DSPARK, "max_model_len": 4096}, SERVED, _all(()), REFUSED),
    "spec-length-not-positive": Case("qwen3-dspark", {"max_position_embeddings": 16384},
                                     {**DSPARK, "max_model_len": 0}, SERVED, _all(()),
                                     errors=dict.fromkeys(V, "DSP804"),
                                     says={"DSP804": "max_model_len: Input should be greater than or equal to 1, got 0"}),
    # Without --max-model-len vLLM serves the target config's max_position_embeddings.
    "served-length-from-target": Case("qwen3-dspark", {"max_position_embeddings": 2048}, DSPARK, (),
                                      _dspark({**_all(("DSP826",), OLD), **_all(("DSP827",), NEWER)}), REFUSED,
                                      target="long-target",
                                      says={"DSP826": "below the served max_model_len 40960 (vLLM's default without "
                                                      "--max-model-len: the target config's max_position_embeddings)"}),
    "served-length-target-yarn": Case("qwen3-dspark", {"max_position_embeddings": 2048}, DSPARK, (), _all(()),
                                      REFUSED, target="yarn-target"),
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deploy-context")
    for name, extra in (("target", {}), ("long-target", {"max_position_embeddings": 40960}),
                        ("yarn-target", {"max_position_embeddings": 131072, "rope_scaling": YARN})):
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps({"vocab_size": 96, **extra}))
    return root


def run(ws: Path, name: str, *extra: str) -> tuple[int, dict[str, Any]]:
    case = CASES[name]
    draft = make_checkpoint(ws / name, family=case.family, vocab=96, draft_vocab=96, target_vocab=96,
                            markov=case.family.endswith("dspark"), config_extra=case.config)
    result = run_cli("check", str(draft.relative_to(ws)), "--target", case.target, "--runtime", "vllm", "--isolated",
                     "--format", "json", "--speculative-config", json.dumps({"model": name, **case.spec}),
                     *case.args, *extra, cwd=ws)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    return result.returncode, checkpoint


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_release_does_what_its_source_does(ws: Path, name: str) -> None:
    case = CASES[name]
    _, checkpoint = run(ws, name)
    by_version = {r["version"]: r for r in checkpoint["deploy"]["runtimes"]}
    for version in V:
        got = by_version[version]
        assert got["error_code"] == case.errors.get(version), (version, got)
        assert tuple(got["note_codes"]) == case.notes[version], (version, got["note_codes"])
    findings = {f["code"]: f for f in checkpoint["findings"]}
    for code, text in case.says.items():
        assert text in findings[code]["message"], (code, findings[code]["message"])
    context = {c for codes in case.notes.values() for c in codes} & {"DSP826", "DSP827"}
    assert {c for c in findings if c in ("DSP825", "DSP826", "DSP827")} == context | (
        {"DSP825"} if "DSP825" in case.errors.values() else set())


def test_the_findings_are_warnings_and_the_refusal_an_error(ws: Path) -> None:
    # an EAGLE-3 draft: every listed release knows method eagle3 (dspark is refused before 0.25, dflash before 0.20)
    code, checkpoint = run(ws, "eagle3-below")
    assert code == 0  # warnings only: the default gate (fail-on error) passes
    severities = {f["code"]: f["severity"] for f in checkpoint["findings"]}
    assert (severities["DSP826"], severities["DSP827"]) == ("warning", "warning")
    failing, _ = run(ws, "eagle3-below", "--fail-on", "warning")
    assert failing == 1
    refused, checkpoint = run(ws, "spec-length-above-draft")
    assert refused == 1 and {f["code"]: f["severity"] for f in checkpoint["findings"]}["DSP825"] == "error"


def test_the_finding_cites_each_release_its_lines(ws: Path) -> None:
    _, checkpoint = run(ws, "dflash-below")  # not raised for DFlash before 0.33
    (short,) = [f["message"] for f in checkpoint["findings"] if f["code"] == "DSP826"]
    _, eagle3 = run(ws, "eagle3-below")  # EAGLE-3: every listed release starts it, none raises before 0.27
    (never,) = [f["message"] for f in eagle3["findings"] if f["code"] == "DSP826"]
    for version in OLD:
        # before 0.27 there is no raise: the draft's length is min(draft, target) (_maybe_override_draft_max_model_len,
        # speculative.py L751-786 @ v0.20.0 .. L1089-1131 @ v0.26.0)
        rules = ("spec_len",) if version in NO_RAISE else ("raise_positions", "positions_raised")
        for rule in rules:
            assert f"v{version} {sc.cite(rule, version).lines}" in (never if version in NO_RAISE else short), (rule,
                                                                                                          version)
    (raised,) = [f["message"] for f in checkpoint["findings"] if f["code"] == "DSP827"]
    # 0.34 raises them from DraftModelSpeculatorConfig.configure (speculator_config.py), the method in speculative.py
    assert raised.endswith("(vllm/config/speculative.py @ v0.33.0 L1503-1511, v0.33.0 L1807-1846, v0.34.0 L1486-1527; "
                           "vllm/v1/worker/gpu/spec_decode/speculator_config.py @ v0.34.0 L217-220)")


def test_the_settings_file_gives_the_served_length(ws: Path) -> None:
    (ws / "dspark-ckpt.toml").write_text("max-model-len = 8192\n")
    try:
        draft = make_checkpoint(ws / "from-settings", vocab=96, draft_vocab=96, target_vocab=96,
                                config_extra={"max_position_embeddings": 2048})
        spec = json.dumps({"model": "from-settings", **DSPARK})
        args = ("check", str(draft.relative_to(ws)), "--target", "target", "--runtime", "vllm==0.30.0",
                "--format", "json", "--speculative-config", spec)
        result = run_cli(*args, cwd=ws)
        (r,) = json.loads(result.stdout)["checkpoints"][0]["deploy"]["runtimes"]
        assert r["note_codes"] == ["DSP826"], result.stdout + result.stderr
        flag = run_cli(*args, "--max-model-len", "2048", cwd=ws)  # the flag wins over the settings key
        assert json.loads(flag.stdout)["checkpoints"][0]["deploy"]["runtimes"][0]["note_codes"] == []
        (ws / "dspark-ckpt.toml").write_text("max-model-len = 0\n")
        bad = run_cli(*args, cwd=ws)
        assert bad.returncode == 2 and "DSP-E021" in bad.stderr and "max-model-len" in bad.stderr
    finally:
        (ws / "dspark-ckpt.toml").unlink()


def test_the_flag_is_documented_and_checked() -> None:
    help_text = " ".join(run_cli("check", "--help", env={"COLUMNS": "200"}).stdout.split())
    assert "--max-model-len" in help_text and "vllm serve --max-model-len" in help_text
    refused = run_cli("check", "x", "--max-model-len", "0", "--isolated")
    assert refused.returncode == 2 and "--max-model-len" in refused.stderr


@pytest.mark.parametrize(("config", "expected"), [
    ({"max_position_embeddings": 2048}, 2048),
    ({"max_position_embeddings": 2048, "rope_scaling": None}, 2048),
    ({"max_position_embeddings": 2048, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6}}, 2048),
    ({"max_position_embeddings": 2048, "rope_scaling": {"type": "llama3", "factor": 8.0}}, 2048),
    ({"max_position_embeddings": 2048, "rope_parameters": {"full_attention": {"rope_type": "default"},
                                                           "sliding_attention": {"rope_type": "default"}}}, 2048),
    ({"max_position_embeddings": 2048, "rope_parameters": {"full_attention": {"rope_type": "proportional"},
                                                           "sliding_attention": {"rope_type": "default"}}}, None),
    ({"max_position_embeddings": 2048, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}, None),
    ({"max_position_embeddings": 2048, "model_max_length": 4096}, None),
    ({"max_position_embeddings": True}, None),
    ({}, None),
])
def test_where_max_position_embeddings_alone_is_the_length(config: dict[str, Any], expected: int | None) -> None:
    assert dc.positions(config) == expected
