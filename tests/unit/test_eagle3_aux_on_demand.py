"""The EAGLE-3 aux-state modules load only for a draft that has aux facts (start-up, docs/architecture.md): the
builders gate on records.AUX_FAMILIES, which must be exactly the families those modules read, and repair's copy
of the top-level key must be theirs. The import check runs a fresh interpreter: what a run imports is the point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dspark_ckpt.model.families import Family
from dspark_ckpt.repair import aux_count
from dspark_ckpt.runtimes import eagle3_aux, eagle3_aux_sglang
from dspark_ckpt.runtimes.records import AUX_FAMILIES
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS, VLLM_VERSIONS

REPO = Path(__file__).parents[2]
# Every key either reader looks at, so that a family it reads would answer with aux facts.
RAW = {"architectures": ["X"], "hidden_size": 16, eagle3_aux.TOP: [1, 2, 3], "num_aux_hidden_states": 3,
       "num_aux_layers": 3, "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 2, 3]}}


def test_the_gate_is_the_families_the_readers_read() -> None:
    assert AUX_FAMILIES == frozenset(eagle3_aux.COUNT_KEYS)
    assert aux_count.TOP == eagle3_aux.TOP


@pytest.mark.parametrize("family", list(Family))
def test_no_reader_answers_for_a_family_outside_the_gate(family: Family) -> None:
    vllm = eagle3_aux.read_aux(RAW, RAW, family, VLLM_VERSIONS[-1])
    sglang = eagle3_aux_sglang.read_aux(RAW, family, SGLANG_VERSIONS[-1])
    if family in AUX_FAMILIES:
        assert vllm is not None and sglang is not None
    else:
        assert vllm is None and sglang is None


def test_a_check_of_a_dspark_draft_imports_no_aux_module() -> None:
    probe = ("import json, sys\nfrom dspark_ckpt.cli.app import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
             "print(json.dumps(sorted(m for m in sys.modules if 'eagle3_aux' in m)), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe, "check", str(REPO / "examples" / "inkling-small-dspark"),
                           "--target", str(REPO / "examples" / "inkling-small-target"), "--isolated"],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
