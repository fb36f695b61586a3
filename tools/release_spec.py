"""The mechanical columns of a vLLM release's SpeculativeConfig, read with `ast` from its own speculative.py.

Called by tools/release_lines.py, which writes them as `release_data/vllm-X.Y.Z/spec.json` beside lines.json
(runtimes/spec_facts.py reads it): the dataclass fields (pydantic's extra="forbid" accepts no other key), the
`method` Literal (SpeculativeMethod with the Literals it nests), the MTP model types (MTPModelTypes, which
__post_init__ turns into method "mtp"), and the architectures the method detection names in its `dflash` and
`dspark` branches (`"<name>" in self.draft_model_config.architectures`, a module constant resolved), and two
checks whose scope and words change by release: the architectures dspark_draft_topk allows, and adaptive
verification's refusal. And from its registry.py: every name a `_*_MODELS` dict display maps
(ReleaseRules.registers), and the class each `_SPECULATIVE_DECODING_MODELS` name maps to (ReleaseRules.model_class).
And, executed rather than read, what the proposer requires to start parallel drafting (`drafting_token`:
tools/release_drafting_token.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

from release_drafting_token import drafting_token  # tools/ is on sys.path (not a package)

SPEC = "vllm/config/speculative.py"
REGISTRY = "vllm/model_executor/models/registry.py"
EAGLE_CFG = "vllm/transformers_utils/configs/eagle.py"
DRAFTS = "_SPECULATIVE_DECODING_MODELS"
CONFIG_CLASS = "SpeculativeConfig"
METHOD_LITERAL = "SpeculativeMethod"
MTP_LITERAL = "MTPModelTypes"
MODELS = "vllm.model_executor.models"
SPEC_CFG = "vllm/v1/worker/gpu/spec_decode/speculator_config.py"
METHOD_CONFIGS = "vllm/v1/worker/gpu/spec_decode"  # 0.34+: each method's <method>/config.py
DSPARK_CFG = f"{METHOD_CONFIGS}/dspark/config.py"
DETECT_MARKERS = ("dflash", "dspark")  # the `"<marker>" in ....model.lower()` that opens each detection branch


class SpecError(Exception):
    """speculative.py no longer has the shape read here (the extraction needs updating for this release)."""


def _module_values(tree: ast.Module) -> dict[str, ast.expr]:
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            found.update({t.id: node.value for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found[node.target.id] = node.value
    return found


def _literal(name: str, values: dict[str, ast.expr]) -> list[str]:
    """The strings of `Name = Literal[...]`, nested Literal names expanded in place, in source order."""
    node = values.get(name)
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal"):
        raise SpecError(f"{SPEC}: {name} is no Literal[...]")
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    out: list[str] = []
    for elt in elts:
        if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
            out.append(elt.value)
        elif isinstance(elt, ast.Name):
            out += _literal(elt.id, values)
        else:
            raise SpecError(f"{SPEC}:{elt.lineno}: {name} holds neither a string nor a Literal name")
    return list(dict.fromkeys(out))


def _fields(tree: ast.Module) -> tuple[list[str], int]:
    """The annotated names of the class body (the dataclass's fields), and the class's line."""
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == CONFIG_CLASS), None)
    if cls is None:
        raise SpecError(f"{SPEC}: no class {CONFIG_CLASS}")
    names = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
             and not (isinstance(n.annotation, ast.Subscript) and isinstance(n.annotation.value, ast.Name)
                      and n.annotation.value.id in ("ClassVar", "InitVar"))]
    return names, cls.lineno


def _opens(test: ast.expr, marker: str) -> bool:
    """`"<marker>" in <...>.model.lower()` among the disjuncts of the condition."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    return any(isinstance(p, ast.Compare) and isinstance(p.left, ast.Constant) and p.left.value == marker
               and isinstance(p.ops[0], ast.In) and isinstance(p.comparators[0], ast.Call)
               and isinstance(p.comparators[0].func, ast.Attribute) and p.comparators[0].func.attr == "lower"
               for p in parts)


def _named_archs(test: ast.expr, constants: dict[str, ast.expr]) -> list[str]:
    """The architectures the condition's own disjuncts test with `<name> in ....architectures` (not those inside a
    conjunction, which need more than the name)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    out = []
    for p in parts:
        if not (isinstance(p, ast.Compare) and isinstance(p.ops[0], ast.In)
                and isinstance(p.comparators[0], ast.Attribute) and p.comparators[0].attr == "architectures"):
            continue
        left = constants.get(p.left.id, p.left) if isinstance(p.left, ast.Name) else p.left
        if not (isinstance(left, ast.Constant) and isinstance(left.value, str)):
            raise SpecError(f"{SPEC}:{p.lineno}: an architecture the detection names is no string")
        out.append(left.value)
    return out


def _detect(tree: ast.Module, values: dict[str, ast.expr], root: Path) -> dict[str, list[str]]:
    """The architectures each detection names: in __post_init__'s `dflash`/`dspark` branches (to 0.33), else (0.34:
    speculator_config.py's _resolve_checkpoint_config_class) those whose model class declares a SpeculatorConfig
    of that base_method (`speculator_config_class`, inherited), in registry order."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            for marker in DETECT_MARKERS:
                if marker not in found and _opens(node.test, marker):
                    found[marker] = _named_archs(node.test, values)
    if not found and (root / SPEC_CFG).is_file():
        declared = _declared(root)
        return {m: [a for a, method in declared.items() if method == m] for m in DETECT_MARKERS}
    # a method the release does not know at all (dspark before 0.25: not in the Literal, no branch) detects nothing
    text = (root / SPEC).read_text(encoding="utf-8")
    found.update({m: [] for m in DETECT_MARKERS if m not in found and f'"{m}"' not in text})
    missing = [m for m in DETECT_MARKERS if m not in found]
    if missing:
        raise SpecError(f"{SPEC}: no method detection branch for {missing}")
    return found


def _module_file(root: Path, module: str) -> Path:
    """The file of a dotted module name (a package's __init__.py)."""
    base = root / module.replace(".", "/")
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _parsed(path: Path) -> ast.Module | None:
    return ast.parse(path.read_text(encoding="utf-8")) if path.is_file() else None


def _class_attr(root: Path, module: str, name: str, attr: str, seen: frozenset[str] = frozenset()
                ) -> tuple[str, ast.expr] | None:
    """The module and value of `attr = ...` in class `module.name`'s body or, failing that, its bases' (each base
    found in the module or where it imports it from): a ClassVar as Python inherits it."""
    path = _module_file(root, module)
    tree = _parsed(path)
    if tree is None or f"{module}.{name}" in seen:
        return None
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    if cls is None:  # a package that re-exports the class
        source = _where(tree, module, name, path.name == "__init__.py")
        return None if source == module else _class_attr(root, source, name, attr, seen | {f"{module}.{name}"})
    for node in cls.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) and node.value is not None else None)
        if isinstance(target, ast.Name) and target.id == attr and node.value is not None:  # type: ignore[union-attr]
            return module, node.value  # type: ignore[union-attr]
    for base in cls.bases:
        if isinstance(base, ast.Name):
            hit = _class_attr(root, _where(tree, module, base.id, path.name == "__init__.py"), base.id, attr, seen | {f"{module}.{name}"})
            if hit is not None:
                return hit
    return None


def _where(tree: ast.Module, module: str, name: str, package: bool = False) -> str:
    """The module a name used in `module` is defined in: the `from X import name` that brings it (a relative X
    against the module's package; a platform's package imports per platform: the first import found), else
    `module`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            if not node.level:
                return node.module or module
            base = module.rsplit(".", node.level - package)[0] if node.level - package else module
            return f"{base}.{node.module}" if node.module else base
    return module


def _declared(root: Path) -> dict[str, str]:
    """Draft architecture -> the base_method of the SpeculatorConfig its registered class declares (0.34+)."""
    registry = _parsed(root / REGISTRY)
    node = _module_values(registry).get(DRAFTS) if registry is not None else None
    if not isinstance(node, ast.Dict):
        raise SpecError(f"{REGISTRY}: no {DRAFTS} dict")
    out: dict[str, str] = {}
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(value, ast.Tuple) and len(value.elts) == 2):
            continue
        module, cls = (e.value if isinstance(e, ast.Constant) else None for e in value.elts)
        if not (isinstance(module, str) and isinstance(cls, str)):
            continue
        module = module if "." in module else f"{MODELS}.{module}"
        hit = _class_attr(root, module, cls, "speculator_config_class")
        if hit is None or not isinstance(hit[1], ast.Name):
            continue
        at = _parsed(_module_file(root, hit[0]))
        assert at is not None
        config = hit[1].id
        method = _class_attr(root, _where(at, hit[0], config), config, "base_method")
        if method is not None and isinstance(method[1], ast.Constant) and isinstance(method[1].value, str):
            out[str(key.value)] = method[1].value
    return out


def _options(root: Path, module: str, cls: str) -> list[str]:
    """A SpeculatorConfig class's `supported_options` (0.34+), inherited as Python does and evaluated from its
    `frozenset({...})`, `Base.supported_options | {...}` or `- {...}` (sorted)."""
    hit = _class_attr(root, module, cls, "supported_options")
    if hit is None:
        return []
    at = _parsed(_module_file(root, hit[0]))
    assert at is not None

    def value(node: ast.expr) -> set[str]:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "frozenset":
            return value(node.args[0]) if node.args else set()
        if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
            return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.Sub)):
            left, right = value(node.left), value(node.right)
            return left | right if isinstance(node.op, ast.BitOr) else left - right
        if (isinstance(node, ast.Attribute) and node.attr == "supported_options"
                and isinstance(node.value, ast.Name)):
            return set(_options(root, _where(at, hit[0], node.value.id), node.value.id))
        raise SpecError(f"{hit[0]}:{node.lineno}: supported_options is no set expression read here")
    return sorted(value(hit[1]))


def _method_options(root: Path) -> dict[str, list[str]]:
    """0.34+: the method-specific options each built-in method's SpeculatorConfig accepts (speculator_config.py's
    `_CONFIG_BY_METHOD`); {} for a release without per-method config classes."""
    tree = _parsed(root / SPEC_CFG)
    node = _module_values(tree).get("_CONFIG_BY_METHOD") if tree is not None else None
    if not isinstance(node, ast.Dict):
        return {}
    out: dict[str, list[str]] = {}
    for key, call in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(call, ast.Call) and len(call.args) == 2):
            raise SpecError(f"{SPEC_CFG}: _CONFIG_BY_METHOD holds an entry read here as no _builtin(module, name)")
        module, cls = (a.value if isinstance(a, ast.Constant) else None for a in call.args)
        if not (isinstance(module, str) and isinstance(cls, str)):
            raise SpecError(f"{SPEC_CFG}:{call.lineno}: _builtin(...) with no string arguments")
        out[str(key.value)] = _options(root, f"vllm.v1.worker.gpu.spec_decode.{module}", cls)
    return out


def _raised(node: ast.stmt) -> str | None:
    """The message of `raise ValueError("...")` (adjacent string literals joined), None for any other statement."""
    if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args):
        return None
    text = node.exc.args[0]
    return text.value if isinstance(text, ast.Constant) and isinstance(text.value, str) else None


def _guard(tree: ast.Module, prefix: str) -> tuple[ast.If, str] | None:
    """The first `if <test>: raise ValueError("<prefix>...")` (source order), and its message."""
    found = [(node, text) for node in ast.walk(tree) if isinstance(node, ast.If) for stmt in node.body
             if (text := _raised(stmt)) is not None and text.startswith(prefix)]
    return min(found, key=lambda f: f[0].lineno) if found else None


def _excluded_archs(test: ast.expr, constants: dict[str, ast.expr]) -> list[str]:
    """The architectures a condition tests with `<name> not in ....architectures`, in source order."""
    out = []
    for p in ast.walk(test):
        if (isinstance(p, ast.Compare) and isinstance(p.ops[0], ast.NotIn)
                and isinstance(p.comparators[0], ast.Attribute) and p.comparators[0].attr == "architectures"):
            left = constants.get(p.left.id, p.left) if isinstance(p.left, ast.Name) else p.left
            if not (isinstance(left, ast.Constant) and isinstance(left.value, str)):
                raise SpecError(f"{SPEC}:{p.lineno}: an architecture the check names is no string")
            out.append(left.value)
    return out


def _names(test: ast.expr) -> set[str]:
    return {n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute)}


def _guards(tree: ast.Module, values: dict[str, ast.expr], dspark: ast.Module | None = None) -> dict[str, object]:
    """The checks whose words and scope change by release: dspark_draft_topk's architecture check (the
    architectures it allows, its message) and adaptive verification's refusal (its message, and whether it refuses
    only together with use_local_argmax_reduction). A release without one has no entry; where each is, lines.json
    cites (spec.topk_arch, spec.adaptive). From 0.34 the topk check is DSparkSpeculatorConfig.apply_options' (`dspark`:
    dspark/config.py, its architecture constants speculative.py's)."""
    found: dict[str, object] = {}
    topk = _guard(tree, "dspark_draft_topk is only supported by Q") or (
        _guard(dspark, "dspark_draft_topk is only supported by Q") if dspark is not None else None)
    if topk is not None:
        found["topk_arch"] = {"archs": _excluded_archs(topk[0].test, values), "message": topk[1]}
    adaptive = _guard(tree, "Adaptive verification")
    if adaptive is not None:
        found["adaptive"] = {"message": adaptive[1],
                             "needs_argmax": "use_local_argmax_reduction" in _names(adaptive[0].test)}
    return found


def _template(message: ast.JoinedStr, names: dict[str, str]) -> str:
    """An f-string's text with each replacement field named by `names` (keyed by the source of its expression)."""
    out = []
    for part in message.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            out.append(part.value.replace("{", "{{").replace("}", "}}"))
            continue
        assert isinstance(part, ast.FormattedValue)
        source = ast.unparse(part.value)
        if source not in names:
            raise SpecError(f"{SPEC}:{part.lineno}: an unknown field {source!r} in the aux-state target check")
        out.append("{" + names[source] + ("!r" if part.conversion == ord("r") else "") + "}")
    return "".join(out)


def _aux_targets(tree: ast.Module) -> dict[str, object]:
    """The target check of the methods that take the target's aux hidden states (0.21 and older, _verify_args): the
    substrings one of which the target's `hf_text_config.model_type` must contain, the methods checked, and the
    refusal's words with {method}, {supported} and {model_type!r} in place of its fields. {} where there is none."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        raised = node.body[-1] if node.body else None
        if not (isinstance(raised, ast.Raise) and isinstance(raised.exc, ast.Call) and raised.exc.args
                and isinstance(raised.exc.args[0], ast.JoinedStr)
                and "is only supported for" in ast.unparse(raised.exc.args[0])):
            continue
        loops = [g for n in ast.walk(node.test) if isinstance(n, ast.GeneratorExp) for g in n.generators]
        if len(loops) != 1 or not isinstance(loops[0].iter, ast.Name):
            raise SpecError(f"{SPEC}:{node.lineno}: the aux-state target check iterates no named list")
        listed = loops[0].iter.id
        methods: list[str] = []
        for n in ast.walk(node.test):
            if (isinstance(n, ast.Compare) and isinstance(n.left, ast.Attribute) and n.left.attr == "method"):
                right = n.comparators[0]
                elts = right.elts if isinstance(right, ast.Tuple) else [right]
                methods += [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        supported = next((a.value for a in ast.walk(tree) if isinstance(a, ast.Assign)
                          and any(isinstance(t, ast.Name) and t.id == listed for t in a.targets)
                          and isinstance(a.value, ast.List)), None)
        if not methods or supported is None:
            raise SpecError(f"{SPEC}:{node.lineno}: the aux-state target check names no method or no list")
        names = {"self.method": "method", listed: "supported",
                 "self.target_model_config.hf_text_config.model_type": "model_type"}
        return {"aux_targets": {
            "methods": methods,
            "supported": [e.value for e in supported.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)],
            "message": _template(raised.exc.args[0], names)}}
    return {}


def _dflash_keep(tree: Path) -> list[str]:
    """EAGLEConfig's rename under method dflash (`arch if arch.startswith("DFlash") or ... else f"DFlash{arch}"`):
    the names its condition keeps by equality (`arch == "<name>"`), in source order."""
    path = tree / EAGLE_CFG
    if not path.is_file():
        raise SpecError(f"no {EAGLE_CFG} in {tree}")
    text = path.read_text(encoding="utf-8")
    if "dflash" not in text:  # no method dflash yet (before 0.20): no rename, nothing kept
        return []
    for node in ast.walk(ast.parse(text)):
        if (isinstance(node, ast.IfExp) and isinstance(node.orelse, ast.JoinedStr)
                and any(isinstance(v, ast.Constant) and v.value == "DFlash" for v in node.orelse.values)):
            return [c.comparators[0].value for c in ast.walk(node.test)
                    if isinstance(c, ast.Compare) and isinstance(c.ops[0], ast.Eq)
                    and isinstance(c.comparators[0], ast.Constant) and isinstance(c.comparators[0].value, str)]
    raise SpecError(f"{EAGLE_CFG}: no dflash rename")


def _registry(tree: Path) -> dict[str, object]:
    """The drafts' classes (in registry order). Which names the release registers at all is
    runtimes/registered_architectures.json's (tools/registry_data.py: what `_VLLM_MODELS` spreads), one file for every
    release that check reads a name's line of, not a list per release."""
    path = tree / REGISTRY
    if not path.is_file():
        raise SpecError(f"no {REGISTRY} in {tree}")
    drafts: dict[str, str] = {}
    for name, node in _module_values(ast.parse(path.read_text(encoding="utf-8"))).items():
        if not (name.startswith("_") and name.endswith("_MODELS") and isinstance(node, ast.Dict)):
            continue
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            if name == DRAFTS:
                last = value.elts[-1] if isinstance(value, ast.Tuple) and value.elts else None
                if not (isinstance(last, ast.Constant) and isinstance(last.value, str)):
                    raise SpecError(f"{REGISTRY}:{key.lineno}: {key.value} maps to no (module, class) tuple")
                drafts[key.value] = last.value
    if not drafts:
        raise SpecError(f"{REGISTRY}: no {DRAFTS} dict")
    return {"file": REGISTRY, "drafts": drafts}


def spec_facts(tree: Path) -> dict[str, object]:
    """The mechanical columns of the release extracted at `tree` (lists in source order) and its registry."""
    path = tree / SPEC
    if not path.is_file():
        raise SpecError(f"no {SPEC} in {tree}")
    module = ast.parse(path.read_text(encoding="utf-8"))
    values = _module_values(module)
    fields, line = _fields(module)
    detect = _detect(module, values, tree)
    return {"speculative_config": {
        "file": SPEC, "class_line": f"L{line}", "fields": fields, "methods": _literal(METHOD_LITERAL, values),
        "mtp_types": _literal(MTP_LITERAL, values), "dflash_detect_archs": detect["dflash"],
        "dspark_detect_archs": detect["dspark"], **_guards(module, values, _parsed(tree / DSPARK_CFG)),
        "dflash_keep": _dflash_keep(tree), **_aux_targets(module), **_per_method(tree)}, "registry": _registry(tree),
        **({"drafting_token": token} if (token := drafting_token(tree)) is not None else {})}


def _per_method(tree: Path) -> dict[str, object]:
    """0.34+: the method-specific options __post_init__ checks (`_METHOD_SPECIFIC_OPTIONS`, in order) and those each
    built-in method's config class accepts; {} before."""
    options = _method_options(tree)
    if not options:
        return {}
    names = _module_values(ast.parse((tree / SPEC).read_text(encoding="utf-8"))).get("_METHOD_SPECIFIC_OPTIONS")
    if not isinstance(names, ast.Tuple):
        raise SpecError(f"{SPEC}: no _METHOD_SPECIFIC_OPTIONS tuple")
    return {"method_specific_options": [e.value for e in names.elts if isinstance(e, ast.Constant)],
            "method_options": options}
