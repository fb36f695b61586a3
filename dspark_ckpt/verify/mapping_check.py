"""Run the runtime's map_draft_to_target(arange(width)) on the device and check the result, vectorised."""

from __future__ import annotations

import torch

from dspark_ckpt.output.verify_records import MappingCheck


def map_draft_to_target(draft_ids: torch.Tensor, d2t: torch.Tensor | None) -> torch.Tensor:
    """As the runtime does it: the ids themselves without a parameter, else ids + d2t[ids]."""
    return draft_ids if d2t is None else draft_ids + d2t[draft_ids]


def _first(mask: torch.Tensor) -> torch.Tensor:
    """Index of the first True (or -1), computed on the device without a sync."""
    n = mask.numel()
    if n == 0:
        return torch.tensor(-1, device=mask.device)
    idx = torch.where(mask, torch.arange(n, device=mask.device), n).min()
    return torch.where(idx == n, -1, idx)


def _t2d_agrees(t2d: torch.Tensor, mapped: torch.Tensor, target_vocab: int) -> torch.Tensor:
    """nonzero(t2d) == mapped, element for element (nonzero syncs once: its size depends on the data)."""
    if t2d.dim() != 1 or t2d.shape[0] != target_vocab:
        return torch.tensor(False, device=mapped.device)
    marked = torch.nonzero(t2d.to(torch.bool)).squeeze(1)
    if marked.numel() != mapped.numel():
        return torch.tensor(False, device=mapped.device)
    return (marked == mapped).all()


def check_mapping(d2t: torch.Tensor | None, *, width: int, target_vocab: int, pruned: bool, loaded: bool,
                  t2d: torch.Tensor | None, runtimes: tuple[str, ...]) -> MappingCheck:
    """One device pass; the scalars come back to the host in a single transfer."""
    device = d2t.device if d2t is not None else (t2d.device if t2d is not None else torch.device("cpu"))
    draft_ids = torch.arange(width, device=device)
    mapped = map_draft_to_target(draft_ids, d2t)  # width == len(d2t) whenever the parameter exists
    outside = (mapped < 0) | (mapped >= target_vocab)
    first_out = _first(outside)
    steps = mapped[1:] <= mapped[:-1]
    zero = (d2t == 0).all() if d2t is not None else torch.tensor(True, device=device)
    agrees = _t2d_agrees(t2d, mapped, target_vocab) if t2d is not None else torch.tensor(True, device=device)
    n_out, i_out, i_step, all_zero, ok_t2d = torch.stack([
        outside.sum(), first_out, _first(steps), zero.long(), agrees.long()]).tolist()
    target_at = int(mapped[i_out]) if i_out >= 0 else None
    source = "identity (no parameter)" if d2t is None else "d2t" if loaded else "all-zero parameter (no d2t loaded)"
    return MappingCheck(
        runtimes=runtimes, source=source, width=width, target_vocab_size=target_vocab, out_of_range=int(n_out),
        first_out_of_range=(int(i_out), target_at) if target_at is not None else None,
        strictly_increasing=i_step < 0, first_not_increasing=int(i_step) + 1 if i_step >= 0 else None,
        t2d_consistent=bool(ok_t2d) if t2d is not None else None,
        all_zero_identity_on_pruned=pruned and bool(all_zero),
    )
