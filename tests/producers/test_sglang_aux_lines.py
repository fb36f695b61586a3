"""The upstream tier: each SGLang release's EAGLE-3 aux-state lines (runtimes/eagle3_aux_sglang.py LINES, hand-read)
hold, in that release's own wheel, the statement each column names. With the hermetic ties in
tests/unit/test_eagle3_aux_sglang_lines.py (the releases it lists are the registry data's, its loader line follows the
generated record's), LINES is a table read from the wheels, not a second model beside the data: a wheel whose line
moved fails here, and a post release answers through release.resolve (test_sglang_post_release_files.py)."""

from __future__ import annotations

import pytest

from dspark_ckpt.runtimes import eagle3_aux_sglang as aux

pytestmark = pytest.mark.upstream(runtime="sglang")

MODEL = "sglang/srt/models/llama_eagle3.py"


def _expected(ln: aux.SgLines) -> list[tuple[str, int, str]]:
    """(file, line, a text the line holds) for every column of one release's row."""
    found = [(MODEL, ln.width, "target_hidden_size"), (MODEL, ln.fc, "self.fc = torch.nn.Linear("),
             (f"sglang/srt/model_executor/{ln.runner}.py", ln.runner_line,
              '"eagle_aux_hidden_state_layer_ids"' if ln.reads_ids else "set_eagle3_layers_to_capture()"),
             ("sglang/srt/model_loader/weight_utils.py", ln.assert_line, "Attempted to load weight"),
             ("sglang/srt/models/llama.py", ln.default, "layers_to_capture = [2, num_layers // 2, num_layers - 3]")]
    if ln.count is not None:
        found.append((MODEL, ln.count, 'getattr(config, "num_aux_hidden_states"'))
    if ln.nested is not None:
        found.append((MODEL, ln.nested, 'eagle_config.get("eagle_aux_hidden_state_layer_ids")'))
    return found


@pytest.mark.parametrize("release", tuple(aux.LINES))
def test_each_cited_line_holds_its_statement_in_the_release_wheel(release: str) -> None:
    from released_sources import release_tree

    tree = release_tree("sglang", release)
    wrong = []
    for file, line, text in _expected(aux.LINES[release]):
        held = (tree / file).read_text(encoding="utf-8").splitlines()
        if not (0 < line <= len(held)) or text not in held[line - 1]:
            wrong.append((file, line, text, held[line - 1].strip() if 0 < line <= len(held) else None))
    assert wrong == [], release
