"""Execute a vLLM release's own config rewrites for a draft and record what they do, per release.

Two pieces of the release's code decide which class a draft config becomes before any weight is read:
`SpeculativeConfig.hf_config_override` (vllm/config/speculative.py), which every draft ModelConfig gets as its
hf_overrides (model_type deepseek_v3 -> deepseek_mtp and architectures ["DeepSeekMTPModel"], ...), and
`EAGLEConfig.__init__` (vllm/transformers_utils/configs/eagle.py), which renames the architecture per method
(LlamaForCausalLM + eagle3 -> Eagle3LlamaForCausalLM); and for a Medusa head (model_type "medusa", 0.12-0.32)
`MedusaConfig.__init__` (vllm/transformers_utils/configs/medusa.py) completes a missing `architectures`; and what
`SpeculativeConfig.__post_init__` gives one method in place of the override (`method_overrides`, read with `ast`:
method medusa's `{"model_type": "medusa"}` and its vocab_size set to the target's, 0.25-0.32). This tool cuts the
first three out of the release's file with `ast` and runs each as written over stand-in config objects (no torch, no
transformers: the rewrites read and set attributes only), reads the last (an inline branch) with `ast`, and writes
the outcomes to `dspark_ckpt/runtimes/release_data/vllm-X.Y.Z/config_rewrites.json` (the override and
Medusa's completion, read by every vLLM build) and `eagle_renames.json` beside it (runtimes/config_rewrites.py reads
both). Every model_type the override compares with is fed; every architecture of
RENAME_PROBES under every method EAGLEConfig knows.

    python tools/release_config_rewrites.py 0.33.0 [0.34.0 ...]   # the wheel's .py files (probe_runtime's cache)
    python tools/release_config_rewrites.py --all [--check]        # every listed release; --check compares
"""

from __future__ import annotations
import __future__

import argparse
import ast
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from probe_runtime import DEFAULT_CACHE, fetch_sources  # tools/ is on sys.path (not a package)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "dspark_ckpt" / "runtimes" / "release_data"
SPEC = "vllm/config/speculative.py"
EAGLE = "vllm/transformers_utils/configs/eagle.py"
MEDUSA = "vllm/transformers_utils/configs/medusa.py"  # 0.12-0.32: model_type "medusa" builds a MedusaConfig
FILE = "config_rewrites.json"
EAGLE_FILE = "eagle_renames.json"
METHODS = ("eagle", "eagle3", "dflash")
# Base classes drafts are exported as, and draft classes whose names each rule keeps.
RENAME_PROBES = ("LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "MistralForCausalLM",
                 "DeepseekV3ForCausalLM", "DeepSeekMTPModel", "LagunaForCausalLM", "Gemma4ForCausalLM",
                 "EagleLlamaForCausalLM", "Eagle3LlamaForCausalLM", "LlamaForCausalLMEagle3",
                 "Eagle3DeepseekV2ForCausalLM", "DFlashDraftModel", "Qwen3DFlash", "LiLiCorrDraftModel",
                 "DSparkDraftModel")


class Stand:
    """A stand-in hf_config: attributes, `update` (PretrainedConfig.update sets each key), `to_dict`."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def update(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _function(tree: ast.Module, cls: str, name: str) -> ast.FunctionDef | ast.ClassDef | None:
    owner = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
    if owner is None:
        return None
    if not name:
        return owner
    return next((n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _compiled(text: str, node: ast.AST, scope: dict[str, Any]) -> dict[str, Any]:
    source = textwrap.dedent(ast.get_source_segment(text, node) or "")
    tree = ast.parse(source)
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.ClassDef)):
            top.decorator_list = []
    code = compile(tree, "<release>", "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, scope)  # noqa: S102 - the release's own text (a maintainer tool), run over stand-ins
    return scope


def _compared_types(fn: ast.FunctionDef) -> list[str]:
    """Every string the function compares `hf_config.model_type` with, in source order."""
    found: list[str] = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute)
                and node.left.attr == "model_type"):
            continue
        for comp in node.comparators:
            items = comp.elts if isinstance(comp, (ast.Tuple, ast.List, ast.Set)) else [comp]
            found += [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    return list(dict.fromkeys(found))


def _outcome(call: Any, cfg: Stand) -> dict[str, Any]:
    before = dict(cfg.__dict__)
    try:
        out = call(cfg)
    except Exception as exc:  # noqa: BLE001 - whatever the release's code raises is recorded as its outcome
        return {"raises": f"{type(exc).__name__}: {str(exc)[:120]}"}
    after = out.__dict__ if isinstance(out, Stand) else {}
    return {k: after.get(k) for k in ("model_type", "architectures") if before.get(k, object()) != after.get(k)}


def overrides(text: str, drafts: frozenset[str] = frozenset()) -> dict[str, Any]:
    """`drafts`: the release's registered draft names (spec.json), the names whose own branches are replayed."""
    tree = ast.parse(text)
    fn = _function(tree, "SpeculativeConfig", "hf_config_override")
    if not isinstance(fn, ast.FunctionDef):
        return {"file": SPEC, "line": None, "model_types": {}}
    scope = _compiled(text, fn, {"Any": Any})
    call = scope["hf_config_override"]
    outcomes = {mt: _outcome(call, Stand(model_type=mt, architectures=["ProbeArch"], num_nextn_predict_layers=1,
                                         layer_types=[]))
                for mt in _compared_types(fn)}
    table = {mt: out for mt, out in outcomes.items() if out}  # a model_type left as written is not listed
    found = {"file": SPEC, "line": fn.lineno, "end": fn.end_lineno, "model_types": table}
    by_arch = architecture_overrides(fn, call, drafts)
    return {**found, "architectures": by_arch} if by_arch else found


_FIRST_ARCH = ("initial_architecture", "hf_config.architectures[0]")
PROBE_TYPE = "probe_type"  # a model_type no branch compares: what an architecture's branch does alone
# What a key a branch's test reads with getattr(hf_config, key, ...) is set to: a non-empty and an empty list (the
# test's truthiness; runtimes/config_rewrites.architecture_override replays the outcome of the same truthiness).
KEY_PROBES = ([0], [])


def _first_arch_names(test: ast.expr) -> list[str]:
    """The names an `if` compares the config's first architecture with (`initial_architecture == "X"`,
    `hf_config.architectures[0] in (...)`, `(arch := hf_config.architectures[0]) in (...)`)."""
    found: list[str] = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        left = node.left.value if isinstance(node.left, ast.NamedExpr) else node.left
        if ast.unparse(left) not in _FIRST_ARCH:
            continue
        for comp in node.comparators:
            items = comp.elts if isinstance(comp, (ast.Tuple, ast.List, ast.Set)) else [comp]
            found += [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    return found


def _keys_read(test: ast.expr) -> list[str]:
    """The keys a test reads with `getattr(hf_config, "key", ...)`."""
    return [n.args[1].value for n in ast.walk(test) if isinstance(n, ast.Call) and ast.unparse(n.func) == "getattr"
            and len(n.args) >= 2 and ast.unparse(n.args[0]) == "hf_config" and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)]


def architecture_overrides(fn: ast.FunctionDef, call: Any, drafts: frozenset[str]) -> dict[str, Any]:
    """What the override does to a draft name it compares the first architecture with (registered drafts only: the
    target-architecture branches build an MTP draft from a target's config, which check does not replay), run over a
    stand-in of a model_type no branch compares: as written, and with each key its `if` reads set to each of
    KEY_PROBES. Only an outcome that changes the model_type or the architectures is kept, with the branch's lines;
    a DFlash2DraftModel with non-empty `no_rope_layers` -> DFlash2RicursiveDraftModel (0.34)."""
    found: dict[str, Any] = {}
    for node in ast.walk(fn):
        if not isinstance(node, ast.If):
            continue
        for arch in (a for a in _first_arch_names(node.test) if a in drafts):
            base = Stand(model_type=PROBE_TYPE, architectures=[arch], num_nextn_predict_layers=1, layer_types=[])
            entry: dict[str, Any] = {}
            if (alone := _outcome(call, base)) and "raises" not in alone:
                entry["as_written"] = alone
            for key in _keys_read(node.test):
                seen = {json.dumps(v): _outcome(call, Stand(**{**base.__dict__, key: v})) for v in KEY_PROBES}
                if any(out and "raises" not in out for out in seen.values()):
                    entry.setdefault("keys", {})[key] = seen
            if entry:
                found[arch] = {**entry, "line": node.lineno, "end": node.body[-1].end_lineno}
    return found


class _Base:
    """transformers' PretrainedConfig as EAGLEConfig uses it: keyword arguments become attributes."""

    def __init__(self, **kwargs: Any) -> None:
        self.__dict__.update(kwargs)


def renames(text: str) -> dict[str, Any]:
    tree = ast.parse(text)
    cls = _function(tree, "EAGLEConfig", "")
    init = _function(tree, "EAGLEConfig", "__init__")
    if not isinstance(cls, ast.ClassDef) or not isinstance(init, ast.FunctionDef):
        return {"file": EAGLE, "line": None, "names": {}}
    stubs = {"PretrainedConfig": _Base, "PreTrainedConfig": _Base, "DeepseekV2Config": _Base,
             "AutoConfig": None, "without_trust_remote_code": lambda kw: kw, "os": os}
    scope = _compiled(text, cls, dict(stubs))
    eagle = scope["EAGLEConfig"]
    names: dict[str, dict[str, Any]] = {}
    for arch in RENAME_PROBES:
        row: dict[str, Any] = {}
        for method in METHODS:
            try:
                built = eagle(Stand(architectures=[arch], vocab_size=8), method=method)
                row[method] = built.architectures[0]
            except Exception as exc:  # noqa: BLE001 - the release's own refusal (ValueError) is an outcome
                row[method] = {"raises": f"{type(exc).__name__}: {exc}"}
        names[arch] = row
    return {"file": EAGLE, "line": init.lineno, "end": init.end_lineno, "names": names}


def medusa(tree: Path) -> dict[str, Any]:
    """What MedusaConfig (the class vLLM's config parser builds for model_type "medusa") makes of a config.json
    that names no architectures: its __init__ run as written over the stand-in base."""
    path = tree / MEDUSA
    if not path.is_file():
        return {"file": MEDUSA, "line": None, "architectures": None}
    text = path.read_text(encoding="utf-8")
    tree_ = ast.parse(text)
    cls, init = _function(tree_, "MedusaConfig", ""), _function(tree_, "MedusaConfig", "__init__")
    if not isinstance(cls, ast.ClassDef) or not isinstance(init, ast.FunctionDef):
        return {"file": MEDUSA, "line": None, "architectures": None}
    stubs = {"PretrainedConfig": _Base, "PreTrainedConfig": _Base, "without_trust_remote_code": lambda kw: kw,
             "os": os}
    medusa_cls = _compiled(text, cls, dict(stubs))["MedusaConfig"]
    built = medusa_cls()
    return {"file": MEDUSA, "line": init.lineno, "end": init.end_lineno,
            "architectures": getattr(built, "architectures", None),
            **_medusa_renames(tree_, medusa_cls), **_medusa_lookahead(tree_, built)}


# FasterDecoding's config.json keys (medusa/model/medusa_model.py MedusaConfig) and a value each, told apart
MEDUSA_KEYS = {"medusa_num_heads": 3, "medusa_num_layers": 2}


def _medusa_renames(tree_: ast.Module, medusa_cls: Any) -> dict[str, Any]:
    """The keys MedusaConfig.from_pretrained renames before building (FasterDecoding's `medusa_num_heads` ->
    `num_heads`, ...): the release's classmethod run over a stand-in config.json holding MEDUSA_KEYS."""
    fn = _function(tree_, "MedusaConfig", "from_pretrained")
    if not isinstance(fn, ast.FunctionDef):
        return {}
    medusa_cls.get_config_dict = classmethod(lambda cls, path, **kw: (dict(MEDUSA_KEYS), kw))
    medusa_cls.from_dict = classmethod(lambda cls, found, **kw: found)
    out = medusa_cls.from_pretrained.__func__(medusa_cls, "draft")
    renames = {key: next(k for k, v in out.items() if v == value) for key, value in MEDUSA_KEYS.items()
               if key not in out and value in out.values()}
    return {"renames": renames, "renames_line": fn.lineno, "renames_end": fn.end_lineno} if renames else {}


def _medusa_lookahead(tree_: ast.Module, built: Any) -> dict[str, Any]:
    """The attribute MedusaConfig's `num_lookahead_tokens` setter writes (SpeculativeConfig.__post_init__ sets it
    to num_speculative_tokens where the draft's hf_config has it): the release's property run on a built config."""
    owner = _function(tree_, "MedusaConfig", "")
    setter = next((n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == "num_lookahead_tokens"
                   and any(ast.unparse(d).endswith(".setter") for d in n.decorator_list)), None) \
        if isinstance(owner, ast.ClassDef) else None
    if setter is None:
        return {}
    before = dict(built.__dict__)
    built.num_lookahead_tokens = 7919
    moved = [k for k, v in built.__dict__.items() if v == 7919 and before.get(k) != 7919]
    return {"lookahead": moved[0], "lookahead_line": setter.lineno} if len(moved) == 1 else {}


def _served_method(test: ast.expr) -> str | None:
    """The method an `if self.method == "<method>":` names."""
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Attribute) and test.left.attr == "method" and \
            isinstance(test.left.value, ast.Name) and test.left.value.id == "self" and len(test.ops) == 1 and \
            isinstance(test.ops[0], ast.Eq) and isinstance(test.comparators[0], ast.Constant) and \
            isinstance(test.comparators[0].value, str):
        return test.comparators[0].value
    return None


def method_overrides(text: str) -> dict[str, Any]:
    """What `SpeculativeConfig.__post_init__` does for one method beyond hf_config_override, read with `ast` (an
    inline branch, not a function to run): the `draft_hf_overrides` literal it gives that method's draft ModelConfig
    in place of the override (0.25-0.32: medusa -> {"model_type": "medusa"}), and the draft hf_config attributes it
    then sets to the target's vocab_size (`target_vocab`), each with its line. {} where the release has no such
    branch."""
    init = _function(ast.parse(text), "SpeculativeConfig", "__post_init__")
    found: dict[str, Any] = {}
    for node in ast.walk(init) if init is not None else ():
        method = _served_method(node.test) if isinstance(node, ast.If) else None
        if method is None or not isinstance(node, ast.If):
            continue
        assigns = [n for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Assign)]
        # the names the branch binds to the target's vocab_size (`self.target_model_config.hf_config.vocab_size`)
        targets = {t.id for n in assigns if "target_model_config" in ast.unparse(n.value)
                   and ast.unparse(n.value).endswith(".vocab_size") for t in n.targets if isinstance(t, ast.Name)}
        for sub in assigns:
            if any(isinstance(t, ast.Name) and t.id == "draft_hf_overrides" for t in sub.targets):
                found.setdefault(method, {}).update(hf_overrides=ast.literal_eval(sub.value), line=sub.lineno)
            elif isinstance(sub.value, ast.Name) and sub.value.id in targets:
                found.setdefault(method, {}).setdefault("target_vocab", {}).update(
                    {t.attr: sub.lineno for t in sub.targets if isinstance(t, ast.Attribute)})
    return {"file": SPEC, "methods": found} if found else {}


def lookahead_set(text: str) -> int | None:
    """The line where `SpeculativeConfig.__post_init__` sets the draft hf_config's `num_lookahead_tokens` to
    num_speculative_tokens (where it has the attribute: MedusaConfig's heads), read with `ast`; None where it
    does not."""
    init = _function(ast.parse(text), "SpeculativeConfig", "__post_init__")
    return next((node.lineno for node in ast.walk(init) if isinstance(node, ast.Assign)
                 and any(ast.unparse(t).endswith(".num_lookahead_tokens") for t in node.targets)
                 and "num_speculative_tokens" in ast.unparse(node.value)), None) if init is not None else None


def dump(version: str, tree: Path) -> dict[str, str]:
    """The two files: what every vLLM build reads (the override, Medusa's completion), and EAGLEConfig's renames
    (read only for a draft EAGLEConfig wraps)."""
    # the release's generated registry (main puts ROOT on sys.path)
    from dspark_ckpt.runtimes import spec_facts

    by = {"generated_by": f"python tools/release_config_rewrites.py {version}"}
    spec = (tree / SPEC).read_text(encoding="utf-8")
    served = method_overrides(spec)  # written only where the release has such a branch
    found = medusa(tree)
    if found.get("lookahead") and (line := lookahead_set(spec)) is not None:
        found["lookahead_set"] = {"file": SPEC, "line": line}
    drafts = frozenset(spec_facts.drafts(version))
    return {FILE: _written({**by, "hf_config_override": overrides(spec, drafts), "medusa_config": found,
                            **({"method_overrides": served} if served else {})}),
            EAGLE_FILE: _written({**by, "eagle_config": renames((tree / EAGLE).read_text(encoding="utf-8"))})}


def _written(doc: dict[str, Any]) -> str:
    """One entry a line (each model_type, each architecture): small to read at check time, a reviewable diff."""
    def block(node: dict[str, Any]) -> str:
        rows = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(node.items()))
        return "{\n" + rows + "\n }"

    parts = []
    for key, value in sorted(doc.items()):
        if isinstance(value, dict):
            inner = [f"{json.dumps(k)}: {block(v) if isinstance(v, dict) and v else json.dumps(v)}"
                     for k, v in sorted(value.items())]
            parts.append(f"{json.dumps(key)}: {{" + ", ".join(inner) + "}")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="vLLM releases, e.g. 0.33.0")
    parser.add_argument("--all", action="store_true", help="every listed vLLM release (runtimes/versions.py)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where wheels are extracted")
    parser.add_argument("--check", action="store_true", help="compare with the committed files; write nothing")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from dspark_ckpt.runtimes.versions import VLLM_RELEASES

    differ = 0
    for version in args.versions or (list(VLLM_RELEASES) if args.all else []):
        for name, text in dump(version, fetch_sources(version, args.cache)).items():
            path = OUT / f"vllm-{version}" / name
            if args.check:
                same = path.is_file() and path.read_text(encoding="utf-8") == text
                differ += not same
                print(f"release_config_rewrites: {path} {'is' if same else 'is NOT'} what vLLM {version}'s code does")
                continue
            path.write_text(text, encoding="utf-8")
            print(f"release_config_rewrites: wrote {path}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
