"""Every line runtimes/eagle3_aux.py cites, re-read in the release it names: the recorded answers to what these tests
ask of each wheel in the hermetic suite, the wheel itself (fetched once, then cached) in the upstream tier
(tests/wheel_excerpts.py)."""

from __future__ import annotations

import re

import pytest
from recorded import sources
from wheel_excerpts import Wheel
from wheel_excerpts import wheel as release_files

from dspark_ckpt.runtimes import eagle3_aux, release_lines
from dspark_ckpt.runtimes.table import VLLM_VERSIONS

USE = r'if (eagle_config is not None and )?"use_aux_hidden_state" in eagle_config:'
RUNNER2 = "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py"


def test_every_release_the_table_covers_is_read() -> None:
    assert eagle3_aux.RELEASES == VLLM_VERSIONS


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("version", VLLM_VERSIONS)
def test_cited_lines_say_what_the_model_claims(version: str, source: str) -> None:
    ln = eagle3_aux.lines_of(version)
    llama, qwen3 = "vllm/model_executor/models/llama_eagle3.py", "vllm/model_executor/models/qwen3_eagle3.py"
    w: Wheel = release_files("vllm", version, source)
    use, first, width = ln.llama
    # 0.20-0.24 guard the nested lookup with `eagle_config is not None and` (llama_eagle3.py L149 @ v0.20.0)
    assert re.search(USE, w.line(llama, use))
    if ln.llama_fixed:  # 0.20-0.21: fc sized for 3 aux states, no count key (llama_eagle3.py L174-178 @ v0.20.0)
        assert ln.llama == (use, first, first + 1) and ln.llama_count_end == first + 3
        assert 'if hasattr(self.config, "target_hidden_size"):' in w.line(llama, first)
        assert "fc_input_size = self.config.target_hidden_size * 3" in w.line(llama, width)
        assert "fc_input_size = self.config.hidden_size * 3" in w.line(llama, ln.llama_count_end)
        assert not w.has(llama, "num_aux_hidden_states") and not w.has(llama, "eagle_aux_hidden_state_layer_ids")
    else:
        assert 'self.num_aux_hidden_states = getattr(' in w.line(llama, first)
        assert '"num_aux_hidden_states"' in w.line(llama, first + 1)
        assert 'layer_ids = eagle_config.get("eagle_aux_hidden_state_layer_ids")' in w.line(llama,
                                                                                           ln.llama_count_end - 1)
        assert "len(layer_ids) if layer_ids else 3" in w.line(llama, ln.llama_count_end)
        assert "self.fc_input_size = target_hidden_size * self.num_aux_hidden_states" in w.line(llama, width)
        count = "\n".join(w.lines(llama, first, ln.llama_count_end))
        assert "eagle_aux_hidden_state_layer_ids\", None" not in count  # the top-level list is never read for n
    if ln.qwen3 is None:  # qwen3_eagle3.py first ships in 0.24.0 (registry.py @ v0.24.0 L614)
        assert ln.qwen3_count_end is None and not w.exists(qwen3)
    else:
        use, first, width = ln.qwen3
        assert re.search(USE, w.line(qwen3, use))
        assert 'getattr(self.config, "num_aux_layers", None)' in w.line(qwen3, first)
        assert 'getattr(self.config, "num_aux_hidden_states", None)' in w.line(qwen3, first + 2)
        assert 'self.config, "eagle_aux_hidden_state_layer_ids", None' in w.line(qwen3, ln.qwen3_count_end - 2)
        assert 'eagle_config.get("eagle_aux_hidden_state_layer_ids")' in w.line(qwen3, ln.qwen3_count_end - 1)
        assert "len(aux_ids) if aux_ids else 3" in w.line(qwen3, ln.qwen3_count_end)
        assert "self.fc_input_size = target_hidden_size * num_aux_features" in w.line(qwen3, width)
    linear = "vllm/model_executor/layers/linear.py"
    assert "assert param.size() == loaded_weight.size()" in w.line(linear, ln.assert_line)
    assert 'f"Tried to load weights of size {loaded_weight.size()}"' in w.line(linear, ln.assert_line + 1)
    assert 'f"to a parameter of size {param.size()}"' in w.line(linear, ln.assert_line + 2)
    runner = "vllm/v1/worker/gpu_model_runner.py"
    if ln.runner is None:  # 0.34: Model Runner V1 is gone; V2 alone reads the list
        assert not w.exists(runner)
    else:
        assert "def _get_eagle3_aux_layers_from_config" in w.line(runner, ln.runner)
    if ln.runner2 is None:  # 0.16 and older: no V2 EAGLE-3 runner
        assert not w.exists(RUNNER2)
    else:
        assert "def get_eagle3_aux_layers_from_config" in w.line(RUNNER2, ln.runner2)
    default = release_lines.cited(version, "aux.default")  # interfaces.py from 0.18; 0.17 and older: llama.py
    assert default is not None
    assert "return (2, num_layers // 2, num_layers - 3)" in w.line(default[0], ln.default)
    algos = "vllm/transformers_utils/configs/speculators/algos.py"
    assert 'if config_dict.get("target_hidden_size") is not None:' in w.line(algos, ln.algos[0])
    assert 'if config_dict.get("eagle_aux_hidden_state_layer_ids"):' in w.line(algos, ln.algos[1])
    body = w.text(algos).split("def update_eagle3", 1)[1].split("@register_speculator", 1)[0]
    assert "num_aux_hidden_states" not in body and "eagle_config" not in body  # not copied by the conversion


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("version", [v for v in VLLM_VERSIONS if eagle3_aux.lines_of(v).runner2 is not None])
def test_the_v2_runner_reads_the_keys_the_model_claims(version: str, source: str) -> None:
    """eagle3_aux.runner_keys(version, "V2"): the drafter configs' layer_ids where the release has that fallback
    (0.27+), the DSpark keys where it reads them (0.25+); never eagle_config's aux list."""
    w = release_files("vllm", version, source)
    keys = eagle3_aux.runner_keys(version, "V2")
    assert w.has(RUNNER2, 'drafter_config.get("layer_ids")') is ("eagle_config.layer_ids" in keys)
    assert w.has(RUNNER2, 'getattr(hf_config, "dspark_target_layer_ids", None)') is ("dspark_target_layer_ids" in keys)
    assert not w.has(RUNNER2, 'get("eagle_aux_hidden_state_layer_ids")') and keys[0] == eagle3_aux.TOP


def test_the_load_error_is_quoted_as_the_wheel_joins_it() -> None:
    from dspark_ckpt.runtimes.messages import E_REPLICATED_SHAPE

    assert E_REPLICATED_SHAPE.startswith("Tried to load weights of size torch.Size(")
    assert "])to a parameter of size torch.Size([" in E_REPLICATED_SHAPE
