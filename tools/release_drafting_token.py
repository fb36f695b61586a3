"""What a vLLM release's proposer requires of a draft config before it starts parallel drafting (DFlash, DSpark,
P-EAGLE): the id of the token its masked query slots are fed, executed from the release's own functions.

Two functions read it from the draft's hf_config, each raising when it finds none:
- the V1 proposer's `_init_parallel_drafting_params` (v1/spec_decode/eagle.py 0.16-0.19, llm_base_proposer.py
  0.20-0.33), which the proposer's __init__ calls when `parallel_drafting` is on;
- Model Runner V2's `get_parallel_drafting_token_id` (v1/worker/gpu/spec_decode/utils.py, 0.24+), which the DFlash
  speculator's __init__ calls (DSpark's, DFlash2's, LiLiCorr's and XPress's subclass it: 0.34).
Both run when the engine builds its model runner, before any weight is loaded. Each function is compiled alone from
the release's file (its own statements; `self` is a stand-in holding the draft's hf_config, with no hidden state to
allocate) and called over configs holding one candidate key (every string constant the function names, at the top
level and under `dflash_config`) at a time, set and null, and over pairs of them: the keys it takes, in its order,
what it does with each kind of value a config may hold there besides an id (null, a text, digits in a string, a
fraction, a negative, a bool, a list, an object: `VALUES`), and its refusal of a config with none, in its words
(`resolvers`); and where the release calls it (`called`), and whether that call runs on the speculative config's
`parallel_drafting` flag (the V1 proposer: any method) or only in the DFlash speculator (V2). Which methods turn parallel
drafting on is read with `ast` from config/speculative.py (`methods`): the branch that sets it (0.20-0.33), or the
methods 0.34's deprecation of the flag names. Written into spec.json by tools/release_lines.py (`drafting_token`);
runtimes/drafting_token.py replays it on the draft's config as the release builds it.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path
from typing import Any

SPEC = "vllm/config/speculative.py"
V1_FILES = ("vllm/v1/spec_decode/llm_base_proposer.py", "vllm/v1/spec_decode/eagle.py")
V1_FUNCTION = "_init_parallel_drafting_params"
V2_FILE = "vllm/v1/worker/gpu/spec_decode/utils.py"
V2_FUNCTION = "get_parallel_drafting_token_id"
NESTED = "dflash_config"
PROBE = 7  # a token id no default holds
OTHER = 9
# What each key is fed besides an id, by the kind of JSON value a config may hold there (runtimes/drafting_token.py
# replays a draft's value only where its kind is one of these): the function takes it, skips it as if unset, or raises.
VALUES: dict[str, Any] = {"null": None, "text": "mask", "digits": "7", "fraction": 7.5, "whole_float": 7.0,
                          "negative": -1, "bool": True, "list": [7], "object": {"id": 7}}


class _Config:
    """A stand-in hf_config: the keys as attributes (as PretrainedConfig holds config.json's), nothing else."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


class _ModelConfig:
    def __init__(self, hf: _Config) -> None:
        self.hf_config = hf


class _Proposer:
    """`self` of the V1 proposer: the draft model config, and no hidden state to pass (nothing is allocated)."""

    def __init__(self, hf: _Config) -> None:
        self.draft_model_config = _ModelConfig(hf)
        self.pass_hidden_states_to_model = False
        self.parallel_drafting_token_id = None


def _function(path: Path, name: str) -> ast.FunctionDef | None:
    if not path.is_file():
        return None
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _compiled(node: ast.FunctionDef, file: str) -> Any:
    """The function alone, as the release wrote it (decorators and annotations dropped: they name nothing here)."""
    node.decorator_list, node.returns = [], None
    for arg in node.args.args:
        arg.annotation = None
    module = ast.Module(body=[node], type_ignores=[])
    namespace: dict[str, Any] = {}
    exec(compile(module, file, "exec"), namespace)  # noqa: S102 - the release's own function, to observe it
    return namespace[node.name]


def _keys(node: ast.FunctionDef) -> list[str]:
    """Every identifier-like string constant the function names, in source order (the candidate keys)."""
    found = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and n.value.isidentifier()]
    return list(dict.fromkeys(found))


def _placed(key: str, value: Any) -> dict[str, Any]:
    head, _, sub = key.partition(".")
    return {head: {sub: value}} if sub else {head: value}


def _merged(*parts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        for k, v in part.items():
            out[k] = {**out[k], **v} if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def outcome(call: Any, values: dict[str, Any]) -> tuple[str, Any]:
    """A resolver called on a config holding `values`: ("id", the token) or ("raises", {raises, message})."""
    try:
        return "id", call(_Config(values))
    except Exception as exc:  # noqa: BLE001 - the release refuses the config: that is the observation
        return "raises", {"raises": type(exc).__name__, "message": str(exc)}


def _observe(call: Any, candidates: list[str]) -> dict[str, Any] | None:
    kind, none = outcome(call, {})
    if kind != "raises":
        return None  # it takes no key: nothing required
    taken = [k for k in candidates if outcome(call, _placed(k, PROBE)) == ("id", PROBE)]
    order = sorted(taken, key=lambda k: sum(outcome(call, _merged(_placed(k, PROBE), _placed(o, OTHER)))
                                            == ("id", OTHER) for o in taken if o != k))
    for a, b in itertools.combinations(order, 2):  # the order is total: each earlier key wins over each later one
        if outcome(call, _merged(_placed(a, PROBE), _placed(b, OTHER))) != ("id", PROBE):
            raise ValueError(f"{a} and {b}: no consistent order")
    entries = []
    for key in order:
        fed = {}
        for kind, value in VALUES.items():
            got = outcome(call, _placed(key, value))
            fed[kind] = "skipped" if got == ("raises", none) else "taken" if got[0] == "id" else got[1]
        entries.append({"key": key, "values": fed})
    return {"order": entries, "none": none}


def _guarded_by_flag(tree: ast.AST, call: ast.Call) -> bool:
    """Whether `call` runs only inside an `if` whose test names `parallel_drafting` (the speculative config's flag)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "parallel_drafting" in ast.unparse(node.test) and \
                any(c is call for s in node.body for c in ast.walk(s)):
            return True
    return False


def called(root: Path, name: str) -> dict[str, Any] | None:
    """Where the release calls `name` (its first call site under vllm/v1, in path order), and whether that call runs
    on the speculative config's `parallel_drafting` flag (the V1 proposer's `__init__`: any method, P-EAGLE's
    included) or unconditionally in a method's own speculator (Model Runner V2's DFlash speculator: only the methods
    that turn parallel drafting on)."""
    for path in sorted((root / "vllm" / "v1").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if f"{name}(" not in text:
            continue
        tree = ast.parse(text)
        for node in ast.walk(tree):
            func = node.func if isinstance(node, ast.Call) else None
            named = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if named == name:
                assert isinstance(node, ast.Call)
                return {"file": str(path.relative_to(root)), "line": node.lineno,
                        "on_flag": _guarded_by_flag(tree, node)}
    return None


def resolver(root: Path, file: str, name: str) -> tuple[ast.FunctionDef, Any] | None:
    """The release's function `name` in `file` (its definition, and a callable taking an hf_config stand-in and
    returning the token id it resolves); None where the file has no such function. The V1 proposer's method is called
    on a stand-in `self` and answers with the id it stores."""
    node = _function(root / file, name)
    if node is None:
        return None
    function = _compiled(node, file)
    if name != V1_FUNCTION:
        return node, function

    def call(cfg: _Config) -> Any:
        proposer = _Proposer(cfg)
        function(proposer)
        return proposer.parallel_drafting_token_id

    return node, call


def _recorded(root: Path, file: str, name: str) -> dict[str, Any] | None:
    found = resolver(root, file, name)
    if found is None:
        return None
    node, call = found
    seen = _observe(call, _candidates(node))
    return {"file": file, "line": node.lineno, "function": name, "called": called(root, name), **seen} \
        if seen else None


def _v1(root: Path) -> dict[str, Any] | None:
    return next((r for file in V1_FILES if (r := _recorded(root, file, V1_FUNCTION)) is not None), None)


def _v2(root: Path) -> dict[str, Any] | None:
    return _recorded(root, V2_FILE, V2_FUNCTION)


def _candidates(node: ast.FunctionDef) -> list[str]:
    keys = [k for k in _keys(node) if k != NESTED]
    return [*keys, *(f"{NESTED}.{k}" for k in keys)]


def _methods(root: Path) -> tuple[list[str], int] | None:
    """The methods that turn parallel drafting on: the branch `if self.method == ...: self.parallel_drafting = True`
    (0.20-0.33), or the methods 0.34 names where it refuses the flag for any other (`self.method not in (...)`)."""
    tree = ast.parse((root / SPEC).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        sets = any(isinstance(s, ast.Assign) and any(ast.unparse(t) == "self.parallel_drafting" for t in s.targets)
                   and isinstance(s.value, ast.Constant) and s.value.value is True for s in node.body)
        tests = [c for c in ast.walk(node.test) if isinstance(c, ast.Compare) and ast.unparse(c.left) == "self.method"]
        names_flag = "self.parallel_drafting" in ast.unparse(node.test)
        for compare in tests:
            op, right = compare.ops[0], compare.comparators[0]
            values = [right.value] if isinstance(right, ast.Constant) else \
                [e.value for e in right.elts if isinstance(e, ast.Constant)] if isinstance(right, ast.Tuple) else []
            if sets and isinstance(op, (ast.Eq, ast.In)) or names_flag and isinstance(op, ast.NotIn):
                return sorted(values), node.lineno
    return None


def drafting_token(root: Path) -> dict[str, Any] | None:
    """spec.json's `drafting_token` for the release extracted at `root`; None where it has no parallel drafting."""
    resolvers = [r for r in (_v1(root), _v2(root)) if r is not None]
    if not resolvers:
        return None
    methods = _methods(root)
    return {"methods": methods[0] if methods else [], "methods_line": f"L{methods[1]}" if methods else None,
            "resolvers": resolvers}
