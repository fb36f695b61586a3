"""Operational error codes (DSP-Exxx) keep one meaning: scanned from the package source, checked against the README."""

from __future__ import annotations

import re
from pathlib import Path

import dspark_ckpt

PACKAGE = Path(dspark_ckpt.__file__).parent
FIX_DOC = PACKAGE.parent / "README.md"
LITERAL = re.compile(r"""["'](DSP-E\d{3})["']""")  # code="DSP-E0xx" and positional "DSP-E0xx" alike
FIX_MODULES = ("cli/fix.py", "repair/")  # `fix` and its repair package
FIX_RANGE = range(60, 80)
# A code in several modules must be one error detected in several places; each such code is named here with the
# one meaning all its uses share. Adding a use elsewhere fails the test until it is judged and listed.
SHARED = {
    "DSP-E024": ({"cli/run.py", "cli/settings.py"}, "two settings-file options contradict each other"),
    "DSP-E051": ({"sources/hub.py", "sources/hub_push.py"}, "the Hub refused access: no token, or one without access"),
}


def code_uses() -> dict[str, set[str]]:
    uses: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for code in LITERAL.findall(path.read_text(encoding="utf-8")):
            uses.setdefault(code, set()).add(module)
    return uses


def is_fix(module: str) -> bool:
    return module.startswith(FIX_MODULES)


def test_the_scan_sees_the_codes() -> None:
    uses = code_uses()
    assert uses["DSP-E071"] == {"repair/lock.py"} and uses["DSP-E020"] == {"check/policy.py"}
    assert len(uses) >= 40  # every family: usage, sources, settings, output, verify, hub, fix


def test_a_code_lives_in_one_module_unless_listed_as_shared() -> None:
    shared = {code: modules for code, modules in code_uses().items() if len(modules) > 1}
    assert shared == {code: modules for code, (modules, _) in SHARED.items()}


def test_fix_codes_have_their_own_range() -> None:
    for code, modules in code_uses().items():
        in_range = int(code[5:]) in FIX_RANGE
        fix = {m for m in modules if is_fix(m)}
        assert not fix or (fix == modules and in_range), f"{code} in {sorted(modules)}"
        assert not in_range or fix, f"{code} is in fix's range but used by {sorted(modules)}"


def test_every_fix_code_is_documented_once() -> None:
    rows = re.findall(r"^\| (DSP-E\d{3}) \| (.+) \|$", FIX_DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)
    documented = [code for code, _ in rows]
    assert len(documented) == len(set(documented)), "a code with two rows has two meanings"
    fix_codes = {code for code, modules in code_uses().items() if any(is_fix(m) for m in modules)}
    assert set(documented) == fix_codes


def test_each_fix_code_is_raised_from_one_place() -> None:
    """Raised once, and reused by calling that place (apply.out_exists, destination_conflict): one message each."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))
                     if is_fix(p.relative_to(PACKAGE).as_posix()))
    counts: dict[str, int] = {}
    for code in LITERAL.findall(text):
        counts[code] = counts.get(code, 0) + 1
    assert counts and {code: n for code, n in counts.items() if n != 1} == {}
