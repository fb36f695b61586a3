"""Padded-row risk: push probe hidden states through the loaded lm_head (and Markov bias) and count illegal wins."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from dspark_ckpt.output.verify_records import ProbeStats

FLOAT_DTYPES = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})


@dataclass(frozen=True, slots=True)
class Head:
    """The sampler's view of the draft: lm_head rows [0, rows), which of them map outside [0, T), and the norm."""

    weight: torch.Tensor  # [>= rows, H], as loaded (padding rows included)
    rows: int
    illegal: torch.Tensor  # bool [rows]
    suffix: int | None  # when the illegal rows are exactly [suffix, rows) (a padded draft): slice, don't mask
    norm_weight: torch.Tensor | None
    norm_offset: float  # Gemma-style RMSNorm scales by (1 + weight)
    eps: float
    scale: float  # logit_scale
    markov: tuple[torch.Tensor, torch.Tensor] | None  # (markov_w1 [V, r], markov_w2 [>= rows, r])


@dataclass(slots=True)
class _Acc:
    """Running statistics, kept on the device so a probe costs no host sync per batch."""

    argmax: torch.Tensor
    any_topk: torch.Tensor
    slots: torch.Tensor
    best: torch.Tensor  # [3]: margin, illegal row, probe index
    k: int
    tied: torch.Tensor  # probes whose logits all tie

    @classmethod
    def new(cls, device: torch.device, k: int) -> _Acc:
        zero = torch.zeros((), dtype=torch.long, device=device)
        best = torch.tensor([float("-inf"), -1.0, -1.0], dtype=torch.float64, device=device)
        return cls(zero.clone(), zero.clone(), zero.clone(), best, k, zero.clone())


def rms_norm(x: torch.Tensor, head: Head) -> torch.Tensor:
    """The final norm before lm_head (Qwen3/Llama RMSNorm, computed in float32 like vLLM's)."""
    x = x.float()
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + head.eps)
    if head.norm_weight is not None:
        x = x * (head.norm_weight.float() + head.norm_offset)
    return x.to(head.weight.dtype)


def _best(logits: torch.Tensor, head: Head) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per probe: best legal logit, best illegal logit and its row (max is exact in any float dtype)."""
    s = head.suffix
    if s is not None:
        illegal_best, row = logits[:, s:].max(dim=1)
        return logits[:, :s].max(dim=1).values.float(), illegal_best.float(), row + s
    values = logits.float()
    illegal_best, row = values.masked_fill(~head.illegal, float("-inf")).max(dim=1)
    return values.masked_fill(head.illegal, float("-inf")).max(dim=1).values, illegal_best, row


def _accumulate(acc: _Acc, logits: torch.Tensor, head: Head, probe_ids: torch.Tensor) -> None:
    illegal = head.illegal
    acc.argmax += illegal[logits.argmax(dim=1)].sum()
    acc.tied += (logits.amax(dim=1) == logits.amin(dim=1)).sum()
    top = illegal[logits.topk(acc.k, dim=1).indices]
    acc.any_topk += top.any(dim=1).sum()
    acc.slots += top.sum()
    legal_best, illegal_best, illegal_row = _best(logits, head)
    margin = illegal_best - legal_best
    i = margin.argmax()
    candidate = torch.stack([margin[i].double(), illegal_row[i].double(), probe_ids[i].double()])
    acc.best = torch.where(candidate[0] > acc.best[0], candidate, acc.best)


def _stats(acc: _Acc, source: str, logits: str, probes: int) -> ProbeStats:
    argmax, any_topk, slots, tied = (int(v) for v in torch.stack([acc.argmax, acc.any_topk, acc.slots,
                                                                   acc.tied]).tolist())
    margin, row, probe = acc.best.tolist()
    found = probes > 0 and margin != float("-inf")
    return ProbeStats(source, logits, probes, acc.k, argmax, any_topk, slots, margin if found else None,
                      int(row) if found else None, int(probe) if found else None, tied)


def _batches(source: str, n: int, head: Head, legal_inputs: int, embed: torch.Tensor | None,
             gen: torch.Generator, batch: int) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(probe ids, hidden states, previous-token ids) batch by batch, from one seeded generator."""
    device = head.weight.device
    hidden = head.weight.shape[1]
    if source == "embed_tokens":
        assert embed is not None
        table = embed  # narrowed once here: the loop below cannot see the assert
        ids = torch.randperm(legal_inputs, generator=gen, device=device)[:n] if n <= legal_inputs else \
            torch.randint(legal_inputs, (n,), generator=gen, device=device)
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        if source == "embed_tokens":
            rows = ids[start:stop]
            yield rows, table[rows], rows  # the Markov bias of the token whose embedding is the probe
        else:
            x = torch.randn((stop - start, hidden), generator=gen, device=device, dtype=torch.float32)
            prev = torch.randint(legal_inputs, (stop - start,), generator=gen, device=device)
            yield torch.arange(start, stop, device=device), x, prev


def probe_source(head: Head, source: str, n: int, *, embed: torch.Tensor | None, legal_inputs: int, seed: int,
                 k: int, batch: int, advance: Callable[[int], None] | None = None) -> tuple[ProbeStats, ...]:
    """Stats for logits = scale * (h @ lm_head.T), and with the Markov bias scale * (w1[prev] @ w2.T) added.

    `advance(probes)` is called after each batch (a progress bar); it never forces a device sync.
    """
    device = head.weight.device
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    k = max(1, min(k, head.rows))
    plain, with_markov = _Acc.new(device, k), _Acc.new(device, k)
    weight = head.weight[: head.rows]
    with torch.inference_mode():
        for probe_ids, x, prev in _batches(source, n, head, legal_inputs, embed, gen, batch):
            logits = (rms_norm(x, head) @ weight.T) * head.scale
            _accumulate(plain, logits, head, probe_ids)
            if head.markov is not None:
                w1, w2 = head.markov
                logits += (w1[prev].to(w2.dtype) @ w2[: head.rows].T).to(logits.dtype) * head.scale
                _accumulate(with_markov, logits, head, probe_ids)
            if advance is not None:
                advance(int(probe_ids.shape[0]))
    found = [_stats(plain, source, "lm_head", n)]
    if head.markov is not None:
        found.append(_stats(with_markov, source, "lm_head + markov", n))
    return tuple(found)


def batch_size(rows: int, device: torch.device) -> int:
    """Probes per batch so the [B, rows] logits (plus float32 copies) stay inside a fixed budget."""
    budget = (2 << 30) if device.type == "cuda" else (256 << 20)
    return max(1, min(8192, budget // max(1, rows * 12)))
