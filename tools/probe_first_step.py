#!/usr/bin/env python3
"""Maintainer command: run one SGLang release's own DSpark first draft step on CPU and record, as data, which
relations between the draft's Markov vocab V and the target head's width W it survives.

    python tools/probe_first_step.py 0.5.23            # write release_data/sglang-0.5.23/first_step.json
    python tools/probe_first_step.py 0.5.23 --check    # regenerate and compare with the committed file
    python tools/probe_first_step.py all [--check]     # every listed release that registers Qwen3DSparkModel

What runs is the release's code, cut out of its wheel with `ast` (tools/probe_sglang.py's `_cut`; no sglang
install, no GPU): models/dspark.py build_markov_head (the head `__init__` builds: markov_w1 [V, r], markov_w2
[V, r]) and gather_and_crop_vocab (the target head's logits cropped to its org_vocab_size W), then the draft step:
VanillaMarkov.sample_block (run_markov_block: `logits + bias`, 0.5.16-0.5.21) or speculative/dspark_components/
dspark_draft.py draft_markov_block over kernels/ops/speculative/dspark/markov_sample.py MarkovSampleStep's torch
path (0.5.22+; its `_check` asserts are the ones the CUDA kernel runs). Each head type (vanilla, gated, rnn) is
fed tiny tensors for V < W, V = W and V > W at two sizes, with three kinds of previous token: the zeros a CUDA-graph
capture feeds (`capture`), the last id with a markov_w1 row the target head can propose (`inside`), and the first id
without one (`outside`, V, where V < W; null elsewhere). An outcome is `ok`, null, or the
exception's type, text (the sizes written as {v} and {w}; the two sizes must agree) and the release's own frame
that raised it (file:line inside the wheel). check reads the file (runtimes/first_step.py).
Exit 0 on success (or, with --check, when the file is unchanged), 1 when it differs, 2 when the release cannot be
run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from probe_first_step_eagle3 import observe_eagle3
from probe_runtime import DEFAULT_CACHE
from sglang_release_model import fetch_sources

from dspark_ckpt.runtimes.first_step import ANCHORS, FILE, HEAD_TYPES, RELATIONS, SCHEMA
from dspark_ckpt.runtimes.release_store import RELEASE_FILE
from dspark_ckpt.runtimes.release_store import folder as data_folder
from dspark_ckpt.runtimes.versions import SGLANG_RELEASES
from dspark_ckpt.verify.sglang_step import markov_step
from dspark_ckpt.verify.sglang_step import selector as release_selector

RANK, HIDDEN, ROWS, GAMMA = 4, 16, 2, 2
# (W, V) per relation, at two sizes whose numbers appear nowhere else in torch's messages
SIZES: dict[str, tuple[tuple[int, int], ...]] = {"V<W": ((96, 64), (40, 24)), "V=W": ((96, 96), (40, 40)),
                                                  "V>W": ((96, 128), (40, 56))}
Step = Callable[[nn.Module, torch.Tensor, torch.Tensor, torch.Tensor], Any]


def release_step(tree: Path) -> tuple[Callable[[str, int], nn.Module], Callable[[torch.Tensor, int], torch.Tensor],
                                      Step, list[str]] | None:
    """(build_markov_head for a head type and V, the crop to W, the draft step, what ran), None without DSpark: the
    release's code as verify's SGLang worker cuts it too (dspark_ckpt/verify/sglang_step.py markov_step)."""
    found = markov_step(tree)
    if found is None:
        return None
    build_markov_head, crop, step, ran = found

    def build(head_type: str, v: int) -> nn.Module:
        config = types.SimpleNamespace(markov_rank=RANK, markov_head_type=head_type, vocab_size=v, hidden_size=HIDDEN)
        head: nn.Module = build_markov_head(config)
        return head

    return build, crop, step, ran


def _frame(exc: BaseException, tree: Path) -> str | None:
    """The release's innermost frame of the traceback, as file:line inside the wheel."""
    inside = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).is_relative_to(tree)]
    if not inside:
        return None
    return f"{Path(inside[-1].filename).relative_to(tree).as_posix()}:{inside[-1].lineno}"


def _outcome(run: Callable[[], Any], tree: Path, v: int, w: int) -> dict[str, Any] | str:
    torch.manual_seed(0)
    try:
        run()
    except Exception as exc:  # noqa: BLE001 - the release's own exception is the observation
        text = re.sub(rf"\b{v}\b", "{v}", re.sub(rf"\b{w}\b", "{w}", str(exc) or type(exc).__name__))
        return {"raises": type(exc).__name__, "text": text, "where": _frame(exc, tree)}
    return "ok"


def previous_token(anchor: str, v: int, w: int) -> int | None:
    """The previous token an anchor feeds: 0 (`capture`), the last id that has a markov_w1 row and that the target
    head can propose (`inside`: min(V, W) - 1), the first id without a row (`outside`: V, only where the target head
    can propose it, V < W); None where the anchor cannot happen."""
    return {"capture": 0, "inside": min(v, w) - 1, "outside": v if v < w else None}[anchor]


def relations(case: Callable[[int, int, int], Any], tree: Path) -> dict[str, Any]:
    """relation -> anchor -> outcome of `case(v, w, previous token)`, each at both sizes (which must agree)."""
    table: dict[str, Any] = {}
    for relation in RELATIONS:
        table[relation] = {}
        for anchor in ANCHORS:
            seen = []
            for w, v in SIZES[relation]:
                token = previous_token(anchor, v, w)
                seen.append(None if token is None else _outcome(lambda: case(v, w, token), tree, v, w))  # noqa: B023
            if seen[0] != seen[1]:
                raise SystemExit(f"probe_first_step: {relation} {anchor}: the two sizes disagree: {seen}")
            table[relation][anchor] = seen[0]
    return table


def observe_dspark(tree: Path) -> dict[str, Any] | None:
    """head type -> relation -> anchor -> outcome of the Markov step."""
    found = release_step(tree)
    if found is None:
        return None
    build, crop, step, ran = found

    def case(head_type: str) -> Callable[[int, int, int], Any]:
        def run(v: int, w: int, token: int) -> Any:
            head = build(head_type, v)
            logits = crop(torch.randn(ROWS * GAMMA, w + 8), w).view(ROWS, GAMMA, w)
            ids = torch.full((ROWS,), token, dtype=torch.long)
            return step(head, logits, ids, torch.randn(ROWS, GAMMA, HIDDEN))
        return run
    return {"ran": ran, "steps": {head_type: relations(case(head_type), tree) for head_type in HEAD_TYPES}}


def observe_dflash2(tree: Path) -> dict[str, Any] | None:
    """relation -> anchor -> outcome of models/dflash.py CandidateSelector.build_lattice (0.5.19+): codebooks of V
    rows looked up with the candidate ids the target head's top-k gives (and the verified anchor token).
    torch.compile around its `_score_edges` is left off (`is_npu` answered True): the eager function it wraps runs."""
    selector = release_selector(tree)
    if selector is None:
        return None

    def run(v: int, w: int, token: int) -> Any:
        head = selector(hidden_size=HIDDEN, vocab_size=v, state_rank=RANK, top_k=2)
        ids = torch.full((ROWS, GAMMA, 2), token, dtype=torch.long)
        return head.build_lattice(candidate_ids=ids, unary_logits=torch.randn(ROWS, GAMMA, 2),
                                  hidden_states=torch.randn(ROWS, GAMMA, HIDDEN),
                                  anchor_token_ids=torch.full((ROWS,), token, dtype=torch.long))
    return {"ran": ["CandidateSelector.build_lattice"], "steps": relations(run, tree)}


def record(version: str, tree: Path) -> dict[str, Any] | None:
    seen = {name: found for name, observe in (("dspark", observe_dspark), ("dflash2", observe_dflash2),
                                              ("eagle3", lambda t: observe_eagle3(t, _frame)))
            if (found := observe(tree)) is not None}
    if not seen:
        return None
    return {"schema": SCHEMA, "runtime": "sglang", "release": version,
            "generated_by": f"python tools/probe_first_step.py {version}", "torch": torch.__version__.split("+")[0],
            **seen}


def text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def run_release(version: str, check: bool) -> int:
    tree = fetch_sources(version, DEFAULT_CACHE)
    doc = record(version, tree)
    path = data_folder("sglang", version) / FILE
    want = text(doc) if doc is not None else None
    have = path.read_text(encoding="utf-8") if path.is_file() else None
    if check:
        if want != have:
            print(f"probe_first_step: {path.name} of SGLang {version} differs from what the release does",
                  file=sys.stderr)
            return 1
        print(f"probe_first_step: {path.name} of SGLang {version} is what SGLang {version} does")
        return 0
    if want is None:
        path.unlink(missing_ok=True)
        print(f"probe_first_step: SGLang {version} has no draft step this probe runs")
    elif want != have:
        path.write_text(want, encoding="utf-8")
        print(f"probe_first_step: wrote {path.relative_to(ROOT)}")
    return 0


def has_step(version: str) -> bool:
    """Whether the release registers a DSpark or an EAGLE-3 draft (its generated release.json): the releases worth
    fetching (an EAGLE-3 release older than LogitsProcessor._copy_logits_to_buffer, 0.5.12, records nothing)."""
    path = data_folder("sglang", version) / RELEASE_FILE
    names = json.loads(path.read_text(encoding="utf-8"))["architectures"] if path.is_file() else []
    return "Qwen3DSparkModel" in names or "LlamaForCausalLMEagle3" in names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", help="an SGLang release, or 'all'")
    parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    args = parser.parse_args(argv)
    versions = [v for v in SGLANG_RELEASES if has_step(v)] if args.version == "all" else [args.version]
    return max((run_release(v, args.check) for v in versions), default=0)


if __name__ == "__main__":
    sys.exit(main())
