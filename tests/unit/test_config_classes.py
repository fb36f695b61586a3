"""The config class per model_type is the generated records' (issue 40: `CONFIG_CLASS` was kept by hand twice, in
config_build.py and sglang_config.py): runtimes/config_classes.py reads the index tools/config_classes.py gathers from
the records, and keeps by hand only the model types no record samples. These tests fail if the index drifts from the
records, if a hand entry is one the records now sample, or if a second model_type -> class table appears."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import dspark_ckpt
from dspark_ckpt.runtimes import config_classes
from dspark_ckpt.runtimes.config_build import build_config
from dspark_ckpt.runtimes.sglang_config import SglangConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))  # the generator: not in the package
import config_classes as tool

PACKAGE = Path(dspark_ckpt.__file__).parent
THE_ONE = PACKAGE / "runtimes" / "config_classes.py"


def test_the_index_is_what_the_records_say() -> None:
    assert config_classes.INDEX.read_text(encoding="utf-8") == tool.text(tool.sampled_classes()), \
        "rerun python tools/config_classes.py"


def test_no_hand_entry_is_one_the_records_sample() -> None:
    """A model_type a record samples answers from the records: its hand entry would be a twin (delete it)."""
    sampled = tool.sampled_classes()
    assert {rt: sorted(set(hand) & set(sampled.get(rt, {}))) for rt, hand in config_classes.UNSAMPLED.items()} == \
        {rt: [] for rt in config_classes.UNSAMPLED}


def test_the_hand_entries_agree_with_any_runtime_that_samples_them() -> None:
    """transformers' class is one whoever builds it: where another runtime's records sample a hand entry's
    model_type, they name the same class."""
    sampled = tool.sampled_classes()
    for runtime, hand in config_classes.UNSAMPLED.items():
        for model_type, cls in hand.items():
            assert {s.get(model_type, cls) for s in sampled.values()} == {cls}, (runtime, model_type)


def _class_tables(source: str) -> list[int]:
    """Lines of dict literals mapping at least two strings to `...Config` class names."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict) and sum(
                isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Constant)
                and isinstance(v.value, str) and v.value.endswith("Config") and v.value[:1].isupper()
                for k, v in zip(node.keys, node.values, strict=True)) >= 2:
            found.append(node.lineno)
    return found


def test_no_second_model_type_to_class_table() -> None:
    assert _class_tables('X = {"llama": "LlamaConfig", "qwen3": "Qwen3Config"}') == [1]
    found = {str(p.relative_to(PACKAGE)): lines for p in sorted(PACKAGE.rglob("*.py")) if p != THE_ONE
             if (lines := _class_tables(p.read_text(encoding="utf-8")))}
    assert found == {}


def test_both_runtimes_answer_from_the_one_module() -> None:
    raw = {"architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "vocab_size": 8, "hidden_size": 4}
    assert build_config(raw, "vllm", "0.33.0").config_class == "Qwen3Config"
    assert build_config(raw, "sglang", "0.5.23").config_class == "Qwen3Config"
    assert build_config({**raw, "model_type": "speculators"}, "vllm", "0.33.0").config_class == "SpeculatorsConfig"
    assert build_config({**raw, "model_type": "no_such_type"}, "vllm", "0.33.0").config_class == "PretrainedConfig"
    assert SglangConfig(model_type="gpt_oss").config_class == "GptOssConfig"
    assert SglangConfig(model_type="no_such_type").config_class is None
    # sampled by SGLang's records only: vLLM takes transformers' class from its hand entry, SGLang from its records
    assert config_classes.config_class("vllm", "qwen2") == config_classes.config_class("sglang", "qwen2")
