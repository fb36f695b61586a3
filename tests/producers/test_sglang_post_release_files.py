"""The upstream tier: an SGLang post release read (versions.SGLANG_POSTS_READ) holds every statement
runtimes/eagle3_aux_sglang.py cites for the release it follows (release.resolve's LINE answer): why check answers it
from that release's lines, cited `@ v<that release>` (tests/acceptance/test_sglang_post_releases.py). Read in both
wheels. Not at the same line: most post releases move them (0.4.5.post1's runner call is not at 0.4.5's L223,
0.5.3.post1's default_weight_loader assert not at 0.5.3's L805), so a post release's own lines are not cited."""

from __future__ import annotations

import pytest

from dspark_ckpt.runtimes import eagle3_aux_sglang as aux
from dspark_ckpt.runtimes.release import How, parse, resolve
from dspark_ckpt.runtimes.versions import SGLANG_POSTS_READ

pytestmark = pytest.mark.upstream(runtime="sglang")

# The posts of releases that ship llama_eagle3.py (0.4.4.post2 on): the others have no aux-state lines to cite.
POSTS = tuple(p for p in SGLANG_POSTS_READ if parse("sglang", p) > parse("sglang", next(iter(aux.lines()))))


def _cited(ln: aux.SgLines) -> dict[str, set[int]]:
    return {"sglang/srt/models/llama_eagle3.py": {n for n in (ln.width, ln.count, ln.nested, ln.fc) if n},
            f"sglang/srt/model_executor/{ln.runner}.py": {ln.runner_line},
            "sglang/srt/models/llama.py": {ln.default},
            "sglang/srt/model_loader/weight_utils.py": {ln.assert_line}}


@pytest.mark.parametrize("release", POSTS)
def test_a_post_release_holds_the_cited_aux_state_code_of_the_release_it_follows(release: str) -> None:
    from released_sources import release_tree

    found = resolve("sglang", release, tuple(aux.lines()))
    assert found is not None and found.how == How.LINE
    read, ln = aux._lines(release)
    assert read == found.name
    post, base = release_tree("sglang", release), release_tree("sglang", read)
    missing = []
    for file, lines in _cited(ln).items():
        held = {line.strip() for line in (post / file).read_text(encoding="utf-8").splitlines()}
        cited = (base / file).read_text(encoding="utf-8").splitlines()
        missing += [(file, n, cited[n - 1].strip()) for n in sorted(lines) if cited[n - 1].strip() not in held]
    assert missing == [], (release, read)
