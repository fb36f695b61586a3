"""A strategy is an object: its applicability, actions and effect live on it, and the planner only asks the table."""

from __future__ import annotations

import ast
from pathlib import Path

from dspark_ckpt.model import repair_catalog as cat
from dspark_ckpt.repair import plan, simulate
from dspark_ckpt.repair.strategies import BY_NAME, TABLE, Strategy

NAMES = {name for name in dir(cat) if name.isupper() and isinstance(getattr(cat, name), str)
         and getattr(cat, name) in cat.NAMES}


def test_every_declared_repair_is_one_strategy_with_its_own_applicability() -> None:
    assert tuple(s.name for s in TABLE) == cat.NAMES
    for s in TABLE:
        assert isinstance(s, Strategy) and BY_NAME[s.name] is s
        assert type(s).why_not is not Strategy.why_not, s.name  # each says when it applies
        assert s.repair is cat.BY_NAME[s.name]


def _dispatch_on_a_name(path: Path) -> list[str]:
    """Comparisons against a strategy's name (`step == TRIM`, `strategy in (TRIM, ...)`): an if/elif chain."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        for operand in (node.left, *node.comparators):
            parts = operand.elts if isinstance(operand, ast.Tuple | ast.Set | ast.List) else [operand]
            for part in parts:
                name = part.attr if isinstance(part, ast.Attribute) else part.id if isinstance(part, ast.Name) else ""
                if name in NAMES:
                    found.append(f"{path.name}:{node.lineno}")
    return found


def test_the_planner_and_the_simulator_keep_no_chain_keyed_by_a_strategy_name() -> None:
    for module in (plan, simulate):
        assert module.__file__ is not None
        assert _dispatch_on_a_name(Path(module.__file__)) == []
