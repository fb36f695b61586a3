"""One JSON table of SGLang release -> the lines where that release's wheel holds the statements a tool looks for,
kept in `dspark_ckpt/runtimes/release_data/` (shared by sglang_target_class_lines.py and sglang_aux_lines.py).

A tool gives its file, its releases and how it reads one extracted tree; this module fetches the wheels named (or
reads every cached one with `--all`), keeps the committed entry of a release whose wheel was not read (so `--check`
compares the releases read and no others), writes the table in release order, or compares it (`--check`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probe_runtime import DEFAULT_CACHE  # tools/ is on sys.path (not a package)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "dspark_ckpt" / "runtimes" / "release_data"
Entry = dict[str, Any]


def line_of(tree: Path, file: str, pattern: str) -> int | None:
    """The first line of sglang/srt/`file` in `tree` that `pattern` (a regex) matches, stripped; None without one."""
    path = tree / "sglang" / "srt" / file
    if not path.is_file():
        return None
    found = re.compile(pattern)
    return next((i for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if found.search(text.strip())), None)


@dataclass(frozen=True)
class LineTable:
    name: str  # the tool's name, for its messages
    file: str  # under release_data/
    read: Callable[[Path], Entry | None]  # one extracted tree -> its entry (None: the release gets none)
    header: Mapping[str, Any]  # what the file says of itself besides its releases ("generated_by", its anchors)
    stop_without_entry: bool = False  # a release the tool cannot read is an error, not a release with no entry

    @property
    def out(self) -> Path:
        return DATA / self.file

    def committed(self) -> dict[str, Entry]:
        return json.loads(self.out.read_text(encoding="utf-8"))["releases"] if self.out.is_file() else {}

    def table(self, versions: list[str], cache: Path, order: tuple[str, ...]) -> dict[str, Entry]:
        """The entry of each release read, the committed entry of every other one, in the order of `order`."""
        out = self.committed()
        for version in versions:
            tree = cache / f"sglang-{version}"
            if not (tree / "sglang" / "__init__.py").is_file():
                print(f"{self.name}: sglang {version}: no wheel under {cache}, skipped", file=sys.stderr)
                continue
            out.pop(version, None)
            found = self.read(tree)
            if found is None and self.stop_without_entry:
                raise SystemExit(f"{self.name}: sglang {version}: a required statement was not found in {tree}")
            if found is not None:
                out[version] = found
        return {v: out[v] for v in sorted(out, key=lambda v: (v not in order, order.index(v) if v in order else 0,
                                                               v))}

    def written(self, releases: Mapping[str, Entry]) -> str:
        head = ",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in self.header.items())
        rows = ",\n".join(f" {json.dumps(v)}: {json.dumps(releases[v], sort_keys=True)}" for v in releases)
        return f'{{\n{head},\n"releases": {{\n{rows}\n}}\n}}\n'

    def main(self, argv: list[str] | None, description: str, listed: Callable[[], tuple[str, ...]]) -> int:
        """The command line: `VERSION...` (their wheels fetched) or `--all` (every cached one), `--check`."""
        parser = argparse.ArgumentParser(description=description)
        parser.add_argument("versions", nargs="*")
        parser.add_argument("--all", action="store_true", help="every release the table lists, with a cached wheel")
        parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where wheels are extracted")
        parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
        args = parser.parse_args(argv)
        sys.path.insert(0, str(ROOT))
        order = listed()
        if unlisted := [v for v in args.versions if v not in order]:
            parser.error(f"not a release this table lists: {', '.join(unlisted)}")
        if not args.all:  # the releases named: their wheels fetched where not at hand
            from sglang_release_model import fetch_sources

            args.cache.mkdir(parents=True, exist_ok=True)
            for version in args.versions:
                fetch_sources(version, args.cache)
        text = self.written(self.table(list(order) if args.all else args.versions, args.cache, order))
        if args.check:
            same = self.out.is_file() and self.out.read_text(encoding="utf-8") == text
            print(f"{self.name}: {self.out} {'is' if same else 'is NOT'} what the SGLang wheels say")
            return 0 if same else 1
        self.out.write_text(text, encoding="utf-8")
        print(f"{self.name}: wrote {self.out}")
        return 0
