"""Maintainer command: write dspark_ckpt/runtimes/registered_architectures.json from the released wheels.

For every release in runtimes/versions.py (VLLM_RELEASES, SGLANG_RELEASES) it reads the wheel's own registry:

- vLLM: vllm/model_executor/models/registry.py, with `ast`: the keys of the dicts spread into `_VLLM_MODELS`
  (the registry's model table); those of `_SPECULATIVE_DECODING_MODELS` are drafts, the rest models. Names kept
  only in `_PREVIOUSLY_SUPPORTED_MODELS` / `_OOT_SUPPORTED_MODELS` are not registered (the registry refuses them).
- SGLang: each top-level sglang/srt/models/*.py's `EntryClass` (models/registry.py import_model_classes keys the
  table by each class's `__name__`, skipping sub-packages). SGLang keeps drafts and models in one table; a class is
  a draft when its name says it (EAGLE, NextN, MTP, DFlash, DSpark, Medusa, draft), as sglang's own speculative
  workers name them (Gemma4 and Muse Glimmer drafts are "Assistant"s).

Each entry carries the wheel's file:line, as runs of consecutive releases with the same location.

    python tools/registry_data.py                     # download every listed release, write the data file
    python tools/registry_data.py --source DIR        # DIR/vllm-X/, DIR/sglang-X/ hold extracted wheels
    python tools/registry_data.py --check             # exit 1 when the committed file differs
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dspark_ckpt.runtimes.versions import SGLANG_RELEASES, VLLM_RELEASES

DATA = ROOT / "dspark_ckpt" / "runtimes" / "registered_architectures.json"
VLLM_REGISTRY = "vllm/model_executor/models/registry.py"
SGLANG_MODELS = "sglang/srt/models"
SPECULATIVE = "_SPECULATIVE_DECODING_MODELS"
_SGLANG_DRAFT_WORDS = ("eagle", "nextn", "mtp", "dflash", "dspark", "medusa", "draft", "assistant")

Entry = tuple[str, str]  # (kind, "file:line"), kind "draft" or "model"


def _dict_keys(node: ast.expr) -> Iterable[tuple[str, int]]:
    if isinstance(node, ast.Dict):
        for key in node.keys:
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield key.value, key.lineno


def vllm_entries(tree: Path) -> dict[str, Entry]:
    """Every architecture vLLM's registry maps, with its kind and the registry line that maps it."""
    source = (tree / VLLM_REGISTRY).read_text()
    dicts: dict[str, ast.expr] = {}
    for stmt in ast.parse(source).body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and stmt.value is not None:  # type: ignore[union-attr]
            dicts[target.id] = stmt.value  # type: ignore[union-attr]
    table = dicts["_VLLM_MODELS"]
    assert isinstance(table, ast.Dict), "registry.py: _VLLM_MODELS is no longer a dict display"
    spread = [v.id for k, v in zip(table.keys, table.values) if k is None and isinstance(v, ast.Name)]
    assert SPECULATIVE in spread, f"registry.py: {SPECULATIVE} not spread into _VLLM_MODELS"
    out: dict[str, Entry] = {}
    for name in spread:
        kind = "draft" if name == SPECULATIVE else "model"
        for arch, line in _dict_keys(dicts[name]):
            # a later spread wins in the dict, as it does in _VLLM_MODELS
            out[arch] = (kind, f"{VLLM_REGISTRY}:{line}")
    return out


def _class_names(module: ast.Module) -> dict[str, str]:
    """What `__name__` a module-level name has: its class's own name (aliases `A = B` resolved)."""
    names: dict[str, str] = {}
    for stmt in module.body:
        if isinstance(stmt, ast.ClassDef):
            names[stmt.name] = stmt.name
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name):
            for target in stmt.targets:
                if isinstance(target, ast.Name) and target.id != "EntryClass":
                    names[target.id] = names.get(stmt.value.id, stmt.value.id)
    return names


def _entry_names(node: ast.expr) -> list[ast.Name]:
    if isinstance(node, ast.Name):
        return [node]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [n for elt in node.elts for n in _entry_names(elt)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _entry_names(node.left) + _entry_names(node.right)
    raise ValueError(f"EntryClass at line {node.lineno} is not a name or a list of names: {ast.dump(node)[:120]}")


def sglang_draft(name: str) -> bool:
    return any(word in name.lower() for word in _SGLANG_DRAFT_WORDS)


def sglang_entries(tree: Path) -> dict[str, Entry]:
    """Every class an EntryClass of SGLang's models/ lists, with its kind and the EntryClass line."""
    out: dict[str, Entry] = {}
    for path in sorted((tree / SGLANG_MODELS).glob("*.py")):
        module = ast.parse(path.read_text(encoding="utf-8-sig"))  # some files open with a BOM
        names = _class_names(module)
        for stmt in module.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EntryClass"
                                                    for t in stmt.targets):
                for node in _entry_names(stmt.value):
                    cls = names.get(node.id, node.id)
                    out[cls] = ("draft" if sglang_draft(cls) else "model",
                                f"{SGLANG_MODELS}/{path.name}:{node.lineno}")
    return out


def _runs(where: Mapping[str, str], releases: Sequence[str]) -> dict[str, str]:
    """{release: location} as {"A" or "A..B": location} over consecutive releases of the list."""
    out: dict[str, str] = {}
    start = prev = None
    for release in [*releases, None]:
        loc = where.get(release) if release is not None else None
        if start is not None and (loc is None or loc != where[start]):
            out[start if start == prev else f"{start}..{prev}"] = where[start]
            start = None
        if loc is not None and start is None:
            start = release
        prev = release
    return out


def build(runtime: str, trees: Mapping[str, Path]) -> dict[str, object]:
    """The data of one runtime: its releases, and per architecture its kind and its locations."""
    read = vllm_entries if runtime == "vllm" else sglang_entries
    releases = list(trees)
    per_release = {release: read(tree) for release, tree in trees.items()}
    kinds: dict[str, str] = {}
    where: dict[str, dict[str, str]] = {}
    for release, entries in per_release.items():
        for arch, (kind, loc) in entries.items():
            if kinds.setdefault(arch, kind) != kind:
                raise ValueError(f"{runtime} {release}: {arch} is a {kind} here, a {kinds[arch]} elsewhere")
            where.setdefault(arch, {})[release] = loc
    archs = {arch: {"kind": kinds[arch], "where": _runs(where[arch], releases)} for arch in sorted(where)}
    return {"releases": releases, "architectures": archs}


def fetch(package: str, version: str, into: Path) -> Path:
    """Download `package==version`'s wheel (no dependencies) and keep the registry files only."""
    folder = into / f"{package}-{version}"
    if folder.is_dir():
        return folder
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
                        "-d", scratch, f"{package}=={version}"], check=True, timeout=900)
        wheel = next(Path(scratch).glob("*.whl"))
        keep = (VLLM_REGISTRY,) if package == "vllm" else (f"{SGLANG_MODELS}/",)
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".py") and member.startswith(keep) and ".." not in member:
                    (folder / member).parent.mkdir(parents=True, exist_ok=True)
                    (folder / member).write_bytes(archive.read(member))
    return folder


def render(data: Mapping[str, object]) -> str:
    """One architecture a line, so that a regeneration's diff reads per name."""
    parts = [f'{{"generated_by": {json.dumps(data["generated_by"])}']
    for runtime in ("vllm", "sglang"):
        doc = data[runtime]
        assert isinstance(doc, dict)
        rows = ",\n".join(f"  {json.dumps(name)}: {json.dumps(entry)}" for name, entry in doc["architectures"].items())
        parts.append(f'"{runtime}": {{"releases": {json.dumps(doc["releases"])}, "architectures": {{\n{rows}\n}}}}')
    return ",\n".join(parts) + "}\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="a folder holding vllm-X/ and sglang-X/ extracted wheels")
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        into = args.source or Path(scratch)
        data = {
            "generated_by": "tools/registry_data.py",
            "vllm": build("vllm", {v: fetch("vllm", v, into) for v in VLLM_RELEASES}),
            "sglang": build("sglang", {v: fetch("sglang", v, into) for v in SGLANG_RELEASES}),
        }
    text = render(data)
    if args.check:
        same = DATA.read_text() == text
        print("up to date" if same else f"{DATA} differs from the wheels: rerun without --check")
        return 0 if same else 1
    DATA.write_text(text)
    print(f"wrote {DATA} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
