"""Where each SGLang release reads an EAGLE-3 draft's aux hidden states, read from the release's own files.

For every listed SGLang release that registers `LlamaForCausalLMEagle3` and whose wheel is at hand: the lines of
`sglang/srt/models/llama_eagle3.py` that size fc (the target_hidden_size read, `getattr(config,
"num_aux_hidden_states", ...)` and `eagle_config.get("eagle_aux_hidden_state_layer_ids")` where the release has them
(0.5.12+; before, fc takes the literal 3), `self.fc = torch.nn.Linear(`), the model runner's read of the nested ids
(or, 0.4.4.post2-0.4.8, its bare `set_eagle3_layers_to_capture()`; 0.5.16+ in model_runner_components/
spec_aux_hidden_state.py), default_weight_loader's assert and the target's default `layers_to_capture`. Written to
`dspark_ckpt/runtimes/release_data/sglang_aux_lines.json` (runtimes/eagle3_aux_sglang.py reads it); a release whose
wheel was not read keeps its committed entry, so `--check` compares the releases read and no others. No line
number is typed by hand.

    python tools/sglang_aux_lines.py 0.5.23 [0.5.21 ...] [--check]   # these releases (their wheels fetched)
    python tools/sglang_aux_lines.py --all [--check]                 # every listed release with a cached wheel
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from probe_runtime import DEFAULT_CACHE  # tools/ is on sys.path (not a package)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "dspark_ckpt" / "runtimes" / "release_data" / "sglang_aux_lines.json"
ARCH = "LlamaForCausalLMEagle3"
MODEL = "models/llama_eagle3.py"
RUNNERS = ("model_executor/model_runner_components/spec_aux_hidden_state.py", "model_executor/model_runner.py")
NESTED_READ = '"eagle_aux_hidden_state_layer_ids"'
BARE_CALL = "set_eagle3_layers_to_capture()"
# column -> (file under sglang/srt, the text its line holds); None: the column is a runner's (below)
ANCHORS = {
    "width": (MODEL, "config.target_hidden_size"),
    "count": (MODEL, 'getattr(config, "num_aux_hidden_states"'),
    "nested": (MODEL, 'eagle_config.get("eagle_aux_hidden_state_layer_ids")'),
    "fc": (MODEL, "self.fc = torch.nn.Linear("),
    "assert_line": ("model_loader/weight_utils.py", "Attempted to load weight"),
    "default": ("models/llama.py", "layers_to_capture = [2, num_layers // 2, num_layers - 3]"),
}
OPTIONAL = ("count", "nested")  # absent before 0.5.12: fc is sized for the literal 3


def _line(tree: Path, file: str, text: str) -> int | None:
    path = tree / "sglang" / "srt" / file
    if not path.is_file():
        return None
    return next((i for i, held in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in held), None)


def lines(tree: Path) -> dict[str, object] | None:
    """One release's columns, or None where a required one is not found (the generator then stops: a moved
    statement needs a reader's look, not a guess)."""
    found: dict[str, object] = {key: _line(tree, file, text) for key, (file, text) in ANCHORS.items()}
    if any(found[key] is None for key in ANCHORS if key not in OPTIONAL):
        return None
    for runner in RUNNERS:  # the runner that reads the nested ids, else the one that calls without ids
        if (line := _line(tree, runner, NESTED_READ)) is not None:
            return {**found, "runner": Path(runner).relative_to("model_executor").with_suffix("").as_posix(),
                    "runner_line": line, "reads_ids": True}
    for runner in RUNNERS:
        if (line := _line(tree, runner, BARE_CALL)) is not None:
            return {**found, "runner": Path(runner).relative_to("model_executor").with_suffix("").as_posix(),
                    "runner_line": line, "reads_ids": False}
    return None


def table(versions: list[str], cache: Path, committed: dict[str, dict[str, object]],
          order: tuple[str, ...]) -> dict[str, dict[str, object]]:
    out = dict(committed)
    for version in versions:
        tree = cache / f"sglang-{version}"
        if not (tree / "sglang" / "__init__.py").is_file():
            print(f"sglang_aux_lines: sglang {version}: no wheel under {cache}, skipped", file=sys.stderr)
            continue
        found = lines(tree)
        if found is None:
            raise SystemExit(f"sglang_aux_lines: sglang {version}: a required statement was not found in {tree}")
        out[version] = found
    return {v: out[v] for v in sorted(out, key=lambda v: (v not in order, order.index(v) if v in order else 0, v))}


def committed_releases() -> dict[str, dict[str, object]]:
    return json.loads(OUT.read_text(encoding="utf-8"))["releases"] if OUT.is_file() else {}


def written(doc: dict[str, dict[str, object]]) -> str:
    rows = ",\n".join(f" {json.dumps(v)}: {json.dumps(doc[v], sort_keys=True)}" for v in doc)
    anchors = {key: {"file": f"sglang/srt/{file}", "holds": text} for key, (file, text) in ANCHORS.items()}
    return (f'{{\n"generated_by": "python tools/sglang_aux_lines.py --all",\n'
            f'"anchors": {json.dumps(anchors, sort_keys=True)},\n"releases": {{\n{rows}\n}}\n}}\n')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*")
    parser.add_argument("--all", action="store_true", help="every listed SGLang release that registers " + ARCH)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where wheels are extracted")
    parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from dspark_ckpt.runtimes import registered
    from dspark_ckpt.runtimes.versions import SGLANG_RELEASES

    listed = tuple(r for r in SGLANG_RELEASES if registered.registration("sglang", r, ARCH))
    unlisted = [v for v in args.versions if v not in listed]
    if unlisted:
        parser.error(f"not a listed SGLang release that registers {ARCH}: {', '.join(unlisted)}")
    if not args.all:  # the releases named: their wheels fetched where not at hand
        from sglang_release_model import fetch_sources

        args.cache.mkdir(parents=True, exist_ok=True)
        for version in args.versions:
            fetch_sources(version, args.cache)
    text = written(table(list(listed) if args.all else args.versions, args.cache, committed_releases(), listed))
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print(f"sglang_aux_lines: {OUT} {'is' if same else 'is NOT'} what the SGLang wheels say")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"sglang_aux_lines: wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
