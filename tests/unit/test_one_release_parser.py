"""Nothing but runtimes/release.py parses, splits or compares version text (issue 40, item 1), as test_architecture.py
holds the layers: an `ast` scan of every package module fails on an import of packaging.version/specifiers, a call of
one of the retired parsing helpers, a version split on "." or ".post", a version pattern, a version prefix test, and
an ordering comparison of version-named values or of tuples of ints. A release is parsed by `release.parse` and
compared as a `Release`; which listed release answers for it is `release.resolve`'s one policy."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import dspark_ckpt

PACKAGE = Path(dspark_ckpt.__file__).parent
THE_ONE = PACKAGE / "runtimes" / "release.py"
# The helpers each module once had for its own reading of a version (runtimes/versions.py, rows.py, selectors.py,
# vllm_release.py, sglang_rows.py): gone, and not to come back under the same names.
RETIRED = frozenset({"parts", "order_key", "release_key", "in_range", "normalise", "version_key", "minor",
                     "nearest_listed", "sglang_release", "distance", "never_released", "nearest_releases",
                     "malformed"})
_VERSION_NAME = re.compile(r"(?:^|_)(version|release|first|last|chosen|base)s?$", re.IGNORECASE)
_VERSION_TEXT = re.compile(r"version|release|chosen", re.IGNORECASE)
# `\.post`, `\d+(?:\.\d+)*` (any number of components), `\d+\.\d+\.` (three): not a decimal's `\d+(?:\.\d+)?`
_VERSION_PATTERN = re.compile(r"\(\\d\+\)\\\.\(\\d\+\)|\\\.post|\\d\+\(\?:\\\.\\d\+\)\*|\\d\+\\\.\\d\+\\\.")
_VERSION_TEXT_LITERAL = re.compile(r"^\d+(?:\.\d+)+(?:\.post\d+)?$")
_VERSION_PREFIX = re.compile(r"^\d+\.\d*\.?$")
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _named(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _version_like(node: ast.expr) -> bool:
    """An expression that names a version: a name or attribute so called, or one built from such (`v.version[:2]`)."""
    if isinstance(node, ast.Subscript):
        return _version_like(node.value)
    name = _named(node)
    if name is not None and _VERSION_NAME.search(name):
        return True
    return bool(_VERSION_TEXT.search(ast.unparse(node)))


def _names_version(node: ast.expr) -> bool:
    """Strictly: the value's own name says version (`versions`, `r.version for r in rows`), not its owner's."""
    if isinstance(node, ast.GeneratorExp | ast.ListComp | ast.SetComp):
        return _names_version(node.elt)
    if isinstance(node, ast.Subscript):
        return _names_version(node.value)
    return bool(_VERSION_NAME.search(_named(node) or ""))


def _int_tuple(node: ast.expr) -> bool:
    return isinstance(node, ast.Tuple) and len(node.elts) >= 2 and all(
        isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)


def _split_on_dots(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("split", "rsplit", "partition", "rpartition") and bool(node.args)
            and isinstance(node.args[0], ast.Constant) and node.args[0].value in (".", ".post"))


def scan(source: str) -> list[str]:
    """Each place `source` parses, splits or compares a version itself: `line: what`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom) and node.module in ("packaging.version", "packaging.specifiers"):
            found.append(f"{line}: imports {node.module}")
        elif (isinstance(node, ast.ImportFrom) and node.module == "packaging"
              and {a.name for a in node.names} & {"version", "specifiers"}) or \
                (isinstance(node, ast.Import)
                 and any(a.name in ("packaging.version", "packaging.specifiers") for a in node.names)):
            found.append(f"{line}: imports packaging's version parser")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dspark_ckpt.runtimes") \
                and {a.name for a in node.names} & RETIRED:
            found.append(f"{line}: imports {sorted({a.name for a in node.names} & RETIRED)}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = _named(func)
            owner = func.value if isinstance(func, ast.Attribute) else None
            if name in RETIRED and not (isinstance(owner, ast.Name) and owner.id == "os"):
                found.append(f"{line}: calls {name}()")
            elif _split_on_dots(node) and owner is not None and _version_like(owner):
                found.append(f"{line}: splits a version ({ast.unparse(node)})")
            elif name in ("startswith", "endswith", "removeprefix") and node.args and \
                    isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and \
                    _VERSION_PREFIX.match(node.args[0].value):
                found.append(f"{line}: tests a version prefix ({ast.unparse(node)})")
            elif isinstance(owner, ast.Name) and owner.id == "re" and node.args and \
                    isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and \
                    _VERSION_PATTERN.search(node.args[0].value):
                found.append(f"{line}: a version pattern ({node.args[0].value})")
            elif name in ("sorted", "max", "min") and not any(k.arg == "key" for k in node.keywords) and \
                    node.args and _names_version(node.args[0]):
                found.append(f"{line}: orders version text ({ast.unparse(node)})")
            elif name == "int" and node.args and any(_split_on_dots(n) for n in ast.walk(node.args[0])):
                found.append(f"{line}: reads version numbers ({ast.unparse(node)})")
        elif isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            ints = any(isinstance(n, ast.Call) and _named(n.func) == "int" for n in ast.walk(node.elt))
            for gen in node.generators:
                splits = [n for n in ast.walk(gen.iter) if _split_on_dots(n)]
                if splits and (ints or any(_version_like(s.func.value) for s in splits  # type: ignore[attr-defined]
                                           )):
                    found.append(f"{line}: reads a version's numbers ({ast.unparse(gen.iter)})")
        elif isinstance(node, ast.Compare) and any(isinstance(op, _ORDERING) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(_int_tuple(s) for s in sides):
                found.append(f"{line}: compares with a tuple of ints ({ast.unparse(node)})")
            elif any(isinstance(s, ast.Constant) and isinstance(s.value, str) and _VERSION_TEXT_LITERAL.match(s.value)
                     for s in sides):
                found.append(f"{line}: compares with version text ({ast.unparse(node)})")
            elif all(isinstance(s, ast.Name | ast.Attribute | ast.Subscript) and _version_like(s) for s in sides) \
                    and any(isinstance(s, ast.Subscript) or (_named(s) or "").endswith(("version", "versions"))
                            for s in sides):
                found.append(f"{line}: compares version text ({ast.unparse(node)})")
    return found


# Each form this once took in the package (the retired helpers' own bodies, rows.py's version_key, vllm_release's
# minor, selectors' split, eagle3_aux_sglang's prefix and tuple tests), and a few more: each must be flagged.
BAD = {
    "import packaging.version": "from packaging.version import Version\nVersion(v)",
    "import packaging.specifiers": "def f(spec):\n    from packaging.specifiers import SpecifierSet\n",
    "import packaging.version module": "import packaging.version",
    "from packaging import version": "from packaging import version",
    "a retired helper imported": "from dspark_ckpt.runtimes.versions import release_key",
    "a retired helper called": "key = release_key(version)",
    "a retired helper called on a module": "rules = vllm_release.nearest_listed(RELEASES, v)",
    "numbers by split": "key = tuple(int(p) for p in version.split('.'))",
    "numbers by split, sliced": "return tuple(int(p) for p in release.split('.')[:2])",
    "numbers of an unnamed text": "numbers = [int(x) for x in text.split('.')]",
    "int of a split": "major = int(v.split('.')[0])",
    "post split": "base = chosen.split('.post', 1)[0]",
    "post partition": "base, _, post = version.partition('.post')",
    "version prefix": "old = [r for r in LINES if r.startswith('0.4.')]",
    "tuple compare": "if key < (0, 5, 1):\n    pass",
    "tuple compare, right": "newer = (0, 5, 23) <= key",
    "version pattern": "m = re.fullmatch(r'(\\d+(?:\\.\\d+)*)(?:\\.post(\\d+))?', text)",
    "numbers pattern": "m = re.match(r'(\\d+)\\.(\\d+)\\.(\\d+)', text)",
    "sorted version text": "for v in sorted(versions):\n    pass",
    "newest by text": "newest = max(r.version for r in rows)",
    "post pattern": "m = re.search(r'\\.post(\\d+)', version)",
    "string compare": "if built.version < contract.last:\n    pass",
    "string compare of slices": "if version[:4] >= first[:4]:\n    pass",
    "compare with version text": "if version >= '0.5.12':\n    pass",
}
GOOD = {
    "a parameter path split": "parts = name.split('.')",
    "a module path split": "leaf = parameter.rsplit('.', 1)[-1]",
    "release objects compared": "if parse('vllm', a) < parse('vllm', b):\n    pass",
    "a line compared": "newer = asked.line > table[-1].line",
    "counts compared": "if len(rows) < 3:\n    pass",
    "a device number": "d = os.minor(st.st_dev)",
    "an equality of names": "own = version in VLLM_RELEASES",
    "a module prefix": "model.startswith('sglang.')",
    "a release's registry names in order": "names = sorted(release.registry)",
    "decimal seconds": "m = re.fullmatch(r'^(\\d+(?:\\.\\d*)?|\\.\\d+)\\s*s$', text)",
    "a shard file name": "m = re.match(r'-(\\d+)-of-(\\d+)\\.safetensors$', name)",
}


@pytest.mark.parametrize("name", BAD)
def test_the_scanner_flags_each_form(name: str) -> None:
    assert scan(BAD[name]) != [], name


@pytest.mark.parametrize("name", GOOD)
def test_the_scanner_leaves_what_is_no_version(name: str) -> None:
    assert scan(GOOD[name]) == [], name


def test_the_retired_forms_are_what_the_release_module_does_itself() -> None:
    """The release module is exempt because it is the one place: the scanner finds its parsing there."""
    assert scan(THE_ONE.read_text(encoding="utf-8")) != []


def test_nothing_else_parses_or_compares_version_strings() -> None:
    found = {str(path.relative_to(PACKAGE)): hits for path in sorted(PACKAGE.rglob("*.py")) if path != THE_ONE
             if (hits := scan(path.read_text(encoding="utf-8")))}
    assert found == {}


# Where a runtime release may be written as a literal: the one list (versions.py), the release module, and the data
# tables keyed by release: the contract rows and the one registration older than the list (releases.py
# `_BEFORE_THE_LIST`); SGLang's EAGLE-3 aux-state lines are generated data (release_data/sglang_aux_lines.json). Anything else asks these. The other literals of that form are no runtime
# releases: SARIF's schema version, the SGLang worker's torchvision stub, dspark-ckpt's own version.
RELEASE_DATA = {"runtimes/versions.py", "runtimes/release.py", "runtimes/vllm_rows.py", "runtimes/sglang_rows.py",
                "runtimes/releases.py"}
NOT_RELEASES = {("output/sarif.py", "2.1.0"), ("verify/sglang_worker.py", "0.28.0"), ("version.py", None)}
_RELEASE_LITERAL = re.compile(r"\d+\.\d+\.\d+(?:\.post\d+)?")


def release_literals(source: str) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and _RELEASE_LITERAL.fullmatch(n.value)}


def test_release_literals_live_in_the_data_and_the_release_module() -> None:
    found = {str(path.relative_to(PACKAGE)): literals for path in sorted(PACKAGE.rglob("*.py"))
             if (literals := release_literals(path.read_text(encoding="utf-8")))}
    assert release_literals('x = ["0.5.4.post2", "0.30.0", "a 0.30.0 b"]') == {"0.5.4.post2", "0.30.0"}
    strays = {(module, literal) for module, literals in found.items() if module not in RELEASE_DATA
              for literal in literals}
    assert {(m, lit) for m, lit in strays if (m, lit) not in NOT_RELEASES and (m, None) not in NOT_RELEASES} == set()
