"""EAGLE-3's aux hidden states (issue 21): the fc shape each vLLM release builds from a draft's config, the load
error when fc.weight has another shape, the first-step failure when a runner hands fc another number of layers, and
the DSP356 / DSP357 warnings. Real tiny checkpoints (H = 16) through `analyze`, per release.

Every expectation is what the release's code does (llama_eagle3.py, qwen3_eagle3.py, algos.py update_eagle3,
linear.py ReplicatedLinear.weight_loader; runtimes/eagle3_aux.py LINES); the load outcomes were observed by running
0.27.0, 0.30.0 and 0.33.0 on CPU (tools/probe_eagle3_aux.py, 17/17 cases each).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import backbone_config, draft_tensors, make_checkpoint, write_safetensors

from dspark_ckpt.check.analysis import Analysis, analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.table import VLLM_VERSIONS
from dspark_ckpt.sources.local import local_source

H, T = 16, 96
IDS4 = [1, 5, 9, 13]
FAMILIES = ("eagle3-llama", "eagle3-qwen3")


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


def run(path: Path, versions: tuple[str, ...] = VLLM_VERSIONS) -> Analysis:
    return analyze(local_source(path), target=TargetVocab(T, "test"),
                   runtimes=[RuntimeVersion("vllm", v) for v in versions])


def outcomes(a: Analysis) -> dict[str, tuple[str | None, str | None]]:
    return {v.version: (v.error.text if v.error else None, v.first_step.code if v.first_step else None)
            for v in a.verdicts}


def codes(a: Analysis) -> set[str]:
    return {f.code for f in a.findings}


def every(error: str | None, step: str | None = None) -> dict[str, tuple[str | None, str | None]]:
    """The same outcome on every release: the code read is alike in 0.27.0-0.34.0 (only its line numbers move)."""
    return dict.fromkeys(VLLM_VERSIONS, (error, step))


# --- top-level ids with 4 layers (the case) ---

def test_llama_top_level_four_ids_fails_on_fc(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-llama", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H))
    assert outcomes(a) == every(shape_error(4 * H, 3 * H))  # llama_eagle3.py never reads the top-level list
    ignored = next(f for f in a.findings if f.code == "DSP356")
    assert "vLLM 0.27.0-0.34.0 (llama_eagle3.py) sizes fc from the default of 3 x hidden_size" in ignored.message
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
    a = run(draft(tmp_path, "eagle3-qwen3", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H))
    assert outcomes(a) == every(None)
    assert not codes(a) & {"DSP329", "DSP356", "DSP357"}


def test_qwen3_four_ids_with_a_three_layer_fc_fails(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-qwen3", {"eagle_aux_hidden_state_layer_ids": IDS4}, 3 * H))
    assert outcomes(a) == every(shape_error(3 * H, 4 * H))


# --- nested eagle_config ids ---

@pytest.mark.parametrize("family", FAMILIES)
def test_nested_four_ids_size_fc_but_model_runner_v2_ignores_them(tmp_path: Path, family: str) -> None:
    a = run(draft(tmp_path, family, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 4 * H))
    # fc is [H, 4H] and loads; V1 reads the nested list (4 layers), V2 only the top level: 3 default layers
    assert outcomes(a) == every(None, "DSP329")
    step = a.verdicts[0].first_step
    assert step is not None and "model runner V2 hands it the target's default layers" in step.text \
        and "(only under that runner)" in step.text
    runner = next(f for f in a.findings if f.code == "DSP356")
    assert "(model runner V2, vLLM's default on CUDA for eagle3 from 0.29) does not read " \
        "eagle_config.eagle_aux_hidden_state_layer_ids and takes the target's default layers" in runner.message


@pytest.mark.parametrize("family", FAMILIES)
def test_nested_four_ids_with_a_three_layer_fc_fails(tmp_path: Path, family: str) -> None:
    a = run(draft(tmp_path, family, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 3 * H))
    assert outcomes(a) == every(shape_error(3 * H, 4 * H))


# --- num_aux_hidden_states set ---

@pytest.mark.parametrize("family", FAMILIES)
def test_count_and_top_level_list_load_everywhere(tmp_path: Path, family: str) -> None:
    """The repair of the issue's case: fc sized from the count, both runners read the top-level list."""
    config = {"num_aux_hidden_states": 4, "eagle_aux_hidden_state_layer_ids": IDS4}
    a = run(draft(tmp_path, family, config, 4 * H))
    assert outcomes(a) == every(None)
    assert not codes(a) & {"DSP329", "DSP356", "DSP357"}


def test_llama_count_without_a_list_fails_at_the_first_step(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-llama", {"num_aux_hidden_states": 4}, 4 * H))
    assert outcomes(a) == every(None, "DSP329")  # 4 x H fc, the target's 3 default layers
    assert "DSP357" in codes(a)


def test_qwen3_num_aux_layers_wins_over_num_aux_hidden_states(tmp_path: Path) -> None:
    a = run(draft(tmp_path, "eagle3-qwen3", {"num_aux_layers": 4, "num_aux_hidden_states": 3}, 3 * H))
    assert outcomes(a) == every(shape_error(3 * H, 4 * H))


# --- absent list ---

@pytest.mark.parametrize("family", FAMILIES)
def test_absent_list_loads_with_the_default_layers_warning(tmp_path: Path, family: str) -> None:
    a = run(draft(tmp_path, family, {}, 3 * H))
    assert outcomes(a) == every(None)
    absent = next(f for f in a.findings if f.code == "DSP357")
    assert absent.message.startswith("vLLM 0.27.0-0.34.0 finds no eagle_aux_hidden_state_layer_ids")
    assert "(2, L // 2, L - 3)" in absent.message and absent.severity == "warning"  # the runtime guesses (issue 21)


@pytest.mark.parametrize("family", FAMILIES)
def test_absent_list_with_a_four_layer_fc_fails(tmp_path: Path, family: str) -> None:
    a = run(draft(tmp_path, family, {}, 4 * H))
    assert outcomes(a) == every(shape_error(4 * H, 3 * H))


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
    assert outcomes(run(draft(tmp_path / "a", family, {"target_hidden_size": 24}, 3 * 24))) == every(None)
    wrong = run(draft(tmp_path / "b", family, {"target_hidden_size": 24}, 3 * H))
    assert outcomes(wrong) == every(shape_error(3 * H, 3 * 24))


# --- the speculators eagle3 form (converted by update_eagle3 first) ---

def test_speculators_llama_top_level_four_ids_fails(tmp_path: Path) -> None:
    a = run(speculators(tmp_path, "llama", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H))
    assert outcomes(a) == every(shape_error(4 * H, 3 * H))
    assert "DSP356" in codes(a)


def test_speculators_qwen3_top_level_four_ids_loads(tmp_path: Path) -> None:
    a = run(speculators(tmp_path, "qwen3", {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H))
    assert outcomes(a) == every(None)


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
    assert outcomes(a) == every(None)


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
    assert "vLLM 0.34.0 (model runner V2, its only model runner) does not read " \
           "eagle_config.eagle_aux_hidden_state_layer_ids (3 layers)" in runner.message
    assert "vLLM 0.27.0-0.33.0 (model runner V2, vLLM's default on CUDA for eagle3 from 0.29) does not read " \
           "eagle_config.eagle_aux_hidden_state_layer_ids" in runner.message
    assert "model runner V1 reads it" in runner.message.split("vLLM 0.34.0")[0]
    assert "V1" not in runner.message.split("vLLM 0.34.0", 1)[1]
    assert "DSP357" not in codes(a)  # the draft does name its layers
