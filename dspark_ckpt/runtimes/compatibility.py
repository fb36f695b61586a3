"""Pure: evaluate one runtime contract against a draft's facts -> loads?, the exact error, silent misbehaviours."""

from __future__ import annotations

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import DSPARK_FAMILIES, Family, traits
from dspark_ckpt.runtimes.contracts import Contract, Share, Unknown, nested_weights
from dspark_ckpt.runtimes.messages import E_NESTED_WEIGHT, markov_param
from dspark_ckpt.runtimes.records import DraftFacts, Issue, Verdict
from dspark_ckpt.runtimes.sglang_eval import evaluate_sglang


def evaluate_contract(contract: Contract, version: str, facts: DraftFacts) -> Verdict:
    if contract.sglang is not None:  # SGLang's loaders differ in kind: names ignored, no d2t parameter, run-time fails
        return evaluate_sglang(contract, version, facts)
    early = _config_error(contract, facts)
    error = early or _load_error(contract, facts)
    silent = () if error else tuple(_silent(contract, facts))
    return Verdict(contract.runtime, version, contract, error, silent, after_init=early is None and error is not None)


def startup_error(k: Contract, *, draft_vocab: int, vocab: int, target_vocab: int, mask_token_id: int | None,
                  topk: int | None, target_is_omni: bool = False) -> Issue | None:
    """Config-time validation (the speculative config), before any weight is read."""
    d, t = draft_vocab, target_vocab
    if not k.supported:
        return Issue("DSP309", k.messages.omni_unregistered)
    if target_is_omni and k.omni_target_validated and k.family is not Family.QWEN3_OMNI_DSPARK:
        return Issue("DSP309", k.messages.omni_generic)
    if k.omni_config_check and not 0 < d <= t:
        return Issue("DSP308", k.messages.omni_vocab.format(t=t, d=d))
    if k.omni_config_check and mask_token_id is not None and not 0 <= mask_token_id < vocab:
        return Issue("DSP308", k.messages.omni_mask.format(last=vocab - 1))
    if k.topk_check and topk is not None and not 1 <= topk <= d:
        return Issue("DSP209", k.messages.topk.format(d=d))
    return None


def _config_error(k: Contract, f: DraftFacts) -> Issue | None:
    return startup_error(k, draft_vocab=f.draft_vocab_size, vocab=f.vocab_size, target_vocab=f.target_vocab_size,
                         mask_token_id=f.mask_token_id, topk=f.dspark_draft_topk, target_is_omni=f.target_is_omni)


def _load_error(k: Contract, f: DraftFacts) -> Issue | None:
    d, v, t = f.draft_vocab_size, f.vocab_size, f.target_vocab_size
    if f.unreadable is not None:  # safetensors itself refuses the file before any model code runs
        code, message = f.unreadable
        return Issue(code, f"the checkpoint's weights cannot be read: {message}", verbatim=False)
    # load_weights' vocab checks (0.29+ Qwen3 DSpark), first failure wins, in upstream order.
    if k.embed_check and v > t and not f.has_embed:
        return Issue("DSP304", k.messages.embed)
    if k.reduced_checks is not None and k.reduced_checks.holds(d, t):
        if not f.has_lm_head:
            return Issue("DSP301" if d < t else "DSP306", k.messages.lm_head)
        if not f.has_d2t:
            return Issue("DSP302", k.messages.d2t)
    # Then the weights themselves are loaded.
    if k.mask_hidden_rejected and f.has_mask_hidden:
        return Issue("DSP312", k.messages.mask_hidden)
    if k.parallel_drafting_needs_mask_hidden and f.parallel_drafting and not f.has_mask_hidden:
        return Issue("DSP314", k.messages.parallel)
    nested = next(iter(nested_weights(f.nested_weights, k.bare_parameters)), None)
    if nested is not None:  # the nested loader meets candidate_selector.* before d2t and any row-checked head
        return Issue("DSP331", E_NESTED_WEIGHT.format(name=nested, param=nested.removesuffix(".weight")),
                     tensor=f.first_tensor(lambda n: n == nested))
    stray = _stray_heads(k, f)
    if "confidence_head" in stray:  # `confidence_head.*` sorts before every other name the loader refuses
        return _stray(k, f, "confidence_head")
    param = k.d2t_param.holds(d, t)
    if f.has_d2t and not param and k.unknown_weights is Unknown.REJECT:
        return Issue("DSP303", k.messages.noparam.format(cls=k.model_class),
                     tensor=f.first_tensor(lambda n: n == "d2t"))
    if k.model_prefix_rejected and f.model_prefixed:
        return Issue("DSP313", k.messages.model_prefix, tensor=min((n for n, _ in f.tensor_shapes
                                                                     if n.startswith("model.")), default=None))
    if "embed_proj" in stray:  # SGLang's Domino projector (0.5.20+) has no vLLM module; sorts before embed_tokens
        return _stray(k, f, "embed_proj")
    # The shapes of the vocabulary heads are the record's (runtimes/landing.py, in the release's load order and
    # words); what stays here is a Markov tensor the row's head has no parameter for, and fc's aux width
    extra_markov = _extra_markov(k, f)
    if extra_markov is not None:
        return Issue("DSP350", k.messages.stray_markov.format(name=extra_markov, cls=k.markov_backbone),
                     tensor=f.first_tensor(lambda n: n.startswith("markov_head.")))
    if (fc := _fc_error(k, f)) is not None:
        return fc
    if f.has_d2t and param and f.d2t_length is not None and f.d2t_length != d:
        return Issue("DSP324", k.messages.d2t_len.format(n=f.d2t_length, d=d),
                     tensor=f.first_tensor(lambda n: n == "d2t"))
    if "markov_head" in stray:  # sorted after d2t, embed_tokens and lm_head, whose loads come first
        return _stray(k, f, "markov_head")
    if "prefix_gru" in stray:  # the Domino projector's GRU, sorted after every name above
        return _stray(k, f, "prefix_gru")
    return None


def _fc_error(k: Contract, f: DraftFacts) -> Issue | None:
    """EAGLE-3's fc is ReplicatedLinear(width * n, hidden): fc.weight of another shape fails its exact-size assert."""
    want = f.aux.fc_shape if f.aux is not None else None
    if want is None or f.fc_shape is None or tuple(f.fc_shape) == want:
        return None
    got = ", ".join(map(str, f.fc_shape))
    return Issue("DSP329", k.messages.fc_shape.format(got=got, want=f"{want[0]}, {want[1]}"),
                 tensor=f.first_tensor(lambda n: n == "fc.weight"))


def _extra_markov(k: Contract, f: DraftFacts) -> str | None:
    """The first `markov_head.*` tensor (load order) this row's Markov head has no parameter for, as vLLM names it."""
    if not k.markov_params or f.sglang is None:
        return None
    return next((p for p in (markov_param(n) for n in f.sglang.markov_names) if p not in k.markov_params), None)


def _stray(k: Contract, f: DraftFacts, head: str) -> Issue:
    return Issue("DSP350", _stray_text(k, f, head), tensor=f.first_tensor(lambda n: n.startswith(f"{head}.")))


def _stray_text(k: Contract, f: DraftFacts, head: str) -> str:
    """The backbone's refusal of a head it has no module for, naming the head (AutoWeightsLoader) or the first of its
    tensors the loader meets (a params_dict KeyError: messages.E_STRAY_KEY), as the backbone sees the name."""
    names = sorted(n.removeprefix("model.") for n, _ in f.tensor_shapes)
    tensor = next((n for n in names if n.startswith(f"{head}.")), head)
    return k.messages.stray_head.format(name=head, cls=k.stray_heads_class, tensor=tensor)


def _stray_heads(k: Contract, f: DraftFacts) -> tuple[str, ...]:
    """The shipped heads this row's backbone has no module for and refuses by name (none where they are dropped)."""
    if k.stray_heads_class is None or k.family is None:
        return ()
    heads = f.unbuilt_heads(k.family)
    # SGLang's Domino projector tensors (prefix_gru.*, embed_proj.*): no vLLM release has a module for them
    # (read in qwen3_dflash.py 0.27-0.33: they reach the backbone's AutoWeightsLoader like a stray head)
    domino = {n.removeprefix("model.").split(".", 1)[0] for n, _ in f.sglang.domino_tensors} if f.sglang else set()
    return heads + tuple(sorted(domino))


def _shares(policy: Share, own: bool, fits: bool, flagged: bool = False) -> bool:
    return {
        Share.IF_NOT_OWN: not own,
        Share.IF_NOT_OWN_AND_FITS: not own and fits,
        Share.IF_NOT_OWN_NOR_FLAGGED: not own and not flagged,
        Share.ALWAYS: True,
        Share.ALWAYS_IF_FITS: fits,
        Share.NEVER: False,
    }[policy]


# A padded draft (D > T) whose lm_head is not its own loaded one (DSP306: uninitialised, or the target's shared into
# its width) or whose d2t is never applied (DSP311): that issue already says its rows [T, D) are wrong, so "nothing
# masks them" (DSP305) would repeat it.
_PADDED_ROWS_EXPLAINED: frozenset[FindingCode] = frozenset({"DSP306", "DSP311"})


# The families whose drafts build their own embed_tokens that only a shipped tensor or the target's fills (vLLM
# Qwen3 DSpark: its WeightsMapper drops the parameter's name when the checkpoint has none, 0.34 qwen3_dspark.py L349-350).
_EMBED_LEFT = frozenset({Family.QWEN3_DSPARK, Family.QWEN3_OMNI_DSPARK})


def embed_left_as_initialised(k: Contract) -> bool:
    """A row whose draft keeps its own embed_tokens as initialised when none ships and the target's is not shared
    (Qwen3 DSpark without the load-time embed check: vLLM 0.34); verify's modelled load reports the same."""
    return not k.embed_check and k.family in _EMBED_LEFT


def _silent(k: Contract, f: DraftFacts) -> list[Issue]:
    d, v, t = f.draft_vocab_size, f.vocab_size, f.target_vocab_size
    issues: list[Issue] = []
    head_rows = d if k.lm_head_rows == "D" else v
    head_shared = _shares(k.lm_head_share, f.has_lm_head, d == t, f.has_own_lm_head_flag)
    head_code: FindingCode = "DSP301" if d < t else "DSP306" if d > t else "DSP315"
    if head_shared and f.has_lm_head:
        issues.append(Issue("DSP307", "the draft's own lm_head is replaced by the target's"))
    if head_shared and head_rows != t:
        issues.append(Issue(head_code, f"the target lm_head ({t} rows) is shared into a draft of width {head_rows}: "
                                       "shape mismatch or out-of-range scatter at run time"))
    elif not head_shared and not f.has_lm_head:
        issues.append(Issue(head_code, "lm_head is neither loaded nor shared from the target: it stays uninitialised"))
    embed_shared = _shares(k.embed_share, f.has_embed, v <= t)
    if embed_shared and f.has_embed:
        issues.append(Issue("DSP307", "the draft's own embed_tokens is replaced by the target's"))
    if embed_shared and v > t:
        issues.append(Issue("DSP304", f"the target embedding ({t} rows) is shared but input ids go up to {v - 1}: "
                                      "out of range at run time"))
    elif not embed_shared and not f.has_embed and v > t and embed_left_as_initialised(k):
        issues.append(Issue("DSP304", "embed_tokens is neither loaded nor shared from the target (V > T): it stays "
                                      "as initialised"))
    param = k.d2t_param.holds(d, t)
    if not traits(k.family).d2t_applied and d != v:
        issues.append(Issue("DSP311", f"lm_head has V = {v} rows but draft_vocab_size is {d}; "
                                      "d2t is never applied" + (" (the shipped d2t is ignored)" if f.has_d2t else "")))
    elif not k.candidates_mapped and d < t:
        issues.append(Issue("DSP332", "the speculator proposes lm_head candidates without d2t: draft id i is proposed "
                                      "as target id i (wrong tokens)" + (" (the shipped d2t is loaded, never used)"
                                                                         if f.has_d2t and param else "")))
    elif d < t and not (param and f.has_d2t):
        issues.append(Issue("DSP302", "d2t stays all-zero: draft id i is proposed as target id i (wrong tokens)"))
    if d > t and not any(i.code in _PADDED_ROWS_EXPLAINED for i in issues):
        issues.append(Issue("DSP305", f"nothing masks rows [{t}, {d}): the draft can propose ids >= {t}"))
    padded = next((n for n, i in enumerate(issues) if i.code in _PADDED_ROWS_EXPLAINED | {"DSP305"}), None)
    if d > t and param and not f.has_d2t and traits(k.family).d2t_applied and padded is not None:
        # the mapping the release builds for D != T (or always) that no tensor writes: all zero, the identity map
        said = issues[padded]
        issues[padded] = Issue(said.code, f"{said.text}; no d2t fills the draft_id_to_target_id the release builds "
                                          f"for D = {d} != T = {t}: it stays all-zero (draft id i -> target id i)",
                               said.verbatim)
    return issues + _mapping_issues(k, f, param)


def _mapping_issues(k: Contract, f: DraftFacts, param: bool) -> list[Issue]:
    """What the contents of a d2t the runtime applies do at run time, and a t2d recorded for another target."""
    d, v, t = f.draft_vocab_size, f.vocab_size, f.target_vocab_size
    issues: list[Issue] = []
    applied = param and f.has_d2t and traits(k.family).d2t_applied and k.candidates_mapped
    if applied and d < t and f.d2t_all_zero:
        issues.append(Issue("DSP401", "the shipped d2t is all zero: draft id i is proposed as target id i "
                                      "(wrong tokens)"))
    elif applied and f.d2t_range is not None and (f.d2t_range[0] < 0 or f.d2t_range[1] >= t):
        low, high = f.d2t_range
        if k.family in DSPARK_FAMILIES:  # map_draft_to_target: draft_ids + d2t[draft_ids]
            issues.append(Issue("DSP402", f"map_draft_to_target proposes target ids outside [0, {t}) (from {low} to "
                                          f"{high}): the target's embedding lookup of such an id fails at the next "
                                          "step"))
        elif high >= v:  # compute_logits scatters into width vocab_size: logits_new[:, base + d2t] = logits
            issues.append(Issue("DSP402", f"the first draft step indexes logits_new[:, base + d2t] out of range "
                                          f"(target id {high} >= vocab_size {v}): IndexError, or a CUDA device-side "
                                          "assert"))
        else:
            issues.append(Issue("DSP402", f"d2t maps draft ids onto ids outside [0, {t}) (from {low} to {high}): "
                                          "the draft proposes ids that are not target tokens"))
    if f.t2d_length is not None and f.t2d_length != t:
        issues.append(Issue("DSP327", f"the draft's t2d records a target vocab of {f.t2d_length}, not T = {t}: it "
                                      "was pruned for another target, so its ids mean other tokens"))
    return issues
