"""EAGLE-3's aux hidden states (issue 21): the fc shape each vLLM release builds from a draft's config, the load
error when fc.weight has another shape, the first-step failure when a runner hands fc another number of layers, and
the DSP356 / DSP357 warnings. Real tiny checkpoints (H = 16) through `analyze`, per release.

Every expectation is what the release's code does (llama_eagle3.py, qwen3_eagle3.py, algos.py update_eagle3,
linear.py ReplicatedLinear.weight_loader; runtimes/eagle3_aux.py LINES); the load outcomes were observed by running
0.27.0, 0.30.0 and 0.33.0 on CPU (tools/probe_eagle3_aux.py, 17/17 cases each). The older releases, read in their
wheels: EAGLE-3 Llama before 0.22 sizes fc for 3 aux states whatever the config says (llama_eagle3.py L174-178 @
v0.18.0 .. v0.21.0: `target_hidden_size * 3`, no count key read; the count keys from v0.22.0 L179-185), and its V1
runner reads only the top-level list (gpu_model_runner.py L4961-4965 @ v0.20.0, L5041-5045 @ v0.21.0; the nested
list from v0.22.0 L5252-5253); EAGLE-3 Qwen3 is registered from 0.24.0 (registry.py @ v0.24.0 L614, no
qwen3_eagle3.py before), with 0.27.0's reads (qwen3_eagle3.py L150, L181-188, L193 @ v0.24.0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import backbone_config, draft_tensors, make_checkpoint, write_safetensors
from listed import vllm_before, vllm_minors

from dspark_ckpt.check.analysis import Analysis, analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.table import VLLM_VERSIONS
from dspark_ckpt.sources.local import local_source

H, T = 16, 96
IDS4 = [1, 5, 9, 13]
FAMILIES = ("eagle3-llama", "eagle3-qwen3")
FIXED = vllm_before("0.22.0")  # EAGLE-3 Llama's fc sized for 3 aux states, no count key read
READS_COUNT = vllm_minors("0.22.0")  # llama_eagle3.py reads num_aux_hidden_states, then eagle_config's list
QWEN3 = vllm_minors("0.24.0")  # the releases that register Eagle3Qwen3ForCausalLM


def shape_error(got: int, want: int) -> str:
    """linear.py ReplicatedLinear.weight_loader's assert, as vLLM words it (no space before "to")."""
    return f"Tried to load weights of size torch.Size([{H}, {got}])to a parameter of size torch.Size([{H}, {want}])"


def _tensors(fc_cols: int | None) -> dict[str, np.ndarray]:
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, hidden=H, markov=False)
    if fc_cols is not None:
        tensors["fc.weight"] = np.zeros((H, fc_cols), dtype=np.float32)
    return tensors


def draft(tmp_path: Path, family: str, config: dict[str, Any], fc_cols: int | None) -> Path:
    return make_checkpoint(tmp_path / family, family=family, vocab=T, draft_vocab=T, target_vocab=T, hidden=H,
                           config_extra=config, tensors=_tensors(fc_cols))


def speculators(tmp_path: Path, layer_type: str, top: dict[str, Any], fc_cols: int,
                layer_extra: dict[str, Any] | None = None) -> Path:
    folder = tmp_path / f"spec-{layer_type}"
    folder.mkdir(parents=True)
    layer = {"model_type": layer_type, "vocab_size": T, "hidden_size": H, **backbone_config(H),
             **(layer_extra or {})}
    config = {"architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3", "draft_vocab_size": T,
              "speculators_config": {"proposal_methods": [{"speculative_tokens": 3}],
                                     "verifier": {"name_or_path": "target"}},
              "transformer_layer_config": layer, **top}
    (folder / "config.json").write_text(json.dumps(config))
    write_safetensors(folder / "model.safetensors", _tensors(fc_cols))
    return folder


def releases(family: str) -> tuple[str, ...]:
    """The listed releases that register the family."""
    return QWEN3 if family == "eagle3-qwen3" else VLLM_VERSIONS


def run(path: Path, versions: tuple[str, ...] = VLLM_VERSIONS) -> Analysis:
    return analyze(local_source(path), target=TargetVocab(T, "test"),
                   runtimes=[RuntimeVersion("vllm", v) for v in versions])


def outcomes(a: Analysis) -> dict[str, tuple[str | None, str | None]]:
    return {v.version: (v.error.text if v.error else None, v.first_step.code if v.first_step else None)
            for v in a.verdicts}


def codes(a: Analysis) -> set[str]:
    return {f.code for f in a.findings}


def every(error: str | None, step: str | None = None,
          versions: tuple[str, ...] = VLLM_VERSIONS) -> dict[str, tuple[str | None, str | None]]:
    """The same outcome on every release given: the code read is alike (only its line numbers move)."""
    return dict.fromkeys(versions, (error, step))


def fixed_fc(error: str | None, step: str | None = None) -> dict[str, tuple[str | None, str | None]]:
    """EAGLE-3 Llama's outcome on the releases whose fc is sized for 3 aux states whatever the config says."""
    return every(error, step, FIXED)


# --- top-level ids with 4 layers (the case) ---

def test_llama_top_level_four_ids_fails_on_fc(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-llama", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H))
    assert outcomes(a) == every(shape_error(4 * H, 3 * H))  # llama_eagle3.py never reads the top-level list
    ignored = next(f for f in a.findings if f.code == "DSP356")
    assert (f"vLLM {READS_COUNT[0]}-{VLLM_VERSIONS[-1]} (llama_eagle3.py) sizes fc from the default of 3 x "
            "hidden_size") in ignored.message
    assert (f"vLLM {FIXED[0]}-{FIXED[-1]} (llama_eagle3.py) always sizes fc for 3 aux hidden states x hidden_size "
            "and reads no key for the count") in ignored.message
    assert "eagle_aux_hidden_state_layer_ids (4 layers)" in ignored.message and ignored.severity == "warning"
    assert "DSP357" not in codes(a)  # both runners read the top-level list


def test_llama_top_level_four_ids_with_a_three_layer_fc_fails_at_the_first_step(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-llama", {"eagle_aux_hidden_state_layer_ids": IDS4}, 3 * H))
    assert outcomes(a) == every(None, "DSP329")  # fc loads; the runners hand it 4 target layers
    step = a.verdicts[0].first_step
    assert step is not None and not step.verbatim and "hands it the 4 layers of eagle_aux_hidden_state_layer_ids" \
        in step.text


def test_qwen3_top_level_four_ids_loads(tmp_path: Path) -> None:
    """The issue says vLLM never reads the top-level list: qwen3_eagle3.py does (`getattr(...) or ...`)."""
    a = run(draft(tmp_path, "eagle3-qwen3", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H), QWEN3)
    assert outcomes(a) == every(None, versions=QWEN3)
    assert not codes(a) & {"DSP329", "DSP356", "DSP357"}


def test_qwen3_four_ids_with_a_three_layer_fc_fails(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-qwen3", {"eagle_aux_hidden_state_layer_ids": IDS4}, 3 * H), QWEN3)
    assert outcomes(a) == every(shape_error(3 * H, 4 * H), versions=QWEN3)


# --- nested eagle_config ids ---

@pytest.mark.parametrize("family", FAMILIES)
def test_nested_four_ids_size_fc_but_model_runner_v2_ignores_them(tmp_path: Path, family: str) -> None:
    a = run(draft(tmp_path, family, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 4 * H),
            releases(family))
    # fc is [H, 4H] and loads; V1 reads the nested list (4 layers), V2 only the top level: 3 default layers.
    # EAGLE-3 Llama 0.18-0.21 build a [H, 3H] fc whatever the list says: the [H, 4H] weight fails to load
    assert outcomes(a) == every(None, "DSP329", releases(family)) | (
        fixed_fc(shape_error(4 * H, 3 * H)) if family == "eagle3-llama" else {})
    step = next(v for v in a.verdicts if v.version not in FIXED).first_step
    assert step is not None and "model runner V2 hands it the target's default layers" in step.text \
        and "(only under that runner)" in step.text
    runner = next(f for f in a.findings if f.code == "DSP356")
    assert "(model runner V2, vLLM's default on CUDA for eagle3 from 0.29) does not read " \
        "eagle_config.eagle_aux_hidden_state_layer_ids and takes the target's default layers" in runner.message


@pytest.mark.parametrize("family", FAMILIES)
def test_nested_four_ids_with_a_three_layer_fc_fails(tmp_path: Path, family: str) -> None:
    a = run(draft(tmp_path, family, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 3 * H),
            releases(family))
    # EAGLE-3 Llama 0.18-0.21: the [H, 3H] fc loads, and neither runner reads eagle_config's list (V1 only the top
    # level and dflash_config, gpu_model_runner.py L4961-4965 @ v0.20.0; V2 only the top level, eagle3_utils.py
    # L41-46 @ v0.20.0): both hand fc the target's 3 default layers, and nothing fails
    assert outcomes(a) == every(shape_error(3 * H, 4 * H), versions=releases(family)) | (
        fixed_fc(None) if family == "eagle3-llama" else {})


# --- num_aux_hidden_states set ---

@pytest.mark.parametrize("family", FAMILIES)
def test_count_and_top_level_list_load_everywhere(tmp_path: Path, family: str) -> None:
    """The repair of the issue's case: fc sized from the count, both runners read the top-level list (on every
    release that reads a count: EAGLE-3 Llama 0.18-0.21 size fc for 3 whatever it says)."""
    config = {"num_aux_hidden_states": 4, "eagle_aux_hidden_state_layer_ids": IDS4}
    counted = tuple(v for v in releases(family) if v in READS_COUNT)
    a = run(draft(tmp_path / "counted", family, config, 4 * H), counted)
    assert outcomes(a) == every(None, versions=counted)
    assert not codes(a) & {"DSP329", "DSP356", "DSP357"}
    if family == "eagle3-llama":
        fixed = run(draft(tmp_path / "fixed", family, config, 4 * H), FIXED)
        assert outcomes(fixed) == fixed_fc(shape_error(4 * H, 3 * H))
        ignored = next(f for f in fixed.findings if f.code == "DSP356")
        assert "always sizes fc for 3 aux hidden states" in ignored.message and "DSP357" not in codes(fixed)


def test_llama_count_without_a_list_fails_at_the_first_step(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-llama", {"num_aux_hidden_states": 4}, 4 * H))
    # 4 x H fc, the target's 3 default layers; 0.18-0.21 build a 3 x H fc: the 4 x H weight fails to load
    assert outcomes(a) == every(None, "DSP329") | fixed_fc(shape_error(4 * H, 3 * H))
    assert "DSP357" in codes(a)


def test_qwen3_num_aux_layers_wins_over_num_aux_hidden_states(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-qwen3", {"num_aux_layers": 4, "num_aux_hidden_states": 3}, 3 * H), QWEN3)
    assert outcomes(a) == every(shape_error(3 * H, 4 * H), versions=QWEN3)


# --- absent list ---

@pytest.mark.parametrize("family", FAMILIES)
def test_absent_list_loads_with_the_default_layers_warning(tmp_path: Path, family: str) -> None:
    a = run(draft(tmp_path, family, {}, 3 * H), releases(family))
    assert outcomes(a) == every(None, versions=releases(family))
    absent = next(f for f in a.findings if f.code == "DSP357")
    # every listed release's runners fall back to the target's default (gpu_model_runner.py L4961-4969 @ v0.20.0,
    # eagle3_utils.py L26-31, L41-46 @ v0.20.0, interfaces.py L1390 @ v0.20.0)
    assert absent.message.startswith(f"vLLM {releases(family)[0]}-{VLLM_VERSIONS[-1]} finds no "
                                     "eagle_aux_hidden_state_layer_ids")
    assert "(2, L // 2, L - 3)" in absent.message and absent.severity == "info"  # the default, no evidence against it (issue 41)


@pytest.mark.parametrize("family", FAMILIES)
def test_absent_list_with_a_four_layer_fc_fails(tmp_path: Path, family: str) -> None:
    a = run(draft(tmp_path, family, {}, 4 * H), releases(family))
    assert outcomes(a) == every(shape_error(4 * H, 3 * H), versions=releases(family))


def test_no_fc_weight_is_not_judged(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-llama", {"eagle_aux_hidden_state_layer_ids": IDS4}, None))
    assert outcomes(a) == every(None)


def test_use_aux_hidden_state_false_drops_fc(tmp_path: Path) -> None:
    """No fc is built and `fc.` weights are mapped to None by load_weights: nothing to mismatch."""
    a = run(draft(tmp_path, "eagle3-llama", {"eagle_config": {"use_aux_hidden_state": False}}, 4 * H))
    assert outcomes(a) == every(None)
    assert not codes(a) & {"DSP329", "DSP356"}


# --- target_hidden_size different from hidden_size ---

@pytest.mark.parametrize("family", FAMILIES)
def test_target_hidden_size_sets_fc_width(tmp_path: Path, family: str) -> None:
    # 0.18-0.21 size a fixed fc as `self.config.target_hidden_size * 3` too (llama_eagle3.py L175-176 @ v0.20.0)
    versions = releases(family)
    assert outcomes(run(draft(tmp_path / "a", family, {"target_hidden_size": 24}, 3 * 24), versions)) == every(
        None, versions=versions)
    wrong = run(draft(tmp_path / "b", family, {"target_hidden_size": 24}, 3 * H), versions)
    assert outcomes(wrong) == every(shape_error(3 * H, 3 * 24), versions=versions)


# --- the speculators eagle3 form (converted by update_eagle3 first) ---

def test_speculators_llama_top_level_four_ids_fails(tmp_path: Path) -> None:
    a = run(speculators(tmp_path, "llama", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H))
    assert outcomes(a) == every(shape_error(4 * H, 3 * H))
    assert "DSP356" in codes(a)


def test_speculators_qwen3_top_level_four_ids_loads(tmp_path: Path) -> None:
    # update_eagle3 maps a qwen3 layer to Eagle3Qwen3ForCausalLM from 0.24.0 (algos.py L40-46 @ v0.24.0)
    a = run(speculators(tmp_path, "qwen3", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H), QWEN3)
    assert outcomes(a) == every(None, versions=QWEN3)


def test_speculators_top_level_count_is_not_copied(tmp_path: Path) -> None:
    """update_eagle3 copies only target_hidden_size and the top-level list: a top-level count is ignored."""
    top = {"num_aux_hidden_states": 4, "eagle_aux_hidden_state_layer_ids": IDS4}
    a = run(speculators(tmp_path, "llama", top, 4 * H))
    assert outcomes(a) == every(shape_error(4 * H, 3 * H))
    ignored = next(f for f in a.findings if f.code == "DSP356")
    assert "num_aux_hidden_states (4 layers)" in ignored.message


def test_speculators_count_in_the_layer_config_loads(tmp_path: Path) -> None:
    a = run(speculators(tmp_path / "a", "llama", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H,
                        {"num_aux_hidden_states": 4}))
    assert outcomes(a) == every(None) | fixed_fc(shape_error(4 * H, 3 * H))  # 0.18-0.21 read no count


def test_speculators_target_hidden_size_is_copied(tmp_path: Path) -> None:
    a = run(speculators(tmp_path, "llama", {"target_hidden_size": 24, "eagle_aux_hidden_state_layer_ids": [1, 2, 3]},
                        3 * 24))
    assert outcomes(a) == every(None)


def test_without_target_the_warnings_still_come(tmp_path: Path) -> None:
    """The aux reads do not depend on T: check without --target still says what vLLM ignores."""
    path = draft(tmp_path, "eagle3-llama", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H)
    a = analyze(local_source(path), target=None, runtimes=[RuntimeVersion("vllm", "0.33.0")])
    assert "DSP356" in codes(a)


def test_a_nested_list_alone_is_read_by_no_runner_of_0_34(tmp_path: Path) -> None:
    """0.34 has no model runner V1 (gpu_model_runner.py gone): the V2 runner, which never reads eagle_config's list,
    is the only one, so DSP356 says the list is not read there without naming V1; 0.27-0.33 name V1 as its reader."""
    ids3 = [1, 2, 3]
    a = run(draft(tmp_path, "eagle3-llama", {"eagle_config": {"eagle_aux_hidden_state_layer_ids": ids3}}, 3 * H))
    assert outcomes(a) == every(None)  # fc sized from eagle_config's list (3); V2's default is 3 layers too
    runner = next(f for f in a.findings if f.code == "DSP356")
    assert "vLLM 0.34.0 (model runner V2, its only model runner for EAGLE-3) does not read " \
           "eagle_config.eagle_aux_hidden_state_layer_ids (3 layers)" in runner.message
    # no V2 runner reads eagle_config's list (eagle3_utils.py get_eagle3_aux_layers_from_config, L35-46 @ v0.20.0);
    # V1 reads it from 0.22 (gpu_model_runner.py L5241-5246 @ v0.22.0; L4961-4965 @ v0.20.0: the top level only)
    assert "vLLM 0.22.0-0.33.0 (model runner V2, vLLM's default on CUDA for eagle3 from 0.29) does " \
           "not read eagle_config.eagle_aux_hidden_state_layer_ids" in runner.message
    assert "vLLM 0.17.0-0.21.0 (neither model runner, V1 or V2) reads " \
           "eagle_config.eagle_aux_hidden_state_layer_ids (3 layers)" in runner.message
    # 0.16 has no V2 EAGLE-3 runner (no v1/worker/gpu/spec_decode/eagle/eagle3_utils.py; its V2 EagleSpeculator is
    # handed no aux states, model_runner.py L961 @ v0.16.0): V1 alone, reading the top level only
    assert f"vLLM {VLLM_VERSIONS[0]}-0.16.0 (model runner V1, its only model runner for EAGLE-3) does not read " \
           "eagle_config.eagle_aux_hidden_state_layer_ids (3 layers)" in runner.message
    assert "model runner V1 reads it" in runner.message.split("vLLM 0.34.0")[0]
    assert "V1" not in runner.message.split("vLLM 0.34.0", 1)[1]
    assert "DSP357" not in codes(a)  # the draft does name its layers
