"""Where each SGLang release routes a base-class draft to its target class, read from the release's own files.

For every listed SGLang release whose wheel is at hand: the line of `ModelConfig._config_draft_model` (the only
architecture rewrite a draft gets; it names no base class such as LlamaForCausalLM), of the target Llama class's
"Parameter {name} not found in params_dict" skip in its default (legacy) load_weights, of the EAGLE worker's
`self.draft_runner.model.hot_token_id` read (EAGLE3 fails there on a target class), and of the DFLASH worker's
`self.draft_model.candidate_selector` read (0.5.19+), and of its `self.draft_model.project_target_hidden(...)` call
(the first request's prefill fills the draft's KV cache through it). A release where one of the first three is
missing gets no entry: check then gives it no verdict rather than a guess. Written to
`dspark_ckpt/runtimes/release_data/sglang_target_class.json` (runtimes/sglang_target_class.py reads it); a release
whose wheel was not read keeps its committed entry, so `--check` compares the releases read and no others.

    python tools/sglang_target_class_lines.py 0.5.23 [0.5.21 ...] [--check]   # these releases (their wheels fetched)
    python tools/sglang_target_class_lines.py --all [--check]     # every listed release with a cached wheel
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from probe_runtime import DEFAULT_CACHE  # tools/ is on sys.path (not a package)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "dspark_ckpt" / "runtimes" / "release_data" / "sglang_target_class.json"
# key -> (file under sglang/srt, the line's pattern); the first three are required
ANCHORS = {
    "config_draft_model": ("configs/model_config.py", r"def _config_draft_model\("),
    "skip_unknown": ("models/llama.py", r"Parameter \{name\} not found in params_dict"),
    "hot_token_id": ("speculative/eagle_worker_v2.py", r"self\.draft_runner\.model\.hot_token_id is not None"),
    "dflash_selector": ("speculative/dflash_worker_v2.py", r"= self\.draft_model\.candidate_selector$"),
    "dflash_project": ("speculative/dflash_worker_v2.py", r"= self\.draft_model\.project_target_hidden\("),
}
REQUIRED = ("config_draft_model", "skip_unknown", "hot_token_id")


def _line(tree: Path, file: str, pattern: str) -> int | None:
    path = tree / "sglang" / "srt" / file
    if not path.is_file():
        return None
    found = re.compile(pattern)
    return next((i for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if found.search(text.strip())), None)


def lines(tree: Path) -> dict[str, int] | None:
    found = {key: n for key, (file, pattern) in ANCHORS.items() if (n := _line(tree, file, pattern)) is not None}
    return found if all(key in found for key in REQUIRED) else None


def table(versions: list[str], cache: Path, committed: dict[str, dict[str, int]],
          order: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """The lines of each release read (an entry, or none where a required line is missing), the committed entry of
    every other one, in the order of the release list."""
    out = dict(committed)
    for version in versions:
        tree = cache / f"sglang-{version}"
        if not (tree / "sglang" / "__init__.py").is_file():
            print(f"sglang_target_class_lines: sglang {version}: no wheel under {cache}, skipped", file=sys.stderr)
            continue
        out.pop(version, None)
        if (found := lines(tree)) is not None:
            out[version] = found
    return {v: out[v] for v in sorted(out, key=lambda v: (v not in order, order.index(v) if v in order else 0, v))}


def committed_releases() -> dict[str, dict[str, int]]:
    return json.loads(OUT.read_text(encoding="utf-8"))["releases"] if OUT.is_file() else {}


def written(doc: dict[str, dict[str, int]]) -> str:
    rows = ",\n".join(f" {json.dumps(v)}: {json.dumps(doc[v], sort_keys=True)}" for v in doc)
    files = {key: f"sglang/srt/{file}" for key, (file, _) in ANCHORS.items()}
    return (f'{{\n"generated_by": "python tools/sglang_target_class_lines.py --all",\n'
            f'"files": {json.dumps(files, sort_keys=True)},\n"releases": {{\n{rows}\n}}\n}}\n')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*")
    parser.add_argument("--all", action="store_true", help="every listed SGLang release (runtimes/versions.py)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where wheels are extracted")
    parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from dspark_ckpt.runtimes.versions import SGLANG_RELEASES

    if not args.all:  # the releases named: their wheels fetched where not at hand
        from sglang_release_model import fetch_sources

        args.cache.mkdir(parents=True, exist_ok=True)
        for version in args.versions:
            fetch_sources(version, args.cache)
    text = written(table(list(SGLANG_RELEASES) if args.all else args.versions, args.cache, committed_releases(),
                         tuple(SGLANG_RELEASES)))
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print(f"sglang_target_class_lines: {OUT} {'is' if same else 'is NOT'} what the SGLang wheels say")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"sglang_target_class_lines: wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
