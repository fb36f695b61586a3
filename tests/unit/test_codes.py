"""The code Literals (model/codes.py) name exactly the registered codes, so mypy checks every code the package
writes against the registries themselves."""

from __future__ import annotations

from typing import get_args

from dspark_ckpt.model.codes import ErrorCode, FindingCode
from dspark_ckpt.model.error_catalog import ERRORS
from dspark_ckpt.model.rule_catalog import RULES


def test_finding_code_names_every_rule_and_nothing_else() -> None:
    named = set(get_args(FindingCode))
    assert sorted(set(RULES) - named) == [], "registered in rule_catalog.RULES: add to FindingCode in model/codes.py"
    assert sorted(named - set(RULES)) == [], "in FindingCode (model/codes.py) but no Rule(...) registers it"


def test_error_code_names_every_error_and_nothing_else() -> None:
    named = set(get_args(ErrorCode))
    assert sorted(set(ERRORS) - named) == [], "registered in error_catalog.ERRORS: add to ErrorCode in model/codes.py"
    assert sorted(named - set(ERRORS)) == [], "in ErrorCode (model/codes.py) but no E(...) registers it"


def test_the_two_kinds_of_code_never_meet() -> None:
    assert not set(get_args(FindingCode)) & set(get_args(ErrorCode))
