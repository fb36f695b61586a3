"""The package has no import cycle, and each stage imports only from the stages beneath it (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import dspark_ckpt

PACKAGE = Path(dspark_ckpt.__file__).parent
# A package may import from itself and from the packages listed for it (the layers of docs/architecture.md).
ALLOWED = {
    "model": set(),
    "formats": {"model", "sources"},  # the layout check reads sources.base's path statuses (an enum, no I/O)
    "runtimes": {"model"},
    "sources": {"model", "formats", "errors"},
    "check": {"model", "formats", "runtimes", "sources", "errors"},
    "output": {"model", "errors"},
    "repair": {"model", "formats", "runtimes", "sources", "check", "output", "errors"},
    "verify": {"model", "formats", "runtimes", "sources", "check", "output", "errors"},
    "cli": {"model", "formats", "runtimes", "sources", "check", "output", "repair", "verify", "errors", ""},
}


def _module(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["dspark_ckpt", *parts])


def _imports(path: Path, modules: set[str], *, module_level_only: bool) -> set[str]:
    """`from pkg import sub` imports the module pkg.sub (pkg itself is already being imported); `from m import x`
    imports m."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dspark_ckpt"):
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules
            found.update(subs)
            if len(subs) < len(node.names):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("dspark_ckpt"))
    return found


def _graph(module_level_only: bool) -> dict[str, set[str]]:
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    names = set(modules)
    return {m: {i for i in _imports(p, names, module_level_only=module_level_only) if i in modules and i != m}
            for m, p in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycle_at_import_time() -> None:
    assert _cycle(_graph(module_level_only=True)) is None


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else ("" if len(parts) == 1 else parts[1] if parts[1] in ALLOWED else "")


def test_stages_import_only_the_stages_beneath_them() -> None:
    """Lazy imports inside functions count too: a stage never reaches up, whenever it imports."""
    wrong = []
    for module, imported in _graph(module_level_only=False).items():
        stage = _stage(module)
        if stage not in ALLOWED:
            continue
        for other in imported:
            target = _stage(other)
            if target and target != stage and target not in ALLOWED[stage]:
                wrong.append(f"{module} -> {other}")
    assert sorted(wrong) == []
