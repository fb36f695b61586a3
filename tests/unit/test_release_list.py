"""One list of releases per runtime (runtimes/versions.py): every other release list and per-release table derives
from it (issue 20). A second hand-kept list, or a table that names a release the list does not, fails here."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from dspark_ckpt.runtimes import (
    eagle3_aux,
    release_lines,
    release_store,
    selectors,
    sglang_rows,
    spec_facts,
    table,
    vllm_release,
    vllm_rows,
)
from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.versions import SGLANG_POSTS_READ, SGLANG_RELEASES, VLLM_RELEASES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))  # the generator's inputs: not in the package
import release_anchors as anchors
import release_changes

RUNTIMES = Path(vllm_rows.__file__).parent
ONE_LIST = RUNTIMES / "versions.py"
VERSION = re.compile(r"\d+\.\d+\.\d+(\.post\d+)?")
KNOWN = set(VLLM_RELEASES) | set(SGLANG_RELEASES) | set(SGLANG_POSTS_READ)
# Tables of release-independent bounds (a rule or behaviour from a release on): a bound past the newest listed
# release covers none, so the list may drop that release without touching them.
SINCE_TABLES = ("release_anchors.py", "spec_facts.py")
# the generator's inputs, kept in tools/ (no run reads them), are tables of runtimes/ all the same
GENERATOR_INPUTS = (Path(anchors.__file__), Path(release_changes.__file__))


def _modules() -> list[Path]:
    return sorted([*(p for p in RUNTIMES.glob("*.py") if p != ONE_LIST), *GENERATOR_INPUTS])


def _versions(node: ast.AST) -> list[str]:
    """The version strings of a tuple/list/set literal whose elements are all version strings."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or len(node.elts) < 2:
        return []
    found = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
             and VERSION.fullmatch(e.value)]
    return found if len(found) == len(node.elts) else []


def test_no_module_keeps_a_release_list_of_its_own() -> None:
    """A module-level name bound to a literal list of releases is a second hand list: derive it from versions.py."""
    offenders = []
    for path in _modules():
        for stmt in ast.parse(path.read_text()).body:
            value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
            if value is not None and len(_versions(value)) >= 3:
                offenders.append(f"{path.name}:{stmt.lineno}")
    assert not offenders, f"hand-kept release lists (derive them from runtimes/versions.py): {offenders}"


def test_every_release_a_table_names_is_in_the_list() -> None:
    """A release literal in runtimes/ at or after the first release read must be one of the list's; older ones are
    history (the first release that registers a family, bisected back to 0.8). An anchor's bound past the newest
    listed release (tools/release_anchors.py: a rule that first appears there; runtimes/spec_facts.py: a behaviour
    change) covers no release, so the list may drop that release without touching either."""
    first = {"vllm": release_key(VLLM_RELEASES[0]), "sglang": release_key(SGLANG_RELEASES[0])}
    newest = release_key(VLLM_RELEASES[-1])
    strays = []
    for path in _modules():
        runtime = "sglang" if path.name.startswith("sglang") else "vllm"
        for node in ast.walk(ast.parse(path.read_text())):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
            if text is None or not VERSION.fullmatch(text) or \
                    text.startswith(("0.4.", "0.5.")) != (runtime == "sglang"):
                continue
            if path.name in SINCE_TABLES and release_key(text) > newest:
                continue
            if release_key(text) >= first[runtime] and text not in KNOWN:
                strays.append(f"{path.name}:{node.lineno} {text}")
    assert not strays, f"releases not in runtimes/versions.py: {strays}"


def test_the_derived_lists_are_the_list() -> None:
    assert table.VLLM_VERSIONS is vllm_release.VERSIONS is eagle3_aux.RELEASES is VLLM_RELEASES
    assert table.SGLANG_VERSIONS is sglang_rows.SGLANG_VERSIONS is SGLANG_RELEASES
    assert selectors._known("vllm") is VLLM_RELEASES and selectors._known("sglang") is SGLANG_RELEASES


def test_every_per_release_table_is_keyed_by_the_list() -> None:
    """The per-release line numbers are generated (release_data/vllm-X/lines.json, tools/release_lines.py; what
    each one must hold is tests/unit/test_release_lines.py): one file per listed release and no other; the hand
    tables left are one row per listed release; SpeculativeConfig's columns and the registry are generated too
    (spec.json beside lines.json)."""
    assert tuple(vllm_release.RELEASE_RULES) == VLLM_RELEASES
    generated = {p.parent.name.removeprefix("vllm-") for p in release_store.DATA.glob(f"vllm-*/{release_lines.FILE_NAME}")}
    assert generated == set(VLLM_RELEASES), "python tools/release_lines.py X.Y.Z for each release of the list"
    bounds = {b for a in anchors.ANCHORS.values() for b in (a.since, a.until) if b is not None}
    newest = release_key(VLLM_RELEASES[-1])  # a rule exists from some release of the list on, or up to one
    bounds |= {c.since for c in release_changes.CHANGES}
    assert {b for b in bounds if release_key(b) <= newest} <= set(VLLM_RELEASES)
    spec = {p.parent.name.removeprefix("vllm-") for p in release_store.DATA.glob(f"vllm-*/{spec_facts.FILE_NAME}")}
    assert spec == set(VLLM_RELEASES), "python tools/release_lines.py X.Y.Z writes spec.json beside lines.json"
