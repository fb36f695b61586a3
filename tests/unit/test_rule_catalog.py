"""Every code the source can emit is registered once and documented in every section."""

from __future__ import annotations

import re
from pathlib import Path

from dspark_ckpt.model.rule_catalog import RULES

PACKAGE = Path(__file__).resolve().parents[2] / "dspark_ckpt"
EMITTED = re.compile(r"\"(DSP\d{3})\"")


def emitted_codes() -> set[str]:
    codes: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if path.name in ("rule_catalog.py", "codes.py"):  # codes.py: the Literal (tests/unit/test_codes.py)
            continue
        codes |= set(EMITTED.findall(path.read_text()))
    return codes


def test_every_emitted_code_is_registered() -> None:
    missing = emitted_codes() - set(RULES)
    assert not missing, f"emitted but not in rule_catalog.RULES: {sorted(missing)}"


def test_codes_are_registered_exactly_once() -> None:
    text = (PACKAGE / "model" / "rule_catalog.py").read_text()
    declared = re.findall(r"Rule\(\s*\"(DSP\d{3})\"", text)
    assert len(declared) == len(set(declared)) == len(RULES)


def test_every_rule_is_fully_documented() -> None:
    for code, rule in RULES.items():
        assert re.fullmatch(r"DSP\d{3}", code) and rule.code == code
        assert rule.severity in ("error", "warning", "info")
        for field in ("slug", "summary", "what", "why", "example", "fix"):
            assert getattr(rule, field).strip(), f"{code} has no {field}"
    slugs = [r.slug for r in RULES.values()]
    assert len(slugs) == len(set(slugs))


def test_each_rules_named_repair_is_in_the_strategy_table() -> None:
    """A repair says what it resolves and which hints name it (model/repair_catalog.py); a rule's `repair` is
    derived from that, so the two cannot disagree, and the planner's strategies are those repairs."""
    from dspark_ckpt.model.repair_catalog import HINT_REPAIR, REPAIRS
    from dspark_ckpt.repair.strategies import BY_NAME, STRATEGIES, TABLE, repairs_for

    for code, r in RULES.items():
        assert r.repair == HINT_REPAIR.get(code), code
        if r.repair is not None:
            assert r.repair in STRATEGIES and r.repair in repairs_for(code), code
    assert set(HINT_REPAIR) <= set(RULES)
    for s in BY_NAME.values():
        assert s.resolves and all(c in RULES for c in s.resolves), s.name
    assert [s.repair for s in TABLE] == list(REPAIRS)  # one table, in the declared preference order
