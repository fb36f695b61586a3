"""Every listed vLLM release's vocabulary rows against what that release's own code did with the same drafts.

`python tools/probe_runtime.py X --write` runs the release's registered classes (`__init__` and `load_weights`, on CPU)
over the project's fixture matrix (six families x four vocabulary kinds x which of lm_head, d2t, t2d and
embed_tokens ship) and keeps the outcomes in `tests/data/release_vocab/vllm-X.json`. Here check judges the same
drafts, header-only, for every listed release, and each verdict must be what the release did: loads or not, its error's
words, whether it built `draft_id_to_target_id` (verify.engine.disagreement, the probe's own comparison). So a row
edit that contradicts a release fails in CI without fetching a wheel; `--check` (the slow test in
tests/producers/test_release_data.py) regenerates a release's file from its wheel.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.versions import VLLM_RELEASES
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.verify.engine import Observed, at_load, disagreement

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import probe_runtime  # noqa: E402 - tools/ is not a package

VOCAB = probe_runtime.VOCAB_DATA


def _observed(o: dict[str, Any]) -> Observed:
    return Observed(registered=o["registered"], architecture=o["architecture"], model_class=o["class"],
                    phase=o["phase"], error_type=o["error_type"], error=o["error"],
                    state={"d2t_param": o["d2t_param"]})


@pytest.fixture(scope="module")
def analyses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The probe's fixtures, each judged once for every listed release."""
    root = tmp_path_factory.mktemp("vocab-matrix")
    runtimes = [RuntimeVersion("vllm", v) for v in VLLM_RELEASES]
    return {path.name: analyze(local_source(path), target=TargetVocab(probe_runtime.T, "probe"), runtimes=runtimes)
            for path in probe_runtime.fixture_matrix(root, list(probe_runtime.FAMILIES))}


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_every_listed_release_has_its_observations(release: str) -> None:
    doc = json.loads((VOCAB / f"vllm-{release}.json").read_text())
    assert doc["generated_by"] == f"python tools/probe_runtime.py {release} --write"
    assert doc["target_vocab"] == probe_runtime.T and doc["kinds"] == {k: list(v) for k, v in probe_runtime.KINDS.items()}
    assert len(doc["cells"]) == len(probe_runtime.FAMILIES) * len(probe_runtime.KINDS) * len(probe_runtime.SHIPS)


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_check_says_what_the_release_did(release: str, analyses: dict[str, Any]) -> None:
    doc = json.loads((VOCAB / f"vllm-{release}.json").read_text())
    assert set(doc["cells"]) == set(analyses)
    wrong = []
    for case, index in sorted(doc["cells"].items()):
        facts = analyses[case].facts
        assert facts is not None, case
        why = disagreement(_observed(doc["outcomes"][index]), at_load(facts, release), facts)
        if why is not None:
            wrong.append(f"{case}: {why}")
    assert not wrong, f"vLLM {release}: {len(wrong)} cells\n" + "\n".join(wrong[:10])


def test_a_contradicting_observation_is_caught(analyses: dict[str, Any]) -> None:
    """The comparison can fail: the release observed loading what check says fails, and the other way round."""
    release = VLLM_RELEASES[-1]
    doc = json.loads((VOCAB / f"vllm-{release}.json").read_text())
    failing = next(c for c, i in sorted(doc["cells"].items()) if doc["outcomes"][i]["error"] is not None)
    loading = next(c for c, i in sorted(doc["cells"].items()) if doc["outcomes"][i]["error"] is None
                   and doc["outcomes"][i]["registered"])
    flipped = {**doc["outcomes"][doc["cells"][failing]], "error": None, "error_type": None}
    assert disagreement(_observed(flipped), at_load(analyses[failing].facts, release), analyses[failing].facts)
    broken = {**doc["outcomes"][doc["cells"][loading]], "error": "boom", "error_type": "ValueError"}
    assert disagreement(_observed(broken), at_load(analyses[loading].facts, release), analyses[loading].facts)
