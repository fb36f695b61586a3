#!/usr/bin/env python3
"""Maintainer command: resolve every citation anchor against a vLLM release's wheel and write its lines.json.

    python tools/release_lines.py 0.34.0            # writes dspark_ckpt/runtimes/release_data/vllm-0.34.0/lines.json
                                                    # and spec.json beside it
    python tools/release_lines.py 0.34.0 --check    # regenerate and compare with the committed file
    python tools/release_lines.py 0.30.0 --source DIR --out /tmp/lines.json

The wheel is fetched and its `.py` files extracted by tools/probe_runtime.py's `fetch_sources` (into
~/.cache/dspark-ckpt/probe/vllm-X.Y.Z/, kept for the next run). Each anchor of `tools/release_anchors.py` is
located in the released file (a regex for the first line, `ast` for where the statement, branch or function
starting there ends) and written as `{"file": ..., "lines": "L12-34"}` under its key; an anchor the release does
not have is left out. Exit 0 on success (with --check: the committed file is what the wheel says), 1 when --check
differs, 2 when an anchor cannot be resolved (found outside its `since`/`until`, or missing inside them: the
anchor, or its bounds, need updating for this release). Beside it, `spec.json`: SpeculativeConfig's mechanical
columns (its fields, the `method` Literal, the MTP types, the architectures the method detection names, the
dspark_draft_topk and adaptive-verification checks with their words), read with `ast` by tools/release_spec.py
(runtimes/spec_facts.py reads them).
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from probe_runtime import DEFAULT_CACHE, fetch_sources  # tools/ is on sys.path (not a package)
from release_anchors import (
    ANCHORS,
    BRANCH,
    DSPARK_KEEP,
    LINE,
    SPECULATORS,
    STATEMENT,
    Anchor,
    Decorated,
    Excluded,
    covers,
)
from release_spec import SpecError, spec_facts

from dspark_ckpt.runtimes.release_lines import FILE_NAME
from dspark_ckpt.runtimes.release_store import DATA
from dspark_ckpt.runtimes.spec_facts import FILE_NAME as SPEC_FILE_NAME


class AnchorError(Exception):
    """An anchor that does not resolve as its bounds say it should, for this release."""


@dataclass(frozen=True)
class Source:
    """One released `.py` file: its text, where each line starts, and its statements."""

    path: Path

    @functools.cached_property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @functools.cached_property
    def tree(self) -> ast.Module:
        return ast.parse(self.text)

    @functools.cached_property
    def starts(self) -> list[int]:
        """The offset of each line's first character (index 0: line 1), and one past the end."""
        offsets = [0]
        for line in self.text.splitlines(keepends=True):
            offsets.append(offsets[-1] + len(line))
        return offsets

    @functools.cached_property
    def statements(self) -> list[tuple[int, int, ast.stmt]]:
        return [(n.lineno, n.end_lineno or n.lineno, n) for n in ast.walk(self.tree) if isinstance(n, ast.stmt)]

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.starts) - 1
        while lo + 1 < hi:  # the last line start <= offset
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.starts[mid] <= offset else (lo, mid)
        return lo + 1

    def span(self, inside: str | None) -> tuple[int, int] | None:
        """The lines of the def, class or assigned name `inside` (dotted for a nested one); the whole file for None;
        None when the file has no such name (the release does not have the rule)."""
        if inside is None:
            return 1, len(self.starts) - 1
        body: list[ast.stmt] = self.tree.body
        node: ast.stmt | None = None
        for part in inside.split("."):
            node = next((n for n in body if _named(n) == part), None)
            if node is None:
                return None
            body = getattr(node, "body", [])
        assert node is not None
        return node.lineno, node.end_lineno or node.lineno


@functools.cache
def _source(path: Path) -> Source:
    """Each released file is read and parsed once per run."""
    return Source(path)


def _first_line(src: Source, match: re.Match[str]) -> int:
    """The line a match starts on, past the whitespace (and blank lines) a leading `^\\s*` took."""
    text = match.group(0)
    return src.line_of(match.start() + len(text) - len(text.lstrip()))


def _named(node: ast.stmt) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return next((t.id for t in targets if isinstance(t, ast.Name)), None)


def _matches(src: Source, anchor: Anchor) -> list[re.Match[str]]:
    """The matches of the anchor's first pattern that matches at all, inside its span."""
    span = src.span(anchor.inside)
    if span is None:
        return []
    first, last = span
    begin, end = src.starts[first - 1], src.starts[last]
    for pattern in (anchor.at,) if isinstance(anchor.at, str) else anchor.at:
        found = list(re.compile(pattern, re.MULTILINE).finditer(src.text, begin, end))
        if found:
            return found
    return []


def _end(src: Source, anchor: Anchor, start: int, match: re.Match[str]) -> int:
    """The last line the citation reaches, from its first line `start`."""
    if anchor.through is not None:
        _, last = src.span(anchor.inside) or (0, len(src.starts) - 1)
        hit = re.compile(anchor.through, re.MULTILINE).search(src.text, match.start(), src.starts[last])
        if hit is None:
            raise AnchorError(f"no {anchor.through!r} after line {start} of {anchor.file}")
        held = src.line_of(hit.start())
        if anchor.reach == LINE:
            return held
        return min(((s, e) for s, e, _ in src.statements if s <= held <= e), key=lambda se: se[1] - se[0],
                   default=(held, held))[1]
    if anchor.reach == LINE:
        return start
    here = [(e, n) for s, e, n in src.statements if s == start]
    if not here:
        raise AnchorError(f"no statement starts at line {start} of {anchor.file}")
    if anchor.reach == STATEMENT:
        return max(e for e, _ in here)
    assert anchor.reach == BRANCH, anchor.reach
    branch = next((n for _, n in here if isinstance(n, ast.If)), None)
    if branch is None:
        raise AnchorError(f"line {start} of {anchor.file} is no `if`")
    return branch.body[-1].end_lineno or branch.body[-1].lineno


def located(anchor: Anchor, tree: Path) -> tuple[str, str] | None:
    """The file and lines of the anchor in the release at `tree`: where the anchor itself matches, else where its
    `moved` form does (the same rule kept elsewhere by a later release); None where neither does."""
    lines = resolve(anchor, tree)
    if lines is not None:
        return anchor.file, lines
    return located(anchor.moved, tree) if anchor.moved is not None else None


def resolve(anchor: Anchor, tree: Path) -> str | None:
    """The anchor's lines in the release extracted at `tree` ("L12", "L12-34", "L1, L7"), None where it has none."""
    path = tree / anchor.file
    if not path.is_file():
        return None
    src = _source(path)
    found = _matches(src, anchor)
    if not found:
        return None
    cited = []
    for match in found if anchor.every else found[:1]:
        start = _first_line(src, match)
        end = _end(src, anchor, start, match)
        cited.append(f"L{start}" if end == start else f"L{start}-{end}")
    return ", ".join(cited)


def decorated(family: Decorated, tree: Path) -> dict[str, str]:
    """`<prefix>.<name>` -> the `def` line of each function decorated `@<decorator>("<name>")`, in file order."""
    path = tree / family.file
    if not path.is_file():
        return {}
    found = {}
    for node in _source(path).tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if (isinstance(deco, ast.Call) and isinstance(deco.func, ast.Name) and deco.func.id == family.decorator
                    and deco.args and isinstance(deco.args[0], ast.Constant) and isinstance(deco.args[0].value, str)):
                found[f"{family.prefix}.{deco.args[0].value}"] = f"L{node.lineno}"
    return found


def excluded(family: Excluded, tree: Path) -> dict[str, str]:
    """`<prefix>.<name>` -> the line of each `<name> not in ....architectures` in the condition of the `if` that
    the family's anchor locates (a module-level string constant as the name is resolved)."""
    anchor = ANCHORS[family.anchor]
    path = tree / anchor.file
    if not path.is_file():
        return {}
    src = _source(path)
    found = _matches(src, anchor)
    if not found:
        return {}
    start = _first_line(src, found[0])
    branch = next((n for s, _, n in src.statements if s == start and isinstance(n, ast.If)), None)
    if branch is None:
        raise AnchorError(f"{family.anchor}: line {start} of {anchor.file} is no `if`")
    constants = {t.id: n.value.value for n in src.tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                 for t in n.targets if isinstance(t, ast.Name)}
    names = {}
    for node in ast.walk(branch.test):
        if (isinstance(node, ast.Compare) and [type(o) for o in node.ops] == [ast.NotIn]
                and isinstance(node.comparators[0], ast.Attribute) and node.comparators[0].attr == "architectures"):
            left = node.left
            name = (left.value if isinstance(left, ast.Constant) and isinstance(left.value, str)
                    else constants.get(left.id) if isinstance(left, ast.Name) else None)
            if name is None:
                raise AnchorError(f"{family.anchor}: an excluded architecture at line {left.lineno} is no string")
            names[f"{family.prefix}.{name}"] = f"L{left.lineno}"
    return names


def release_lines(version: str, tree: Path) -> dict[str, dict[str, str]]:
    """Every anchor resolved in the release at `tree`: key -> {file, lines}. Raises AnchorError on the first anchor
    whose presence disagrees with its since/until."""
    doc: dict[str, dict[str, str]] = {}
    for key, anchor in ANCHORS.items():
        try:
            found = located(anchor, tree)
        except AnchorError as e:
            raise AnchorError(f"{key}: {e}") from e
        if (found is not None) != covers(anchor, version):
            where = "found" if found is not None else "not found"
            raise AnchorError(f"{key}: {where} in vLLM {version} ({anchor.file}), against since={anchor.since} "
                              f"until={anchor.until}: update the anchor or its bounds in tools/release_anchors.py")
        if found is not None:
            doc[key] = {"file": found[0], "lines": found[1]}
    doc.update({k: {"file": SPECULATORS.file, "lines": v} for k, v in decorated(SPECULATORS, tree).items()})
    doc.update({k: {"file": ANCHORS[DSPARK_KEEP.anchor].file, "lines": v}
                for k, v in excluded(DSPARK_KEEP, tree).items()})
    return doc


def dump(doc: dict[str, dict[str, str]]) -> str:
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("version", help="the vLLM release, e.g. 0.34.0")
    parser.add_argument("--source", type=Path, help="an already extracted tree (DIR/vllm/...)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where wheels are extracted")
    parser.add_argument("--out", type=Path, help=f"write here (and {SPEC_FILE_NAME} beside it) instead of release_data/vllm-V/")
    parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    args = parser.parse_args(argv)
    tree = args.source or fetch_sources(args.version, args.cache)
    try:
        text = dump(release_lines(args.version, tree))
        spec = json.dumps(spec_facts(tree), indent=1) + "\n"
    except (AnchorError, SpecError) as e:
        print(f"release_lines: vLLM {args.version}: {e}", file=sys.stderr)
        return 2
    path = args.out or DATA / f"vllm-{args.version}" / FILE_NAME
    written = {path: text, path.with_name(SPEC_FILE_NAME): spec}
    if args.check:
        differ = [p for p, t in written.items() if not (p.is_file() and p.read_text(encoding="utf-8") == t)]
        for p in written:
            print(f"release_lines: {p} {'is NOT' if p in differ else 'is'} what vLLM {args.version}'s files say")
        return 1 if differ else 0
    path.parent.mkdir(parents=True, exist_ok=True)
    for p, t in written.items():
        p.write_text(t, encoding="utf-8")
    print(f"release_lines: wrote {path} ({len(json.loads(text))} citations) and {path.with_name(SPEC_FILE_NAME)}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
