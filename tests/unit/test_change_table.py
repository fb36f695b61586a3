"""The `## Where a change goes` table of docs/architecture.md, held to the tree: what it names exists, and where it says
one place holds a kind of fact, no other place does.

What a test cannot derive (that a new release needs exactly these files) is shown by doing it: the note of the
session that added vLLM 0.34.0 lists the files it touched.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dspark_ckpt
from dspark_ckpt.output.table import FORMATS, RENDERERS

PACKAGE = Path(dspark_ckpt.__file__).parent
ROOT = PACKAGE.parent
DOC = ROOT / "docs" / "architecture.md"


def _table() -> dict[str, str]:
    section = DOC.read_text(encoding="utf-8").split("## Where a change goes", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("**"):
            rows[cells[0].replace("**", "")] = cells[1]
    return rows


def _paths(cell: str) -> set[str]:
    """The files and folders a cell names in backticks (`runtimes/vllm_rows.py`, `tools/release_model.py`, ...)."""
    names = set()
    for quoted in re.findall(r"`([^`]+)`", cell):
        head = quoted.split()[0].split("(")[0].rstrip(",.:")
        if re.fullmatch(r"[\w./-]+\.(py|json|md)|[\w./-]+/", head) and "X.Y.Z" not in head:
            names.add(head)
    return names


def _exists(name: str) -> bool:
    """A path from the package, the repo or docs/; a bare file name (`plan.py` after `repair/strategies.py`) is one
    the package holds somewhere."""
    if "/" not in name:
        return any(PACKAGE.rglob(name))
    return any((base / name).exists() for base in (PACKAGE, ROOT, ROOT / "docs"))


def test_the_table_has_a_row_per_kind_of_change() -> None:
    rows = _table()
    for kind in ("a new vLLM release whose behaviour matches an existing row", "a new SGLang release",
                 "a new family", "a new finding code", "a new operational error code", "a new repair",
                 "a new output format", "a new command"):
        assert kind in rows, f"docs/architecture.md's change table has no row for {kind!r}"


def test_every_file_the_table_names_exists() -> None:
    missing = {kind: sorted(p for p in _paths(cell) if not _exists(p)) for kind, cell in _table().items()}
    assert {k: v for k, v in missing.items() if v} == {}


def _defined_in(pattern: str) -> set[str]:
    """The package modules whose source calls `pattern(` at module level (a registry row is declared there)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == pattern:
                found.add(path.relative_to(PACKAGE).as_posix())
                break
    return found


def test_a_finding_code_a_repair_and_an_error_code_are_declared_in_one_place_each() -> None:
    rows = _table()
    assert "model/rule_catalog.py" in rows["a new finding code"] and _defined_in("Rule") == {"model/rule_catalog.py"}
    assert "model/repair_catalog.py" in rows["a new repair"] and _defined_in("Repair") == {"model/repair_catalog.py"}
    assert "model/error_catalog.py" in rows["a new operational error code"]
    assert _defined_in("E") == {"model/error_catalog.py"}


def test_an_output_format_is_one_module_and_one_table_entry() -> None:
    """`--format`'s choices are output/table.py's entries, and each entry's renderer is a module of output/."""
    assert "output/table.py" in _table()["a new output format"]
    assert FORMATS == tuple(RENDERERS)
    for name in FORMATS:
        module = RENDERERS[name].__module__
        assert module.startswith("dspark_ckpt.output."), (name, module)


def test_a_command_is_one_cli_module_registered_in_the_app() -> None:
    from dspark_ckpt.cli.app import COMMANDS

    assert "cli/app.py" in _table()["a new command"]
    for name, entry in COMMANDS.items():
        assert entry.module.startswith("dspark_ckpt.cli."), name
        assert (PACKAGE / "cli" / (entry.module.rsplit(".", 1)[1] + ".py")).is_file(), name
