"""Every line runtimes/eagle3_aux.py cites, re-read in the released wheel it names (fetched once, then cached)."""

from __future__ import annotations

import re

import pytest
from released_sources import release_tree

from dspark_ckpt.runtimes import eagle3_aux, release_lines
from dspark_ckpt.runtimes.table import VLLM_VERSIONS

pytestmark = pytest.mark.slow  # the first run downloads seven vLLM wheels (cached after)


USE = r'if (eagle_config is not None and )?"use_aux_hidden_state" in eagle_config:'
RUNNER2 = "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py"


def line(version: str, path: str, number: int) -> str:
    return (release_tree("vllm", version) / path).read_text().splitlines()[number - 1]


def test_every_release_the_table_covers_is_read() -> None:
    assert eagle3_aux.RELEASES == VLLM_VERSIONS


@pytest.mark.parametrize("version", VLLM_VERSIONS)
def test_cited_lines_say_what_the_model_claims(version: str) -> None:
    ln = eagle3_aux.lines_of(version)
    llama, qwen3 = "vllm/model_executor/models/llama_eagle3.py", "vllm/model_executor/models/qwen3_eagle3.py"
    tree = release_tree("vllm", version)
    use, first, width = ln.llama
    # 0.20-0.24 guard the nested lookup with `eagle_config is not None and` (llama_eagle3.py L149 @ v0.20.0)
    assert re.search(USE, line(version, llama, use))
    if ln.llama_fixed:  # 0.20-0.21: fc sized for 3 aux states, no count key (llama_eagle3.py L174-178 @ v0.20.0)
        assert ln.llama == (use, first, first + 1) and ln.llama_count_end == first + 3
        assert 'if hasattr(self.config, "target_hidden_size"):' in line(version, llama, first)
        assert "fc_input_size = self.config.target_hidden_size * 3" in line(version, llama, width)
        assert "fc_input_size = self.config.hidden_size * 3" in line(version, llama, ln.llama_count_end)
        text = (tree / llama).read_text()
        assert "num_aux_hidden_states" not in text and "eagle_aux_hidden_state_layer_ids" not in text
    else:
        assert 'self.num_aux_hidden_states = getattr(' in line(version, llama, first)
        assert '"num_aux_hidden_states"' in line(version, llama, first + 1)
        assert 'layer_ids = eagle_config.get("eagle_aux_hidden_state_layer_ids")' in line(version, llama,
                                                                                           ln.llama_count_end - 1)
        assert "len(layer_ids) if layer_ids else 3" in line(version, llama, ln.llama_count_end)
        assert "self.fc_input_size = target_hidden_size * self.num_aux_hidden_states" in line(version, llama, width)
        count = "\n".join((tree / llama).read_text().splitlines()[first - 1:ln.llama_count_end])
        assert "eagle_aux_hidden_state_layer_ids\", None" not in count  # the top-level list is never read for n
    if ln.qwen3 is None:  # qwen3_eagle3.py first ships in 0.24.0 (registry.py @ v0.24.0 L614)
        assert ln.qwen3_count_end is None and not (tree / qwen3).exists()
    else:
        use, first, width = ln.qwen3
        assert re.search(USE, line(version, qwen3, use))
        assert 'getattr(self.config, "num_aux_layers", None)' in line(version, qwen3, first)
        assert 'getattr(self.config, "num_aux_hidden_states", None)' in line(version, qwen3, first + 2)
        assert 'self.config, "eagle_aux_hidden_state_layer_ids", None' in line(version, qwen3, ln.qwen3_count_end - 2)
        assert 'eagle_config.get("eagle_aux_hidden_state_layer_ids")' in line(version, qwen3, ln.qwen3_count_end - 1)
        assert "len(aux_ids) if aux_ids else 3" in line(version, qwen3, ln.qwen3_count_end)
        assert "self.fc_input_size = target_hidden_size * num_aux_features" in line(version, qwen3, width)
    linear = "vllm/model_executor/layers/linear.py"
    assert "assert param.size() == loaded_weight.size()" in line(version, linear, ln.assert_line)
    assert 'f"Tried to load weights of size {loaded_weight.size()}"' in line(version, linear, ln.assert_line + 1)
    assert 'f"to a parameter of size {param.size()}"' in line(version, linear, ln.assert_line + 2)
    runner = "vllm/v1/worker/gpu_model_runner.py"
    if ln.runner is None:  # 0.34: Model Runner V1 is gone; V2 alone reads the list
        assert not (tree / runner).exists()
    else:
        assert "def _get_eagle3_aux_layers_from_config" in line(version, runner, ln.runner)
    if ln.runner2 is None:  # 0.16 and older: no V2 EAGLE-3 runner
        assert not (tree / RUNNER2).exists()
    else:
        assert "def get_eagle3_aux_layers_from_config" in line(version, RUNNER2, ln.runner2)
    default = release_lines.cited(version, "aux.default")  # interfaces.py from 0.18; 0.17 and older: llama.py
    assert default is not None
    assert "return (2, num_layers // 2, num_layers - 3)" in line(version, default[0], ln.default)
    algos = "vllm/transformers_utils/configs/speculators/algos.py"
    assert 'if config_dict.get("target_hidden_size") is not None:' in line(version, algos, ln.algos[0])
    assert 'if config_dict.get("eagle_aux_hidden_state_layer_ids"):' in line(version, algos, ln.algos[1])
    body = (tree / algos).read_text().split("def update_eagle3", 1)[1].split("@register_speculator", 1)[0]
    assert "num_aux_hidden_states" not in body and "eagle_config" not in body  # not copied by the conversion


@pytest.mark.parametrize("version", [v for v in VLLM_VERSIONS if eagle3_aux.lines_of(v).runner2 is not None])
def test_the_v2_runner_reads_the_keys_the_model_claims(version: str) -> None:
    """eagle3_aux.runner_keys(version, "V2"): the drafter configs' layer_ids where the release has that fallback
    (0.27+), the DSpark keys where it reads them (0.25+); never eagle_config's aux list."""
    v2 = (release_tree("vllm", version) / RUNNER2).read_text()
    keys = eagle3_aux.runner_keys(version, "V2")
    assert ('drafter_config.get("layer_ids")' in v2) is ("eagle_config.layer_ids" in keys)
    assert ('getattr(hf_config, "dspark_target_layer_ids", None)' in v2) is ("dspark_target_layer_ids" in keys)
    assert 'get("eagle_aux_hidden_state_layer_ids")' not in v2 and keys[0] == eagle3_aux.TOP


def test_the_load_error_is_quoted_as_the_wheel_joins_it() -> None:
    from dspark_ckpt.runtimes.messages import E_REPLICATED_SHAPE

    assert E_REPLICATED_SHAPE.startswith("Tried to load weights of size torch.Size(")
    assert "])to a parameter of size torch.Size([" in E_REPLICATED_SHAPE
