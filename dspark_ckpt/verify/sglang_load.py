"""Emulate one SGLang release's draft load with real tensors, then run its first draft step's vocab-side ops.

The start-up and worker phases read configuration only and are check's own (runtimes/sglang_eval.py). Here the
weights go through SGLang's loaders (VocabParallelEmbedding's row assert with its message, default_weight_loader)
in checkpoint order, names SGLang has no parameter for are dropped, the target's head and embedding are attached
as the worker attaches them, and the first step runs on CPU: hot_token_id indexing for EAGLE-3, the Markov bias
added to the target head's logits for DSpark, the selector codebook lookup for DFlash2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.records import DraftFacts, Issue
from dspark_ckpt.runtimes.sglang_columns import Loader, Width
from dspark_ckpt.runtimes.sglang_config import stacked_layer_key
from dspark_ckpt.runtimes.sglang_eval import (
    Row,
    Stop,
    domino_load,
    dspark_silent,
    eagle3_head,
    eagle3_silent,
    eagle3_width,
    head_width,
    markov_unknown,
    own_embed,
    row,
    selector_index,
    shared_silent,
    short_d2t,
    startup_issue,
    worker_issue,
)
from dspark_ckpt.verify.load_state import EMBED, LM_HEAD, LoadFailure, LoadState
from dspark_ckpt.verify.runtime_model import Dims, ParamSpec, ParamStore, pad_vocab

SKIPPED = ("embed_tokens.", "lm_head.", "rotary_emb.")  # models/dspark.py _DSPARK_SKIPPED_WEIGHT_PREFIXES
W1, W2 = "markov_head.markov_w1.weight", "markov_head.markov_w2.weight"


def _vocab(name: str, rows: int, dims: Dims, code: FindingCode) -> ParamSpec:
    return ParamSpec(name, (pad_vocab(rows), dims.hidden), dims.dtype, "sglang_vocab", rows, code)


def _load(store: ParamStore, spec: ParamSpec, ckpt: str, tensors: dict[str, torch.Tensor], out: LoadState) -> None:
    try:
        out.params[spec.name] = store.load(spec, ckpt, tensors[ckpt])
    except (AssertionError, RuntimeError) as exc:
        raise LoadFailure(spec.code, str(exc) or type(exc).__name__) from exc


# --- EAGLE-3 ----------------------------------------------------------------------------------------------------

def _eagle3(r: Row, dims: Dims, order: Sequence[str], tensors: dict[str, torch.Tensor], store: ParamStore,
            out: LoadState) -> None:
    """LlamaForCausalLMEagle3.load_weights: d2t -> hot_token_id, t2d skipped, `name` or `model.name` else dropped."""
    rows, shared = eagle3_head(r)
    specs = {EMBED: _vocab(EMBED, dims.vocab, dims, "DSP321")}
    if not r.cfg.tie_word_embeddings:  # tied: lm_head *is* embed_tokens, named_parameters() lists it once
        specs[LM_HEAD] = _vocab(LM_HEAD, rows, dims, "DSP320")
    layer_dropped = False
    for name in order:
        if "d2t" in name:
            out.d2t, out.d2t_loaded = tensors[name].to(torch.long), True  # hot_token_id = d2t + arange(len(d2t))
            continue
        if "t2d" in name:
            continue
        target = name if name in specs else f"model.{name}"
        if target in specs:
            _load(store, specs[target], name, tensors, out)
        elif r.c.midlayer_only and name.startswith(("layers.", "model.layers.")):
            key = stacked_layer_key((name,))
            if r.c.stacked_keyerror and key is not None:  # LlamaForCausalLM.load_weights' unguarded lookup
                raise LoadFailure("DSP346", m.E_STRAY_KEY.format(tensor=key))
            layer_dropped = True  # the module is `midlayer`: no parameter takes this name
    embed_kept = r.cfg.target_hidden_differs
    out.own = {"lm_head": LM_HEAD in out.params, "embed_tokens": EMBED in out.params}
    out.embed_tokens = "target" if not embed_kept else "own" if EMBED in out.params else "uninitialised"
    if shared or (r.cfg.tie_word_embeddings and not embed_kept):
        out.lm_head = "target"
    elif r.cfg.tie_word_embeddings:
        out.lm_head = out.embed_tokens
    else:
        out.lm_head = "own" if LM_HEAD in out.params else "uninitialised"
    out.head_rows = eagle3_width(r)
    out.sglang_facts = {"layer_dropped": layer_dropped}


def _eagle3_step(r: Row, out: LoadState, device: torch.device) -> Issue | None:
    f = r.f
    if r.cfg.tie_word_embeddings and f.draft_vocab_config == "null" and r.c.null_crop_fails:
        logits = torch.zeros((1, f.vocab_size))
        vocab_size: int | None = None  # LogitsProcessor(config_) with config_.vocab_size = draft_vocab_size
        try:
            _ = logits.shape[-1] > vocab_size  # type: ignore[operator]
        except TypeError as exc:
            return Issue("DSP342", str(exc))
    width = out.head_rows
    if out.d2t is not None:
        hot = out.d2t.cpu() + torch.arange(out.d2t.numel())  # indexed on the host: a CUDA assert would poison it
        try:
            hot[torch.arange(width)]
        except IndexError as exc:
            return short_d2t(r.k, out.d2t.numel(), width, observed=str(exc))
    return None


def _eagle3_silent(r: Row, out: LoadState) -> list[Issue]:
    return eagle3_silent(r, own_head_loaded=LM_HEAD in out.params, embed_loaded=EMBED in out.params,
                         layer_dropped=bool(out.sglang_facts.get("layer_dropped")), d2t_loaded=out.d2t_loaded,
                         width=out.head_rows)


# --- DSpark, DFlash, DFlash2 ------------------------------------------------------------------------------------

def _domino(r: Row, before: str | None = None) -> None:
    try:
        domino_load(r, before)
    except Stop as stop:
        raise LoadFailure(stop.issue.code, stop.issue.text) from stop


def _shared_modules(r: Row, dims: Dims, order: Sequence[str], tensors: dict[str, torch.Tensor], store: ParamStore,
                    out: LoadState) -> list[str]:
    """The backbone bucket's vocab side: a Nemotron-3.5 draft's own embed_tokens; the rest are ignored here.
    Returns the markov_head.* names, in order."""
    markov = []
    for name in order:
        bare = name.removeprefix("model.")
        if own_embed(r) and bare == "embed_tokens.weight":
            _domino(r, before=name)
            _load(store, _vocab(EMBED, dims.vocab, dims, "DSP321"), name, tensors, out)
        elif name.startswith("markov_head."):
            markov.append(name)
    _domino(r)  # Domino projector names and shapes (0.5.20+), as check reads them from the same headers
    out.own = {"lm_head": any("lm_head" in n for n in order), "embed_tokens": any("embed_tokens" in n for n in order)}
    out.lm_head = "target"
    out.embed_tokens = ("own" if EMBED in out.params else "uninitialised") if own_embed(r) else "target"
    out.head_rows = head_width(r.f)
    return markov


def _dspark(r: Row, dims: Dims, order: Sequence[str], tensors: dict[str, torch.Tensor], store: ParamStore,
            out: LoadState) -> None:
    """DSparkDraftMixin.load_weights: the backbone, then the markov bucket (default_weight_loader into [V, r])."""
    markov = _shared_modules(r, dims, order, tensors, store, out)
    rank = r.cfg.markov_rank_top
    specs = {W1: ParamSpec(W1, (dims.vocab, rank), dims.dtype, "default", None, "DSP322"),
             W2: ParamSpec(W2, (dims.vocab, rank), dims.dtype, "default", None, "DSP323")}
    for name in sorted(markov):
        if (unknown := markov_unknown(r, name)) is not None:
            raise LoadFailure(unknown.code, unknown.text)
        if name in specs:
            _load(store, specs[name], name, tensors, out)


def _dspark_step(r: Row, out: LoadState, device: torch.device) -> Issue | None:
    """The first Markov step: base logits from the target head (W columns) plus the bias w2 @ w1[prev] (V)."""
    v, w, rank = r.f.vocab_size, head_width(r.f), r.cfg.markov_rank_top
    w1 = out.params.get(W1, torch.zeros((v, rank))).cpu().float()  # a missing factor keeps nn init: same shape
    w2 = out.params.get(W2, torch.zeros((v, rank))).cpu().float()
    bias = w1[torch.zeros(1, dtype=torch.long)] @ w2.T  # the capture's previous token: 0
    base = torch.zeros((1, w))
    if r.c.width is Width.KERNEL:  # markov_sample.py: `assert bias.shape[1] <= base_logits.shape[1]`, then masked
        if bias.shape[1] > base.shape[1]:
            return Issue("DSP340", r.k.messages.width)
    else:
        try:
            base + bias
        except RuntimeError as exc:
            return Issue("DSP340", str(exc))
    last = min(r.f.target_vocab_size, w) - 1
    try:  # then a previous token the target proposed, up to min(T, W) - 1 (models/dspark.py get_prev_embeddings)
        torch.nn.functional.embedding(torch.tensor([last]), w1)
    except IndexError as exc:
        return Issue("DSP340", m.E_DSPARK_LOOKUP.format(v=v, last=last, observed=str(exc)), verbatim=False)
    return None


def _dspark_silent(r: Row, out: LoadState) -> list[Issue]:
    missing = [n.split(".")[1] for n in (W1, W2) if n not in out.params]
    return dspark_silent(r, markov_missing=missing, head_shipped=out.own.get("lm_head", False),
                         embed_shipped=out.own.get("embed_tokens", False), embed_loaded=EMBED in out.params)


def _dflash(r: Row, dims: Dims, order: Sequence[str], tensors: dict[str, torch.Tensor], store: ParamStore,
            out: LoadState) -> None:
    _shared_modules(r, dims, order, tensors, store, out)


def _dflash_step(r: Row, out: LoadState, device: torch.device) -> Issue | None:
    """DFlash2: candidate ids come from the target head (< W) and index codebooks of V rows."""
    if r.c.loader is not Loader.DFLASH2:
        return None
    v, w = r.f.vocab_size, head_width(r.f)
    # one column: the rows decide which id has one, and a config's selector_rank (2**40, 2**63) is no allocation
    codebook = torch.zeros((v, 1))
    try:  # the first candidate id without a row, where the head proposes one (as tools/probe_first_step.py feeds it)
        codebook[torch.tensor([min(v, w - 1)])]
    except IndexError as exc:
        return selector_index(r.k, v, w, observed=str(exc))
    return None


def _dflash_silent(r: Row, out: LoadState) -> list[Issue]:
    return shared_silent(r, head_shipped=out.own.get("lm_head", False),
                         embed_shipped=out.own.get("embed_tokens", False), embed_loaded=EMBED in out.params)


Load = Callable[[Row, Dims, Sequence[str], dict[str, torch.Tensor], ParamStore, LoadState], None]
_TORCH: dict[Loader, tuple[Load, Callable[[Row, LoadState, torch.device], Issue | None],
                           Callable[[Row, LoadState], list[Issue]]]] = {
    Loader.EAGLE3: (_eagle3, _eagle3_step, _eagle3_silent),
    Loader.DSPARK: (_dspark, _dspark_step, _dspark_silent),
    Loader.DFLASH: (_dflash, _dflash_step, _dflash_silent),
    Loader.DFLASH2: (_dflash, _dflash_step, _dflash_silent),
}


def run_sglang(k: Contract, version: str, facts: DraftFacts, dims: Dims, order: Sequence[str],
               tensors: dict[str, torch.Tensor], store: ParamStore) -> LoadState:
    """Start-up (shared with check), the torch load, the worker (shared), then the first step with torch."""
    r = row(k, facts)
    out = LoadState(k, version)
    out.error = startup_issue(r)
    if out.error is not None:
        return out
    load, step, silent = _TORCH[r.c.loader]
    try:
        load(r, dims, order, tensors, store, out)
    except LoadFailure as failure:
        out.error = Issue(failure.code, failure.text)
        return out
    out.error = worker_issue(r)
    if out.error is not None:
        return out
    out.first_step = step(r, out, store.device)
    out.silent = [] if out.first_step is not None else silent(r, out)
    return out
