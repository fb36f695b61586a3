"""The hand twins of generated data issue 40 named stay gone: `INIT_READS` and `BuiltConfig.reads` (unread; what
__init__ reads is the record's `reads`), both `CONFIG_CLASS` tables (runtimes/config_classes.py, its own tests),
`_init_error`'s family list (the record's `required` keys decide, for every class the contract rows describe), and
DRAFT_CLASSES' first releases (tests/unit/test_focused_runtimes.py)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import dspark_ckpt
from dspark_ckpt.runtimes import vllm_rows
from dspark_ckpt.runtimes.config_build import build_config
from dspark_ckpt.runtimes.records import BuiltConfig
from dspark_ckpt.runtimes.release_model import architecture_model, modelled_release
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

PACKAGE = Path(dspark_ckpt.__file__).parent
GONE = frozenset({"INIT_READS", "CONFIG_CLASS"})


def test_no_module_keeps_a_retired_table() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            named = {t.id for t in targets if isinstance(t, ast.Name)} & GONE
            if named:
                found[f"{path.relative_to(PACKAGE)}:{node.lineno}"] = sorted(named)
    assert found == {}
    assert "reads" not in {f.name for f in dataclasses.fields(BuiltConfig)}


def _required() -> list[tuple[str, str, str, str]]:
    """(architecture, listed release, required key, config model_type) for every class the contract rows describe
    whose generated record says __init__ raises without the key."""
    found = []
    for arch, cls in vllm_rows.DRAFT_CLASSES.items():
        if cls not in vllm_rows.CLASS_FAMILY:
            continue
        for release in VLLM_RELEASES:
            modelled = modelled_release("vllm", release)
            model = architecture_model("vllm", modelled, arch) if modelled is not None else None
            if model is None or model.config_type is None or model.not_built is not None:
                continue
            found += [(arch, release, key, model.config_type[0]) for key in sorted(model.required)]
    return found


REQUIRED = _required()


def test_the_records_require_keys_of_several_families() -> None:
    assert {a for a, _, _, _ in REQUIRED} >= {"Qwen3DSparkModel", "Qwen3OmniDSparkModel", "Gemma4DSparkModel"}


@pytest.mark.parametrize(("arch", "release", "key", "model_type"), REQUIRED)
def test_init_fails_on_every_key_the_record_requires(arch: str, release: str, key: str, model_type: str) -> None:
    raw = {"architectures": [arch], "model_type": model_type, "vocab_size": 64, "hidden_size": 16,
           "draft_vocab_size": 64, "markov_rank": 4}
    raw.pop(key, None)
    built = build_config(raw, "vllm", release)
    assert built.error is not None and not built.before_validation, (arch, release)
    assert built.error.code == "DSP333" and built.error.text.endswith(f"object has no attribute '{key}'")
    nested = build_config({**raw, "dspark_config": {key: 4}}, "vllm", release)
    assert nested.error is not None and nested.error.code == "DSP215"  # fix hoists it: one cause, one finding
