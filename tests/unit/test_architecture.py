"""No import circle, deferred imports included, and no import that runs back up a stage (docs/architecture.md).

Every import counts: at module level, inside a function, under `if TYPE_CHECKING:`. A lazy import is allowed for
start-up cost, never to hide a circle or an upward reach. The stage order is parsed from the layout table of
docs/architecture.md (its first column, top to bottom), so the document and this test cannot disagree.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dspark_ckpt

PACKAGE = Path(dspark_ckpt.__file__).parent
DOC = PACKAGE.parent / "docs" / "architecture.md"
# Modules of the package root that every stage may use (a leaf of records, importing nothing of the package).
SHARED = {"dspark_ckpt.errors", "dspark_ckpt.version"}


def stages() -> list[str]:
    """The packages of the `## The packages` table, in order: a stage may import only from the stages above it."""
    section = DOC.read_text(encoding="utf-8").split("## The packages", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)/` \|", section, flags=re.MULTILINE)


def _module(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["dspark_ckpt", *parts])


def _imports(path: Path, module: str, modules: set[str]) -> set[str]:
    """Every module of the package `path` imports, wherever the import statement is. `from pkg import sub` imports
    the module pkg.sub; `from m import x` imports m; relative imports resolve against `module`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if not base.startswith("dspark_ckpt"):
                continue
            subs = {f"{base}.{a.name}" for a in node.names} & modules
            found.update(subs)
            if len(subs) < len(node.names):
                found.add(base)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("dspark_ckpt"))
    return found


def graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    names = set(modules)
    return {m: {i for i in _imports(p, m, names) if i in modules and i != m} for m, p in modules.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected component of more than one module (Tarjan), each as a path back to its
    start."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(g[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(_circle(g, set(component)))

    for v in sorted(g):
        if v not in index:
            connect(v)
    return out


def _circle(g: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside the component."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(g[v] & component):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(component)


def stage_of(module: str, order: list[str]) -> str | None:
    """`dspark_ckpt.check.load` (and the package `dspark_ckpt.check`) -> `check`; a module of the package root
    (errors, __main__, the root itself) -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in order else None


def test_the_stage_table_names_every_package() -> None:
    order = stages()
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert order == ["model", "formats", "runtimes", "sources", "check", "output", "repair", "verify", "cli"]
    assert sorted(order) == packages


def test_no_import_cycle_deferred_imports_included() -> None:
    found = {" -> ".join(c) for c in cycles(graph())}
    assert found == set(), "import circles:\n" + "\n".join(sorted(found))


def test_stages_import_only_the_stages_above_them() -> None:
    """Lazy imports inside functions and TYPE_CHECKING imports count too: a stage never reaches down the table
    (into a later stage), whenever it imports. Of the package root, `errors` and `version` (SHARED) are for every stage; the root
    itself (the library's public names, which load the stages lazily) for the last stage only."""
    order = stages()
    rank = {s: i for i, s in enumerate(order)}
    wrong = []
    for module, imported in graph().items():
        stage = stage_of(module, order)
        for other in imported:
            target = stage_of(other, order)
            if stage is None:
                continue  # the package root (`__init__`, `__main__`): the entry points may reach any stage
            if target is None:
                if other not in SHARED and not (other == "dspark_ckpt" and stage == order[-1]):
                    wrong.append(f"{module} -> {other} (the package root)")
            elif rank[target] > rank[stage]:
                wrong.append(f"{module} -> {other} ({stage} is above {target})")
    assert sorted(wrong) == []
