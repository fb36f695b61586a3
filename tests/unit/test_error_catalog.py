"""The DSP-Exxx registry: every code raised is registered once, documented, and keeps one meaning."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dspark_ckpt
from dspark_ckpt.errors import CHECK_CODES_ENV, UsageError, check_code
from dspark_ckpt.model.error_catalog import ERRORS, ErrorDoc, _errors
from dspark_ckpt.model.rule_catalog import RULES

PACKAGE = Path(dspark_ckpt.__file__).parent
CATALOG = "model/error_catalog.py"
CODES = "model/codes.py"  # the ErrorCode Literal names every code; tests/unit/test_codes.py holds it to the registry
# The fix error table moved from README.md to docs/fix.md; any doc may hold a `| DSP-Exxx | ... |` table.
DOCS = (PACKAGE.parent / "README.md", *sorted((PACKAGE.parent / "docs").glob("*.md")))
LITERAL = re.compile(r"""["'](DSP-E\d{3})["']""")  # code="DSP-E0xx" and positional "DSP-E0xx" (helpers) alike
FIX_MODULES = ("cli/fix.py", "repair/")
FIX_RANGE = range(60, 90)
LIVE = {code for code, doc in ERRORS.items() if not doc.retired}


def code_uses() -> dict[str, set[str]]:
    """code -> the modules (relative to dspark_ckpt/) whose source names it, the registry itself left out."""
    uses: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module in (CATALOG, CODES):
            continue
        for code in LITERAL.findall(path.read_text(encoding="utf-8")):
            uses.setdefault(code, set()).add(module)
    return uses


def test_the_scan_sees_the_codes() -> None:
    uses = code_uses()
    assert uses["DSP-E071"] == {"repair/lock.py"} and uses["DSP-E020"] == {"check/policy.py"}
    assert len(uses) >= 50  # every family: usage, sources, settings, output, verify, hub, fix


def test_every_code_in_the_package_is_registered_and_live() -> None:
    missing = sorted(set(code_uses()) - LIVE)
    assert missing == [], f"add an entry to dspark_ckpt/{CATALOG} for each of {missing}"


def test_every_live_code_is_raised_somewhere() -> None:
    """A code nothing raises any more is kept, marked retired, so it is never reused with another meaning."""
    assert sorted(LIVE - set(code_uses())) == []
    assert {code for code, doc in ERRORS.items() if doc.retired} == {"DSP-E002"}


def test_a_code_lives_in_one_module_unless_its_entry_names_the_modules_that_share_it() -> None:
    uses = code_uses()
    shared = {code: modules for code, modules in uses.items() if len(modules) > 1}
    declared = {code: set(doc.shared) for code, doc in ERRORS.items() if doc.shared}
    assert shared == declared


@pytest.mark.parametrize("doc", list(ERRORS.values()), ids=list(ERRORS))
def test_every_entry_is_documented_in_the_four_sections(doc: ErrorDoc) -> None:
    assert re.fullmatch(r"DSP-E\d{3}", doc.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", doc.slug)
    for section in (doc.summary, doc.what, doc.why, doc.example, doc.fix):
        assert len(section) >= 10 and section == section.strip() and "\n" not in section


def test_slugs_are_unique_and_codes_sorted() -> None:
    assert len({d.slug for d in ERRORS.values()}) == len(ERRORS)
    assert list(ERRORS) == sorted(ERRORS)  # the registry reads in code order: gaps and ranges are visible


def test_the_registry_refuses_a_second_entry_for_a_code() -> None:
    one = ErrorDoc("DSP-E999", "a", "summary one", "what .....", "why ......", "example ..", "fix ......")
    with pytest.raises(ValueError, match="duplicate error code DSP-E999"):
        _errors(one, ErrorDoc("DSP-E999", "b", "another meaning", *("x" * 10,) * 4))


def test_fix_codes_have_their_own_range() -> None:
    for code, modules in code_uses().items():
        in_range = int(code[5:]) in FIX_RANGE
        fix = {m for m in modules if m.startswith(FIX_MODULES)}
        assert not fix or (fix == modules and in_range), f"{code} in {sorted(modules)}"
        assert not in_range or fix, f"{code} is in fix's range but used by {sorted(modules)}"


def test_the_documented_error_tables_agree_with_the_registry() -> None:
    text = "\n".join(doc.read_text(encoding="utf-8") for doc in DOCS)
    rows = re.findall(r"^\| (DSP-E\d{3}) \| (.+) \|$", text, flags=re.MULTILINE)
    documented = [code for code, _ in rows]
    assert documented and len(documented) == len(set(documented)), "a code with two rows has two meanings"
    assert sorted(set(documented) - LIVE) == []


def test_codes_never_collide_with_finding_codes() -> None:
    assert not set(ERRORS) & set(RULES)


def test_check_code_accepts_live_codes_only() -> None:
    check_code("DSP-E071")
    for bad in ("DSP-E999", "DSP-E002", "DSP-E000", "DSP504"):  # a finding code is never an operational error
        with pytest.raises(AssertionError, match=bad):
            check_code(bad)


def test_the_suite_runs_with_code_checking_on() -> None:
    assert os.environ.get(CHECK_CODES_ENV) == "1"  # tests/conftest.py; CLI subprocesses inherit it
    with pytest.raises(AssertionError, match="DSP-E998"):
        UsageError("not registered", code="DSP-E998")


def test_without_the_switch_raising_costs_no_registry_import() -> None:
    probe = ("import sys\nfrom dspark_ckpt.errors import UsageError\nUsageError('x', code='DSP-E998')\n"
             "print('dspark_ckpt.model.error_catalog' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != CHECK_CODES_ENV}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
