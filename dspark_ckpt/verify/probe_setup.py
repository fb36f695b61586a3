"""Pick the loaded lm_head to probe (the first runtime that loads the draft's own head) and run both probe sources."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from dspark_ckpt.model.families import Family, traits
from dspark_ckpt.output.verify_records import MappingCheck, ProbeReport, ProbeStats
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.verify.budget import planned_count
from dspark_ckpt.verify.load_state import EMBED, LM_HEAD, LoadState
from dspark_ckpt.verify.mapping_check import map_draft_to_target
from dspark_ckpt.verify.probe import FLOAT_DTYPES, Head, batch_size, probe_source
from dspark_ckpt.verify.runtime_model import Dims
from dspark_ckpt.verify.torch_loader import NORM_NAMES, VerifyOptions

MARKOV_W1, MARKOV_W2 = "model.markov_head.markov_w1.weight", "model.markov_head.markov_w2.weight"
CALIBRATION_PROBES = 128  # the timed batch that sizes a time budget (its statistics are not kept)
PAIRING = ("embed_tokens probes add the bias of the probed token itself (markov_w1[token]); Gaussian probes add "
           "that of a uniformly drawn input token in [0, min(V, T))")


def _illegal(out: LoadState, target_vocab: int) -> tuple[torch.Tensor, int | None]:
    """Rows whose mapped id falls outside [0, T), and the suffix start when they are exactly [s, rows)."""
    rows = out.head_rows
    device = out.params[LM_HEAD].device
    ids = torch.arange(rows, device=device)
    mapped = map_draft_to_target(ids, out.d2t if out.d2t is not None and out.d2t.numel() == rows else None)
    illegal = (mapped < 0) | (mapped >= target_vocab)
    count = int(illegal.sum())
    if count and not bool(illegal[: rows - count].any()):
        return illegal, rows - count
    return illegal, None


def _head_source(tensors: dict[str, torch.Tensor]) -> tuple[str, torch.Tensor] | None:
    named = sorted(n for n in tensors if "lm_head" in n and n.endswith("weight"))
    return (named[0], tensors[named[0]]) if named else None


def _quantised_reason(tensors: dict[str, torch.Tensor]) -> str | None:
    found = _head_source(tensors)
    if found is None or found[1].dtype in FLOAT_DTYPES:
        return None
    companions = sorted(n for n in tensors if "lm_head" in n and n != found[0])
    extra = f" with {', '.join(companions)}" if companions else ""
    return (f"{found[0]} is stored as {str(found[1].dtype).removeprefix('torch.')}{extra}: a quantised head is "
            "reported, not dequantised by guesswork")


def _head(out: LoadState, tensors: dict[str, torch.Tensor], raw: dict[str, Any], family: Family,
          target_vocab: int) -> Head:
    norm = next((tensors[n] for n in NORM_NAMES if n in tensors), None)
    illegal, suffix = _illegal(out, target_vocab)
    markov = (out.params[MARKOV_W1], out.params[MARKOV_W2]) if MARKOV_W1 in out.params and \
        MARKOV_W2 in out.params else None
    eps = raw.get("rms_norm_eps")
    scale = raw.get("logit_scale")
    return Head(weight=out.params[LM_HEAD], rows=out.head_rows, illegal=illegal, suffix=suffix, norm_weight=norm,
                norm_offset=traits(family).norm_offset,
                eps=float(eps) if isinstance(eps, (int, float)) else 1e-6,
                scale=float(scale) if isinstance(scale, (int, float)) else 1.0, markov=markov)


def run_probe(outcomes: list[LoadState], mappings: dict[int, MappingCheck], tensors: dict[str, torch.Tensor],
              raw: dict[str, Any], family: Family, dims: Dims, options: VerifyOptions) -> ProbeReport:
    ref = next((i for i, o in enumerate(outcomes) if o.error is None and o.lm_head == "own"), None)
    if ref is None:
        return ProbeReport(False, "no selected runtime loads the draft with its own lm_head: nothing to probe")
    out = outcomes[ref]
    name = str(RuntimeVersion(out.contract.runtime, out.version))
    reason = _quantised_reason(tensors)
    if reason is not None:
        return ProbeReport(False, reason, runtime=name)
    head = _head(out, tensors, raw, family, dims.target_vocab)
    illegal_rows = int(head.illegal.sum())
    if illegal_rows == 0 or illegal_rows == head.rows:
        why = "every lm_head row maps into [0, T)" if illegal_rows == 0 else "no lm_head row maps into [0, T)"
        return ProbeReport(False, f"{why}: nothing to compare", runtime=name, illegal_rows=illegal_rows)
    embed = out.params.get(EMBED)
    run = partial(probe_source, head, legal_inputs=min(dims.vocab, dims.target_vocab), k=options.top_k,
                  batch=batch_size(head.rows, head.weight.device))
    total, why = _planned(head, options, run)
    n_embed = total // 2 if embed is not None else 0
    options.progress.phase("probing padded rows", total=total)
    advance = options.progress.advance
    stats = run("embed_tokens", n_embed, embed=embed, seed=options.seed, advance=advance) if n_embed else ()
    stats += run("gaussian", total - n_embed, embed=None, seed=options.seed + 1, advance=advance)
    return ProbeReport(True, runtime=name, illegal_rows=illegal_rows,
                       lm_head_dtype=str(head.weight.dtype).removeprefix("torch."), logit_scale=head.scale,
                       seed=options.seed, markov_pairing=PAIRING if head.markov is not None else None, stats=stats,
                       probes=total, probes_why=why)


def _planned(head: Head, options: VerifyOptions, run: Callable[..., tuple[ProbeStats, ...]]) -> tuple[int, str]:
    """The probe count: as asked, or what fits the time budget, timed on one Gaussian batch of this very head."""
    budget = options.probe_budget
    device = head.weight.device
    if budget.count is not None or (budget.seconds is None and device.type == "cuda"):
        return planned_count(budget, device_type=device.type, seconds_per_probe=None)
    sample = max(2, min(batch_size(head.rows, device), CALIBRATION_PROBES))
    options.progress.phase("timing one probe batch")
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    run("gaussian", sample, embed=None, seed=options.seed + 2)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    spent = time.perf_counter() - start
    return planned_count(budget, device_type=device.type, seconds_per_probe=spent / sample, spent=spent)
