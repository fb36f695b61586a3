"""Generate dspark_ckpt/runtimes/strict_config_fields.json: for each transformers a generated SGLang release pins,
the keys its `@strict` config classes type without None, for the model types drafts declare (config_classes.json).

transformers 5 validates a `@strict` config class's typed fields when the config is built (huggingface_hub
dataclasses `strict`): a config.json that states such a key as null fails in AutoConfig, before the runtime reads
anything else (SGLang: utils/hf_transformers/config.py get_config, from configs/model_config.py), with
`StrictDataclassFieldValidationError: Validation error for field 'K': TypeError: Field 'K' expected int, got
NoneType (value: None)`. Read statically (ast) from the pinned transformers' models/*/configuration_*.py, bases
followed by class name; a field typed with None, Any, or a name this reader does not know is left out.

    python tools/strict_config_fields.py            # write
    python tools/strict_config_fields.py --check    # fail on any difference (the upstream tier)
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "dspark_ckpt" / "runtimes" / "strict_config_fields.json"
DATA = ROOT / "dspark_ckpt" / "runtimes" / "release_data"
CACHE = Path.home() / ".cache" / "dspark-ckpt" / "probe"
SCALARS = {"int", "float", "bool", "str", "list", "dict"}


def _types(node: ast.expr) -> set[str] | None:
    """The names an annotation allows (a union's members); None where it allows None or something unread."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _types(node.left), _types(node.right)
        return None if left is None or right is None else left | right
    if isinstance(node, ast.Name) and node.id in SCALARS:
        return {node.id}
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("list", "dict"):
        return {node.value.id}
    return None  # None, Optional[...], Any, a class, a string annotation: not judged


def _classes(tree: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((tree / "transformers" / "models").glob("*/configuration_*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"))
        for node in module.body:
            if not isinstance(node, ast.ClassDef):
                continue
            strict = any((isinstance(d, ast.Name) and d.id == "strict") or
                         (isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "strict")
                         for d in node.decorator_list)
            model_type, fields = None, {}
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "model_type"
                                                        for t in stmt.targets) \
                        and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                    model_type = stmt.value.value
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    fields[stmt.target.id] = _types(stmt.annotation)
            out[node.name] = {"strict": strict, "model_type": model_type, "fields": fields,
                              "bases": [b.id for b in node.bases if isinstance(b, ast.Name)],
                              "where": f"transformers/{path.relative_to(tree / 'transformers')}:{node.lineno}"}
    return out


def _fields(classes: dict[str, dict[str, Any]], name: str, seen: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A class's annotated fields, its bases' first (a subclass's own annotation wins)."""
    cls = classes.get(name)
    if cls is None or name in seen:
        return {}
    merged: dict[str, Any] = {}
    for base in cls["bases"]:
        merged.update(_fields(classes, base, seen | {name}))
    merged.update(cls["fields"])
    return merged


def generate() -> dict[str, Any]:
    wanted = set()
    config_classes = json.loads((DATA / "config_classes.json").read_text())
    for runtime in ("vllm", "sglang"):
        wanted |= set(config_classes.get(runtime, {}))
    versions = sorted({json.loads(p.read_text())["transformers"] for p in DATA.glob("sglang-*/release.json")
                       if json.loads(p.read_text()).get("transformers")})
    out: dict[str, Any] = {"generated_by": "python tools/strict_config_fields.py", "transformers": {}}
    for version in versions:
        tree = CACHE / f"transformers-{version}"
        if not (tree / "transformers").is_dir():  # fetched by tools/sglang_release_model.py X for its release
            out.setdefault("not_read", []).append(version)
            continue
        classes = _classes(tree)
        per: dict[str, Any] = {}
        for name, cls in sorted(classes.items()):
            if not cls["strict"] or cls["model_type"] not in wanted or cls["model_type"] in per:
                continue
            not_null = {k: sorted(v) for k, v in _fields(classes, name).items() if v is not None}
            per[cls["model_type"]] = {"class": name, "where": cls["where"], "not_null": not_null}
        out["transformers"][version] = per
    return out


def main(argv: list[str]) -> int:
    text = json.dumps(generate(), indent=1, sort_keys=True) + "\n"
    if "--check" in argv:
        if OUT.read_text() != text:
            print(f"{OUT} differs from what {__file__} generates", file=sys.stderr)
            return 1
        print(f"{OUT.name} is what the pinned transformers say")
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
