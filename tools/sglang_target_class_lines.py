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

from pathlib import Path

from sglang_line_table import LineTable, line_of  # tools/ is on sys.path (not a package)

# key -> (file under sglang/srt, the line's pattern); the first three are required
ANCHORS = {
    "config_draft_model": ("configs/model_config.py", r"def _config_draft_model\("),
    "skip_unknown": ("models/llama.py", r"Parameter \{name\} not found in params_dict"),
    "hot_token_id": ("speculative/eagle_worker_v2.py", r"self\.draft_runner\.model\.hot_token_id is not None"),
    "dflash_selector": ("speculative/dflash_worker_v2.py", r"= self\.draft_model\.candidate_selector$"),
    "dflash_project": ("speculative/dflash_worker_v2.py", r"= self\.draft_model\.project_target_hidden\("),
}
REQUIRED = ("config_draft_model", "skip_unknown", "hot_token_id")


def lines(tree: Path) -> dict[str, int] | None:
    found = {key: n for key, (file, pattern) in ANCHORS.items() if (n := line_of(tree, file, pattern)) is not None}
    return found if all(key in found for key in REQUIRED) else None


TABLE = LineTable("sglang_target_class_lines", "sglang_target_class.json", lines,
                  {"generated_by": "python tools/sglang_target_class_lines.py --all",
                   "files": {key: f"sglang/srt/{file}" for key, (file, _) in ANCHORS.items()}})


def _listed() -> tuple[str, ...]:
    from dspark_ckpt.runtimes.versions import SGLANG_RELEASES

    return tuple(SGLANG_RELEASES)


def main(argv: list[str] | None = None) -> int:
    return TABLE.main(argv, __doc__.splitlines()[0], _listed)


if __name__ == "__main__":
    raise SystemExit(main())
