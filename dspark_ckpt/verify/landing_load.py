"""Every tensor of the checkpoint loaded, with torch, into the parameter set a release's generated model says its
class builds from this config (runtimes/release_data), as that release's load_weights was observed to load them.

Check's landing (runtimes/landing.py) reasons about the same record from the headers: which names have no parameter,
which shapes are refused or cut, which parameters no name fills. This is a second, independent reading of the record:
a loader. Each backbone parameter is a torch tensor of its rows (whether each row was written, `torch.bool`), made at
the size the record's expressions give for the config; the tensors are fed in the order the runtime reads them
(files naturally sorted, names sorted); each is looked up as the release looks it up (its name with the layer index
generalised, the probe's outcome for a name it has no parameter for, or for a name it refuses), compared with its
parameter's `torch.Size`, and, where the release takes it, written onto the parameter's next rows (a tensor cut to
fit writes the rows that fit). What is left unwritten is read back from the tensors. verify compares the result with
check's landing: a different set of refused tensors, cut tensors or unfilled parameters is DSP605. Vocabulary
parameters and fc are the vocab contract's and the aux-layer model's, as in check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch

from dspark_ckpt.model.families import Family
from dspark_ckpt.output.verify_records import LandingRun
from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.parameter_pass import judgement, unfilled_judged
from dspark_ckpt.runtimes.release_model import ArchitectureModel, LoadOutcome, TensorRule, head_index, normal
from dspark_ckpt.verify.memory import check_masks, memory_budget


def _layer_index(name: str) -> int | None:
    parts = name.split(".")
    found = [int(parts[i + 1]) for i, p in enumerate(parts[:-1]) if p == "layers" and parts[i + 1].isdigit()]
    return found[0] if found else None


def _unknown_raises(model: ArchitectureModel, name: str, side: str) -> bool:
    """The release's answer to a name it has no parameter for (its probe form: plain, `layers.`, `model.layers.`,
    in a layer it builds or on `side` of them); a bare parameter shipped as `<name>.weight` has its own answer."""
    stem = name.removesuffix(".weight") if name.endswith(".weight") else None
    bare = model.tensors.get(normal(stem)) if stem is not None else None
    if model.nested is not None and bare is not None and bare.parameter is not None:
        return model.nested.raises is not None
    return landing.unknown_outcome(model, name, side) is not None


def _outcome(rule: TensorRule, got: torch.Size, want: Sequence[int | None]) -> LoadOutcome | str | None:
    """How the release takes a tensor of this size: None as it is, "rank" for a different number of axes, else the
    outcome observed one row or column off along the first axis that differs (None where it was never observed)."""
    if len(got) != len(want):
        return "rank"
    for axis, (g, w) in enumerate(zip(got, want, strict=True)):
        if w is not None and g != w:
            return rule.off_by_one.get(f"{axis}{'+' if g > w else '-'}")
    return None


def load_landing(model: ArchitectureModel, runtime: str, version: str, config: Mapping[str, object],
                 shapes: Mapping[str, tuple[int, ...]], order: Sequence[str], *, target_hidden: int | None,
                 target_vocab: int | None, config_class: str = "", family: Family | None = None) -> LandingRun:
    config = landing.record_config(model, config)
    values = landing.variables(model, config, target_hidden=target_hidden, target_vocab=target_vocab,
                               config_class=landing.config_class_of(model, config, config_class))
    # the shapes at the draft's values of the structural keys it sets, and what stays unjudged: a module another
    # value of a structural key builds or resizes with no fitted shape (check's landing reads them alike)
    at_draft, _ = landing.keyed(model, config, values)
    unjudged = landing._unjudged(model, config, values)
    context = landing.context_width(model, config, values)
    # of which those it may add or drop, and those the draft's value adds (judged by check's landing alone)
    absent = landing.unseen(model, config) | landing.appearing(model, config)
    at_value = landing.appeared(model, config)  # ... whose shapes at the draft's value the record has: judged here too
    span, experts = landing.built_indices(model, values)
    heads = landing.head_count(model, values)
    # every shipped layer and head, and the first few past them, one by one; the rest of what the config declares
    # (no tensor can land there: each shipped index is named) as one unwritten name per parameter, so memory follows
    # the checkpoint (landing.Visit, as check's landing)
    layers = landing.visit(span, frozenset(i for n in order if (i := landing.layer_of(n)) is not None)) \
        if span is not None else None
    head_visit = landing.visit(range(heads), frozenset(h for n in order if (h := head_index(n)) is not None)) \
        if heads is not None else None
    rest_unfilled: list[str] = []
    rest_missing: list[str] = []
    rest_parameters = rest_rows = 0
    written: dict[str, torch.Tensor] = {}  # parameter (layer index concrete) -> which rows were written
    required: set[str] = set()  # those the release refuses to leave wholly unwritten
    whole: set[str] = set()  # those of unknown size (required ones only): judged whole or missing, one row
    cursor: dict[str, int] = {}
    planned = 0  # the rows of the masks made so far: bytes, held to verify's memory budget
    budget = memory_budget()
    for parameter, exprs in sorted(model.parameters.items()):
        if not judgement(model, parameter, family).presence \
                or parameter in model.unfilled \
                or parameter in absent or not landing.built(parameter, values) \
                or (not unfilled_judged(model, parameter, family) and parameter not in model.missing):
            continue
        # rows: every axis but the last (a fused expert parameter [experts, 2 x rows, cols] takes each expert's
        # [rows, cols] in turn); unknown: any tensor that lands fills it
        dims = [e.value(values) if e is not None else None for e in at_draft.get(parameter, exprs)]
        leading = dims[:-1] if len(dims) > 1 else dims
        # unknown, or moved by a structural key (its shape unjudged): any tensor that lands fills it
        # in Python: a dimension past 2**63 (a config's head count) overflows torch.Size
        size = math.prod(d or 0 for d in leading) if None not in leading and parameter not in unjudged else 0
        named, rests = landing.each_index(parameter, layers, head_visit)
        planned += len(named) * max(size, 1)
        check_masks(planned, parameter, size, budget)
        for concrete in named:
            written[concrete] = torch.zeros(max(size, 1), dtype=torch.bool)
            if parameter in model.missing:
                required.add(concrete)
                if None in dims:
                    whole.add(concrete)
        for name, count in rests:
            (rest_missing if parameter in model.missing else rest_unfilled).append(name)
            rest_parameters += count
            rest_rows += count * max(size, 1)
    refused: list[str] = []
    cut: list[str] = []
    for name in order:
        got = torch.Size(shapes[name])
        key = normal(name)
        if (rule := landing.appeared_rule(model, at_value, name)) is not None and rule.parameter is not None \
                and (want := landing.wanted(model, rule, at_draft, values, context)) is not None:
            outcome = _outcome(rule, got, want)
            if outcome == "rank" or (isinstance(outcome, LoadOutcome) and outcome.raises is not None):
                refused.append(name)
            elif isinstance(outcome, LoadOutcome) and (outcome.cuts or outcome.leaves_unwritten or outcome.pads):
                cut.append(name)
        if any(p == key or p.endswith("." + key) for p in absent):
            continue
        rule = landing.rule_for(model, name)  # a renamed prefix (midlayer. <-> layers.{i}.) as check reads it
        index = _layer_index(name)
        side = landing.beyond(name, span, experts) or ("past" if landing.past_heads(name, heads) else "")
        if rule is None or side:
            if _unknown_raises(model, name, side):
                refused.append(name)
            continue
        if rule.refused is not None and rule.refused.raises is not None:
            refused.append(name)
            continue
        if rule.parameter is None or not judgement(model, rule.parameter, family).shape:
            if rule.parameter is not None and (aux := written.get(
                    landing.at_name(rule.parameter, name, index))) is not None:
                aux[:] = True  # the aux model's fc: its shape is judged there, its presence here
            continue
        parameter = landing.at_name(rule.parameter, name, index)
        want = landing.wanted(model, rule, at_draft, values, context) \
            if normal(rule.parameter) not in unjudged else None
        outcome = _outcome(rule, got, want) if want is not None else None
        if outcome == "rank" or (isinstance(outcome, LoadOutcome) and outcome.raises is not None):
            refused.append(name)
            continue
        if isinstance(outcome, LoadOutcome) and (outcome.cuts or outcome.leaves_unwritten or outcome.pads):
            cut.append(name)
        mask = written.get(parameter)
        if mask is not None:
            if isinstance(outcome, LoadOutcome) and outcome.pads and want is not None and None not in want:
                got = torch.Size(want)  # the loader wrote zeros past the tensor: its whole shard is written
            start, rows = cursor.get(parameter, 0), int(got[:-1].numel()) if len(got) > 1 else int(got.numel())
            mask[start:start + rows] = True
            cursor[parameter] = start + rows
    missing = (*(p for p, mask in written.items() if p in required and not bool(mask.any())), *rest_missing)
    unfilled = (*(p for p, mask in written.items() if not bool(mask.all()) and p not in missing and p not in whole),
                *rest_unfilled)
    return LandingRun(runtime, version, model.name, len(order), tuple(refused), tuple(cut), unfilled,
                      len(written) + rest_parameters, int(sum(r.numel() for r in written.values())) + rest_rows,
                      missing)


def against_check(run: LandingRun, found: Sequence[landing.Landing]) -> str | None:
    """Where the torch loader and check's landing of the same record differ (None when they agree)."""
    if any(p.kind == "missing-key" for p in found):
        return None  # __init__ raises on the config: no tensor is loaded by either
    said_refused = {p.tensor for p in found if p.raises and p.tensor is not None}
    said_cut = {p.tensor for p in found if p.kind in landing.SILENT_SHAPES and p.tensor is not None}
    said_unfilled = {p.parameter for p in found if p.kind == "unfilled" and p.parameter is not None}
    said_missing = {p.parameter for p in found if p.kind == "missing" and p.parameter is not None}
    parts = []
    for what, mine, theirs in (("refused", set(run.refused), said_refused), ("cut", set(run.cut), said_cut),
                               ("left unfilled", set(run.unfilled), said_unfilled),
                               ("refused to leave unfilled", set(run.missing), said_missing)):
        if mine != theirs:
            parts.append(f"torch {what} {sorted(mine) or 'none'}, check {sorted(theirs) or 'none'}")
    return "; ".join(parts) or None
