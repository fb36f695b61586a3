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

import re
from pathlib import Path

from sglang_line_table import LineTable, line_of  # tools/ is on sys.path (not a package)

ARCH = "LlamaForCausalLMEagle3"
MODEL = "models/llama_eagle3.py"
RUNNERS = ("model_executor/model_runner_components/spec_aux_hidden_state.py", "model_executor/model_runner.py")
NESTED_READ = '"eagle_aux_hidden_state_layer_ids"'
BARE_CALL = "set_eagle3_layers_to_capture()"
# column -> (file under sglang/srt, the text its line holds)
ANCHORS = {
    "width": (MODEL, "config.target_hidden_size"),
    "count": (MODEL, 'getattr(config, "num_aux_hidden_states"'),
    "nested": (MODEL, 'eagle_config.get("eagle_aux_hidden_state_layer_ids")'),
    "fc": (MODEL, "self.fc = torch.nn.Linear("),
    "assert_line": ("model_loader/weight_utils.py", "Attempted to load weight"),
    "default": ("models/llama.py", "layers_to_capture = [2, num_layers // 2, num_layers - 3]"),
}
OPTIONAL = ("count", "nested")  # absent before 0.5.12: fc is sized for the literal 3


def _holding(tree: Path, file: str, text: str) -> int | None:
    return line_of(tree, file, re.escape(text))


def lines(tree: Path) -> dict[str, object] | None:
    """One release's columns, or None where a required one is not found (the generator then stops: a moved
    statement needs a reader's look, not a guess)."""
    found: dict[str, object] = {key: _holding(tree, file, text) for key, (file, text) in ANCHORS.items()}
    if any(found[key] is None for key in ANCHORS if key not in OPTIONAL):
        return None
    for text, reads_ids in ((NESTED_READ, True), (BARE_CALL, False)):  # the runner reading the ids, else calling
        for runner in RUNNERS:
            if (line := _holding(tree, runner, text)) is not None:
                name = Path(runner).relative_to("model_executor").with_suffix("").as_posix()
                return {**found, "runner": name, "runner_line": line, "reads_ids": reads_ids}
    return None


TABLE = LineTable("sglang_aux_lines", "sglang_aux_lines.json", lines,
                  {"generated_by": "python tools/sglang_aux_lines.py --all",
                   "anchors": {key: {"file": f"sglang/srt/{file}", "holds": text}
                               for key, (file, text) in ANCHORS.items()}},
                  stop_without_entry=True)


def _listed() -> tuple[str, ...]:
    from dspark_ckpt.runtimes import registered
    from dspark_ckpt.runtimes.versions import SGLANG_RELEASES

    return tuple(r for r in SGLANG_RELEASES if registered.registration("sglang", r, ARCH))


def main(argv: list[str] | None = None) -> int:
    return TABLE.main(argv, __doc__.splitlines()[0], _listed)


if __name__ == "__main__":
    raise SystemExit(main())
