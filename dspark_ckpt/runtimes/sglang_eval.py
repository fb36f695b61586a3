"""Pure: evaluate one SGLang contract row against a draft's facts, in the order the release's code runs.

Each load path runs in phases: start-up (registration in model_loader/utils.py, the config parsers, the model's
`__init__`), `load_weights` (names in sorted order, unknown names ignored), the worker (sharing, mask checks) and
the first draft step (or the CUDA-graph capture that runs it at start-up): a failure there is
`Verdict.first_step`, the draft has loaded. verify (verify/sglang_load.py) runs the start-up and worker phases as
they are (they read configuration only) and replaces the load and first-step phases by torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NoReturn

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.first_step import (
    StepFailure,
    dflash2_failure,
    dspark_failure,
    eagle3_failure,
    eagle3_sizes,
    recorded,
)
from dspark_ckpt.runtimes.parameter_pass import unwritten_heads
from dspark_ckpt.runtimes.records import DraftFacts, Issue, Verdict
from dspark_ckpt.runtimes.release_model import built_model
from dspark_ckpt.runtimes.sglang_columns import Loader, SglangColumns, Width
from dspark_ckpt.runtimes.sglang_config import (
    HEAD_TYPES,
    MARKOV_PARAMS,
    SPECULATORS_UNREAD,
    SglangConfig,
    config_fields,
    draft_vocab_config,
)
from dspark_ckpt.runtimes.versions import SGLANG_RELEASES


@dataclass(frozen=True, slots=True)
class Row:
    """One row and the draft it is evaluated for: what every phase reads."""

    k: Contract
    c: SglangColumns
    f: DraftFacts
    cfg: SglangConfig
    version: str | None = None  # the release judged: its recorded first draft step (None: the row's last release)


class Stop(Exception):
    """The error a phase raises: the runtime stops there."""

    def __init__(self, issue: Issue) -> None:
        super().__init__(issue.text)
        self.issue = issue


def fail(code: FindingCode, text: str, verbatim: bool = True, tensor: str | None = None) -> NoReturn:
    raise Stop(Issue(code, text, verbatim, tensor))


def head_code(d: int, t: int) -> FindingCode:
    return "DSP301" if d < t else "DSP306" if d > t else "DSP315"


def head_width(f: DraftFacts) -> int:
    """The target lm_head's rows (org_vocab_size): what DSpark's base logits are cropped to."""
    return f.target_head_rows or f.target_vocab_size


def config_view(k: Contract, f: DraftFacts) -> SglangConfig:
    """Facts built without a config (the pure tests) name the row's own architecture: only the vocab facts differ."""
    return f.sglang or SglangConfig(architecture=k.architectures[0] if k.architectures else None)


def refreshed(f: DraftFacts) -> DraftFacts:
    """The facts as config.json now states them: a config-only repair (fix's simulation) edits raw_config, and
    SGLang's parsers read it afresh."""
    if f.raw_config is None or f.sglang is None:
        return f
    view = replace(f.sglang, **config_fields(f.raw_config))
    return replace(f, draft_vocab_config=draft_vocab_config(f.raw_config), sglang=view)


def row(k: Contract, f: DraftFacts, version: str | None = None) -> Row:
    assert k.sglang is not None
    f = refreshed(f)
    return Row(k, k.sglang, f, config_view(k, f), version)


def registration(k: Contract, cfg: SglangConfig) -> Issue | None:
    """get_model_architecture: an architecture no EntryClass of this release names cannot be resolved."""
    arch = cfg.architecture
    if not k.supported or (k.architectures and arch not in k.architectures):
        if arch is None:
            return Issue("DSP309", "config.json names no architecture: SGLang cannot resolve a model class",
                         verbatim=False)
        return Issue("DSP309", k.messages.unregistered.format(arch=arch), k.messages.unregistered_verbatim)
    if cfg.speculators and not k.reads_speculators:
        return Issue("DSP348", SPECULATORS_UNREAD, verbatim=False)
    return None


def unreadable(f: DraftFacts) -> None:
    if f.unreadable is not None:  # safetensors itself refuses the file before any model code runs
        code, message = f.unreadable
        fail(code, f"the checkpoint's weights cannot be read: {message}", verbatim=False)


def rows_check(r: Row, code: FindingCode, leaf: str, rows: int | None, expected: int) -> None:
    """VocabParallelEmbedding.weight_loader: the row count asserted, with its f-string message, where the release's
    generated record does not build the head (where it does, the record judges its shape: runtimes/landing.py)."""
    if rows is not None and rows != expected and not record_builds(r, leaf):
        fail(code, r.k.messages.rows.format(expected=expected, got=rows))


def record_builds(r: Row, leaf: str) -> bool:
    """Whether the generated record of the class this release builds for the draft has the parameter `leaf`."""
    if r.version is None:
        return False
    built = next((b for b in r.f.builds if (b.runtime, b.version) == ("sglang", r.version)), None)
    model = built_model("sglang", r.version, built.architecture if built is not None else r.cfg.architecture)
    return model is not None and any(p == leaf or p.endswith("." + leaf) for p in model.parameters)


# --- EAGLE-3 (models/llama_eagle3.py) ---------------------------------------------------------------------------

def eagle3_head(r: Row) -> tuple[int, bool]:
    """(rows of the lm_head __init__ builds, whether the worker replaces it by the target's head)."""
    f, cfg = r.f, r.cfg
    null = f.draft_vocab_config == "null"
    if cfg.tie_word_embeddings:
        return f.vocab_size, False
    return (f.vocab_size if null else f.draft_vocab_size), null and r.c.null_shares_target


def eagle3_width(r: Row) -> int:
    """How many draft ids the sampler can pick: the head's rows (after sharing), cropped by the logits processor."""
    f, cfg = r.f, r.cfg
    rows, shared = eagle3_head(r)
    if shared or (cfg.tie_word_embeddings and not cfg.target_hidden_differs):
        rows = f.target_head_rows or f.target_vocab_size
    if r.c.crop == "V":
        return min(rows, f.vocab_size)
    return rows if f.draft_vocab_config == "null" and cfg.tie_word_embeddings else min(rows, f.draft_vocab_size)


def _eagle3_startup(r: Row) -> None:
    k, c, f, cfg = r.k, r.c, r.f, r.cfg
    tied, how = cfg.tie_word_embeddings, f.draft_vocab_config
    if c.one_layer and cfg.num_hidden_layers != 1:  # LlamaConfig's default is 32 layers
        fail("DSP341", k.messages.layers)
    config_class = cfg.config_class
    if how == "absent" and (not tied or c.draft_vocab_always_read):
        fail("DSP342", k.messages.no_draft_vocab.format(cls=config_class or f"{cfg.model_type or 'Pretrained'}Config"),
             verbatim=config_class is not None)
    if how == "null" and not tied and not c.null_shares_target:
        fail("DSP342", k.messages.null_draft_vocab)


def _eagle3_load(r: Row) -> None:
    k, f = r.k, r.f
    rows, _ = eagle3_head(r)
    rows_check(r, "DSP321", "embed_tokens.weight", f.embed_rows, f.vocab_size)  # sorts before `lm_head.weight`
    want = f.aux.fc_shape if f.aux is not None else None  # fc.weight sorts between the two: an nn.Linear
    if want is not None and f.fc_shape is not None and tuple(f.fc_shape) != want:
        fail("DSP329", m.E_SGLANG_SHAPE.format(got=list(f.fc_shape), expected=list(want)),
             tensor=f.first_tensor(lambda n: n == "fc.weight"))
    key = r.cfg.stacked_layer_key  # `layers.0.*` sorts between fc and lm_head
    if r.c.stacked_keyerror and key is not None:
        fail("DSP346", m.E_STRAY_KEY.format(tensor=key))
    if not r.cfg.tie_word_embeddings:  # a tied draft's lm_head.weight has no entry in params_dict: dropped
        rows_check(r, "DSP320", "lm_head.weight", f.lm_head_rows, rows)
        if f.lm_head_cols is not None and f.hidden_size is not None and f.lm_head_cols != f.hidden_size \
                and not record_builds(r, "lm_head.weight"):
            fail("DSP320", k.messages.hidden.format(h=f.hidden_size, got=f.lm_head_cols))


def _eagle3_worker(r: Row) -> None:
    """EAGLEWorker.__init__ (0.4.4.post2-0.4.8.post1): `get_hot_token_id()` reads the attribute only a d2t sets."""
    if r.c.d2t_required and not r.f.has_d2t:
        fail("DSP302", r.k.messages.no_hot_token)


def short_d2t(k: Contract, n: int, width: int, observed: str | None = None) -> Issue:
    return Issue("DSP324", f"hot_token_id (d2t + arange(len(d2t)), {n} entries) is indexed with draft ids up to "
                           f"{width - 1}: {observed or k.messages.index.format(i=n, n=n)} (a device-side assert "
                           "on CUDA)", verbatim=False)


def _eagle3_first_step(r: Row) -> Issue | None:
    """The head's logits cropped, the top id mapped through hot_token_id, from the release's recorded execution
    (runtimes/first_step.py `eagle3`, 0.5.12+); modelled where nothing was recorded or the draft keeps its own
    embedding (target_hidden_size != hidden_size: set_embed returns early, which the probe does not vary)."""
    f, cfg = r.f, r.cfg
    listed = r.version in SGLANG_RELEASES  # a listed release the probe did not run (before 0.5.12) is modelled
    steps = recorded(r.version, "eagle3") if listed and r.version else recorded_step(r, "eagle3")
    if steps is None or cfg.target_hidden_differs or f.draft_vocab_config == "absent":
        return modelled_eagle3_first_step(r)
    null = f.draft_vocab_config == "null"
    kind = ("tied" if cfg.tie_word_embeddings else "null" if null else "own") + ("-null" if null and
                                                                                cfg.tie_word_embeddings else "")
    c, rows = f.vocab_size if null else f.draft_vocab_size, f.target_head_rows or f.target_vocab_size
    length = f.d2t_length if f.has_d2t and f.d2t_length is not None else None
    failure = eagle3_failure(steps, kind, c, rows, length)
    if failure is None:
        return None
    words = failure.fill(eagle3_sizes(c, rows, length))
    if failure.stage == "lookup" and length is not None:
        last = int(words.split()[1]) if words.startswith("index ") else eagle3_width(r) - 1
        return short_d2t(r.k, length, last + 1, observed=words)
    return Issue("DSP342" if failure.stage == "crop" else "DSP324", words)


def modelled_eagle3_first_step(r: Row) -> Issue | None:
    f = r.f
    if r.cfg.tie_word_embeddings and f.draft_vocab_config == "null" and r.c.null_crop_fails:
        return Issue("DSP342", r.k.messages.null_crop)
    width = eagle3_width(r)
    if f.has_d2t and f.d2t_length is not None and f.d2t_length < width:
        return short_d2t(r.k, f.d2t_length, width)
    return None


def dropped_heads(r: Row) -> list[Issue]:
    """Head tensors the family's SGLang model has no parameter for: skipped by `if name in params_dict`
    (models/llama_eagle3.py 0.4.9-0.5.23; 0.4.4.post2-0.4.8.post1 log and drop them in LlamaForCausalLM.load_weights;
    models/dflash.py 0.5.11-0.5.23, "Ignore unexpected weights")."""
    heads = r.f.unbuilt_heads(r.k.family)
    if not heads:
        return []
    return [Issue("DSP351", f"{' and '.join(f'{h}.*' for h in heads)} has no parameter in this model: SGLang "
                            "skips the tensors by name, so the draft runs without that head")]


def eagle3_silent(r: Row, *, own_head_loaded: bool, embed_loaded: bool, layer_dropped: bool, d2t_loaded: bool,
                  width: int) -> list[Issue]:
    """What goes wrong without an error, from what the load left (check predicts it, verify observes it)."""
    f, cfg = r.f, r.cfg
    d, t = f.draft_vocab_size, f.target_vocab_size
    tied, kept = cfg.tie_word_embeddings, cfg.target_hidden_differs
    rows, shared = eagle3_head(r)
    found = []
    if shared and own_head_loaded:
        found.append(Issue("DSP307", "draft_vocab_size is null, so the draft's own lm_head is replaced by the "
                                     "target's (load_lm_head_from_target)"))
    if tied and not kept and embed_loaded:
        found.append(Issue("DSP307", "lm_head is tied to embed_tokens, which the target's replaces: the draft "
                                     "proposes from the target's embedding matrix"))
    elif not kept and embed_loaded:
        found.append(Issue("DSP307", "the draft's own embed_tokens is replaced by the target's"))
    if kept and not embed_loaded:
        found.append(Issue("DSP347", "target_hidden_size != hidden_size keeps the draft's embed_tokens, but the "
                                     "checkpoint has none: model.embed_tokens.weight stays uninitialised"))
        if tied:
            found.append(Issue(head_code(d, t), "lm_head is tied to that uninitialised embed_tokens"))
    own_head = not tied and not shared
    if own_head and not own_head_loaded:
        found.append(Issue(head_code(d, t), f"lm_head.weight (ParallelLMHead({rows})) is never loaded and not shared: it "
                                            "stays uninitialised"))
    if layer_dropped:
        found.append(Issue("DSP346", "its decoder layer weights, named layers.0.*, are dropped (this release's "
                                     "module is midlayer): the layer stays uninitialised"))
    if own_head and own_head_loaded and d < t and not d2t_loaded:
        found.append(Issue("DSP302", "no d2t: hot_token_id is None, so draft id i is proposed as target id i "
                                     "(wrong tokens)"))
    if own_head and own_head_loaded and width > t:
        found.append(Issue("DSP305", f"nothing masks ids [{t}, {width}): the draft can propose ids >= {t}"))
    return found + dropped_heads(r)


def _eagle3_silent(r: Row) -> list[Issue]:
    f, cfg = r.f, r.cfg
    return eagle3_silent(r, own_head_loaded=f.has_lm_head, embed_loaded=f.has_embed, d2t_loaded=f.has_d2t,
                         layer_dropped=r.c.midlayer_only and cfg.layers_named and not cfg.midlayer_named,
                         width=eagle3_width(r))


# --- DSpark (models/dspark.py), DFlash and DFlash2 (models/dflash.py) -------------------------------------------

def own_embed(r: Row) -> bool:
    """Nemotron-3.5 NVFP4 drafts keep and load their own embed_tokens (0.5.19+); every other is the target's."""
    return r.c.nemotron_embed and r.cfg.nemotron35


def dspark_parse(r: Row) -> tuple[str | None, int, int | None]:
    p = r.cfg.dspark_merged if r.c.merged_parser else r.cfg.dspark
    return p.error, p.markov_rank, p.mask_token_id


def domino_startup(r: Row) -> None:
    """parse_dflash_draft_config's Domino fields (0.5.20+), parsed for DFlash, DFlash2 and DSpark drafts alike."""
    if r.c.domino and r.cfg.domino_error is not None:
        fail("DSP355", r.cfg.domino_error)


def domino_load(r: Row, before: str | None = None) -> None:
    """DFlashDraftModel.load_weights, Domino names in sorted order (0.5.20+; `before`: stop at that name, for a
    check that fires on a name sorting earlier): refused unless projector_type is "domino" (models/dflash.py
    L923-929 @ 0.5.23). The projector's parameters themselves (shapes, a missing one) are the generated record's:
    the DFlash recipe builds them (tools/sglang_release_model.py), and the one pass judges them (runtimes/landing.py)."""
    if not r.c.domino or r.cfg.domino:
        return
    for name, _ in r.cfg.domino_tensors:
        if before is not None and name >= before:
            return
        fail("DSP352", m.E_DOMINO_UNSET.format(kind=r.cfg.projector_repr))


def domino_worker(r: Row) -> None:
    """dflash_worker_v2.py validate_domino_runtime (0.5.20+, DFlash and DFlash2): V must equal T."""
    f = r.f
    if r.c.domino and r.cfg.domino and f.vocab_size != f.target_vocab_size:
        fail("DSP353", m.E_DOMINO_VOCAB.format(t=f.target_vocab_size, v=f.vocab_size))


def domino_ignored(r: Row) -> list[Issue]:
    """Before 0.5.20 no release knows the Domino names: DFlash's loader skips them as unexpected weights."""
    if r.c.domino or not r.cfg.domino_tensors:
        return []
    return [Issue("DSP354", "prefix_gru.* / embed_proj.* (a Domino projector) have no parameter before SGLang "
                            "0.5.20: the loader skips them, so the draft runs without the projector")]


def embed_name(r: Row) -> str:
    return "model.embed_tokens.weight" if r.f.model_prefixed else "embed_tokens.weight"


def _dspark_startup(r: Row) -> None:
    k, cfg = r.k, r.cfg
    domino_startup(r)
    error, rank, _ = dspark_parse(r)
    if error is not None:  # target ModelRunner init: parse_dspark_draft_config
        fail("DSP344", error)
    if rank <= 0:  # spec_aux_hidden_state.py
        fail("DSP344", k.messages.rank_aux.format(rank=rank))
    if cfg.markov_rank_top <= 0:  # the draft's __init__: build_markov_head reads the top level only
        fail("DSP344", k.messages.rank_head.format(rank=cfg.markov_rank_top))
    if cfg.markov_head_type_top not in HEAD_TYPES:
        fail("DSP344", k.messages.head_type_build.format(kind=cfg.markov_head_type_top))


def markov_unknown(r: Row, name: str) -> Issue | None:
    head, known = MARKOV_PARAMS[r.cfg.markov_head_type_top]
    if name.removeprefix("markov_head.") in known:
        return None
    return Issue("DSP344", r.k.messages.markov_unknown.format(name=name, head=head))


def _dspark_load(r: Row) -> None:
    """The backbone (a Nemotron draft's own embedding), then the markov bucket in sorted-name order, where a name
    the head has no parameter for raises. The factors' shapes and presence are the generated record's, judged in
    the same order (runtimes/landing.py, load_phases.py)."""
    f = r.f
    if own_embed(r):
        domino_load(r, before=embed_name(r))
        rows_check(r, "DSP321", "embed_tokens.weight", f.embed_rows, f.vocab_size)
    domino_load(r)  # the backbone (DFlashDraftModel.load_weights) runs before the markov bucket
    for name in r.cfg.markov_names:
        if (unknown := markov_unknown(r, name)) is not None:
            raise Stop(replace(unknown, tensor=name))


def _dspark_worker(r: Row) -> None:
    _, _, mask = dspark_parse(r)
    if mask is None:  # resolve_runtime_config
        fail("DSP343", r.k.messages.mask_unset)
    bound = mask_bound(r)
    if mask >= bound:
        fail("DSP343", r.k.messages.mask_outside.format(m=mask, t=bound))


def mask_bound(r: Row) -> int:
    """resolve_runtime_config's target_vocab_size: the target's vocab_size (0.5.16-0.5.17); from 0.5.18
    `hf_text_config.padded_vocab_size or vocab_size`, known here only from a --target config that pads (the
    target lm_head's rows)."""
    if r.c.mask_bound_padded and r.f.target_head_rows:
        return r.f.target_head_rows
    return r.f.target_vocab_size


def width_issue(r: Row, v: int, w: int) -> Issue | None:
    """The Markov bias has V columns, the target head's base logits W: the first step fails unless the release
    masks a narrower bias (0.5.22+), which is DSP349 instead."""
    if v == w or (r.c.width is Width.KERNEL and v < w):
        return None
    if r.c.width is Width.ADD:
        return Issue("DSP340", r.k.messages.width.format(w=w, v=v))
    return Issue("DSP340", r.k.messages.width)


def recorded_step(r: Row, step: str = "dspark") -> dict[str, Any] | None:
    """The release's own first draft step as tools/probe_first_step.py recorded it (runtimes/first_step.py); a
    release it has not run (one newer than the table) takes its row's last release's."""
    return (recorded(r.version, step) if r.version else None) or recorded(r.k.last, step)


def step_issue(failure: StepFailure, v: int, w: int, t: int) -> Issue:
    """A recorded failure in the release's words. One that only a previous token without a markov_w1 row raises
    (`outside`: an id >= V the target proposes) is that lookup: said so, with what CUDA makes of it."""
    words = failure.words(v, w)
    if failure.anchor != "outside":
        return Issue("DSP340", words)
    return Issue("DSP340", m.E_DSPARK_LOOKUP.format(v=v, last=min(t, w) - 1, observed=words), verbatim=False)


def _dspark_first_step(r: Row) -> Issue | None:
    """The Markov step over the target head's base logits (V bias columns against W), from the release's recorded
    execution; the modelled width check where nothing was recorded."""
    v, w = r.f.vocab_size, head_width(r.f)
    steps = recorded_step(r)
    if steps is None:
        return width_issue(r, v, w)
    t = r.f.target_vocab_size
    failure = dspark_failure(steps, r.cfg.markov_head_type_top, v, w, t)
    return None if failure is None else step_issue(failure, v, w, t)


def shared_silent(r: Row, *, head_shipped: bool, embed_shipped: bool, embed_loaded: bool) -> list[Issue]:
    """DFlash/DSpark: the target's head (and embedding) are attached; a Nemotron-3.5 draft keeps its embedding."""
    f = r.f
    found = []
    if head_shipped:
        found.append(Issue("DSP307", "the draft's own lm_head is ignored: SGLang drafts with the target's lm_head"))
    if embed_shipped and not own_embed(r):
        found.append(Issue("DSP307", "the draft's own embed_tokens is ignored: SGLang embeds with the target's"))
    if own_embed(r) and not embed_loaded:
        found.append(Issue("DSP347", "a Nemotron-3.5 draft keeps its own embed_tokens, but the checkpoint has none: "
                                     "it stays uninitialised"))
    w, t = head_width(f), f.target_vocab_size
    if w > t:
        found.append(Issue("DSP305", f"the target lm_head has {w} rows: ids [{t}, {w}) can be proposed"))
    return found + dropped_heads(r) + domino_ignored(r)


def dspark_silent(r: Row, *, markov_missing: list[str], **shared: bool) -> list[Issue]:
    found = shared_silent(r, **shared)
    if markov_missing:  # the parameters the loader left unwritten (verify observes them)
        found.append(Issue("DSP345", unwritten_heads([f"markov_head.{n}.weight" for n in markov_missing])))
    v, w = r.f.vocab_size, head_width(r.f)
    if r.c.width is Width.KERNEL and v < w:
        found.append(Issue("DSP349", f"the Markov bias covers ids [0, {v}) only: ids [{v}, {w}) of the target head "
                                     "are masked and never proposed"))
    return found


def _dspark_silent(r: Row) -> list[Issue]:
    """What check predicts from the headers; a Markov factor no tensor fills is the record's (release_verdict.landed)."""
    f = r.f
    return dspark_silent(r, markov_missing=[], head_shipped=f.has_lm_head, embed_shipped=f.has_embed,
                         embed_loaded=f.has_embed)


def _dflash_startup(r: Row) -> None:
    k, cfg = r.k, r.cfg
    if cfg.dflash_error is not None:  # parse_dflash_draft_config at target ModelRunner init
        fail("DSP343", cfg.dflash_error)
    domino_startup(r)  # the Domino block follows the mask fields in parse_dflash_draft_config
    if r.c.loader is Loader.DFLASH2:
        if bool(cfg.selector_rank) != bool(cfg.selector_top_k):
            fail("DSP344", k.messages.selector_pair.format(rank=cfg.selector_rank, k=cfg.selector_top_k))
        if not cfg.selector_rank:
            fail("DSP344", k.messages.selector)


def _dflash_load(r: Row) -> None:
    if own_embed(r):
        domino_load(r, before=embed_name(r))
        rows_check(r, "DSP321", "embed_tokens.weight", r.f.embed_rows, r.f.vocab_size)
    domino_load(r)


def _dflash_worker(r: Row) -> None:
    domino_worker(r)  # validate_domino_runtime runs before _resolve_mask_token_id (dflash_worker_v2.py)
    mask, t = r.cfg.dflash_mask_token_id, r.f.target_vocab_size
    if mask is not None and mask >= t:
        fail("DSP343", r.k.messages.dflash_mask_outside.format(m=mask, t=t, token=r.cfg.dflash_mask_token))


def selector_index(k: Contract, v: int, w: int, observed: str | None = None) -> Issue:
    return Issue("DSP340", f"candidate ids from the target lm_head (up to {w - 1}) index the selector codebooks of "
                           f"V = {v} rows: {observed or k.messages.index.format(i=w - 1, n=v)} (a device-side "
                           "assert on CUDA)", verbatim=False)


def _dflash_first_step(r: Row) -> Issue | None:
    """DFlash2's selector codebooks (V rows) meet the target head's candidate ids (below W), from the release's
    recorded execution; the modelled lookup where nothing was recorded. DFlash has no vocab-wide step."""
    v, w = r.f.vocab_size, head_width(r.f)
    if r.c.loader is not Loader.DFLASH2:
        return None
    steps = recorded_step(r, "dflash2")
    if steps is None:
        return selector_index(r.k, v, w) if v < w else None
    failure = dflash2_failure(steps, v, w)
    return None if failure is None else selector_index(r.k, v, w, observed=failure.words(v, w))


def _dflash_silent(r: Row) -> list[Issue]:
    f = r.f
    return shared_silent(r, head_shipped=f.has_lm_head, embed_shipped=f.has_embed, embed_loaded=f.has_embed)


def _none(r: Row) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Phases:
    """SGLang's steps for a draft, in order: start-up, load, worker set-up, first step, silent problems."""

    startup: Callable[[Row], None]  # config-only: shared by check and verify
    load: Callable[[Row], None]  # from headers here; verify loads the tensors with torch instead
    worker: Callable[[Row], None]  # config-only, after the load: shared
    first_step: Callable[[Row], Issue | None]
    silent: Callable[[Row], list[Issue]]


PHASES: dict[Loader, Phases] = {
    Loader.EAGLE3: Phases(_eagle3_startup, _eagle3_load, _eagle3_worker, _eagle3_first_step, _eagle3_silent),
    Loader.DSPARK: Phases(_dspark_startup, _dspark_load, _dspark_worker, _dspark_first_step, _dspark_silent),
    Loader.DFLASH: Phases(_dflash_startup, _dflash_load, _dflash_worker, _dflash_first_step, _dflash_silent),
    Loader.DFLASH2: Phases(_dflash_startup, _dflash_load, _dflash_worker, _dflash_first_step, _dflash_silent),
}


def startup_issue(r: Row) -> Issue | None:
    """Registration, then the config parsers and `__init__`: everything before a weight is read."""
    found = registration(r.k, r.cfg)
    if found is not None or r.c.loader is Loader.UNREGISTERED:
        return found
    try:
        PHASES[r.c.loader].startup(r)
    except Stop as stop:
        return stop.issue
    return None


def worker_issue(r: Row) -> Issue | None:
    try:
        PHASES[r.c.loader].worker(r)
    except Stop as stop:
        return stop.issue
    return None


def evaluate_sglang(k: Contract, version: str, f: DraftFacts) -> Verdict:
    r = row(k, f, version)
    error = startup_issue(r)
    if error is not None:
        return Verdict(k.runtime, version, k, error, ())
    phases = PHASES[r.c.loader]
    try:
        unreadable(f)
        phases.load(r)
    except Stop as stop:
        error = stop.issue
    error = error or worker_issue(r)
    if error is not None:  # load_weights' or the worker's: after __init__
        return Verdict(k.runtime, version, k, error, (), after_init=True)
    first = PHASES[r.c.loader].first_step(r)
    if first is not None:
        return Verdict(k.runtime, version, k, None, (), first)
    return Verdict(k.runtime, version, k, None, tuple(PHASES[r.c.loader].silent(r)))
