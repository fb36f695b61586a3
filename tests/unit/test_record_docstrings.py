"""Every dataclass in the package carries a docstring: without one, `dataclass` builds `__doc__` from
`inspect.signature` at import time (about 0.2 ms a class), which check's start-up pays for every record it imports
(docs/architecture.md, "Start-up")."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "dspark_ckpt"


def _undocumented(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None
                    and any("dataclass" in ast.unparse(d) for d in node.decorator_list)):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno} {node.name}")
    return found


def test_every_record_class_has_a_docstring() -> None:
    assert _undocumented() == []


def test_the_scan_finds_a_record_without_one(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "records.py").write_text("from dataclasses import dataclass\n\n\n@dataclass(frozen=True, slots=True)\n"
                                        "class Bare:\n    x: int\n\n\n@dataclass\nclass Told:\n    \"\"\"Said.\"\"\"\n\n"
                                        "    y: int\n", encoding="utf-8")
    assert _undocumented(package) == ["pkg/records.py:5 Bare"]
