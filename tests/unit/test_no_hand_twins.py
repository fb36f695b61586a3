"""The hand twins of generated data issue 40 named stay gone: `INIT_READS` and `BuiltConfig.reads` (unread; what
__init__ reads is the record's `reads`), both `CONFIG_CLASS` tables (runtimes/config_classes.py, its own tests),
`_init_error`'s family list (the record's `required` keys decide, for every class the contract rows describe),
DRAFT_CLASSES (architecture -> class: the generated registry's, spec_facts.draft_class) and CLASS_FAMILY (class ->
family: read off the contract rows, vllm_rows.CLASS_FAMILIES), and DRAFT_CLASSES' first releases
(tests/unit/test_focused_runtimes.py)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import dspark_ckpt
from dspark_ckpt.model.families import ARCHITECTURE_FAMILY, Family
from dspark_ckpt.runtimes import spec_facts, vllm_rows
from dspark_ckpt.runtimes.config_build import build_config, family_of
from dspark_ckpt.runtimes.records import BuiltConfig
from dspark_ckpt.runtimes.release_model import architecture_model, modelled_release
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

PACKAGE = Path(dspark_ckpt.__file__).parent
GONE = frozenset({"INIT_READS", "CONFIG_CLASS", "DRAFT_CLASSES", "CLASS_FAMILY"})


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


def _draft_classes() -> dict[str, str]:
    """Every draft name any listed release registers -> its class (the generated registry, spec.json)."""
    return {name: cls for release in VLLM_RELEASES for name, cls in spec_facts.drafts(release).items()}


def test_no_module_maps_draft_names_or_classes_by_hand() -> None:
    """A literal table from registered draft names to their classes (a twin of the generated registry) or from
    draft classes to families (a twin of the contract rows' (family, model_class)) is not to come back under any
    name: every dict literal in the package is scanned."""
    classes = _draft_classes()
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Dict):
                continue
            pairs = [(k.value, v) for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            names_to_class = [k for k, v in pairs if isinstance(v, ast.Constant) and classes.get(k) == v.value]
            # a key that is a class and no registered name (DFlashQwen3ForCausalLM): Eagle3LlamaForCausalLM is
            # both, and a name's family is model/families.ARCHITECTURE_FAMILY's
            class_to_family = [k for k, v in pairs if k in vllm_rows.CLASS_FAMILIES and k not in classes
                               and isinstance(v, ast.Attribute)
                               and isinstance(v.value, ast.Name) and v.value.id == Family.__name__]
            if len(names_to_class) > 1 or len(class_to_family) > 1:
                found[f"{path.relative_to(PACKAGE)}:{node.lineno}"] = names_to_class or class_to_family
    assert found == {}
    # the scan looks for real classes, four of them no registered name
    assert set(vllm_rows.CLASS_FAMILIES) <= set(classes.values())
    assert len(set(vllm_rows.CLASS_FAMILIES) - set(classes)) >= 4


def _required() -> list[tuple[str, str, str, str]]:
    """(architecture, listed release, required key, config model_type) for every class the contract rows describe
    whose generated record says __init__ raises without the key."""
    found = []
    for arch in ARCHITECTURE_FAMILY:
        if family_of(arch) is None:
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
