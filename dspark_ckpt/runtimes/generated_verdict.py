"""Pure: the verdict of a draft no family describes, on each release whose generated model builds its class.

A registered draft class dspark-ckpt has no vocab contract for (EAGLE-3 for DeepSeek/Kimi, Llama 4's EAGLE, an MTP
head, ...) is still judged where the release's own code could be run on CPU (runtimes/release_data): every tensor
of the checkpoint, vocabulary tensors included, against the parameters that release builds from this config, and
what its load_weights does with each name (runtimes/landing.py). The first tensor it raises on is the verdict's
error (DSP360, DSP361, DSP333 in the release's words); a tensor cut to fit or a backbone parameter no tensor fills
is silent (DSP362, DSP363). What the release does after loading (sharing the target's lm_head or embed_tokens) is
not in the generated model, so a vocabulary parameter no tensor fills is not reported. A release whose generated
model could not build the class (`not_built`), or that has no data, gives no verdict: DSP232 says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.absent_refusal import refused_absence
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.records import BuiltConfig, Issue, Verdict
from dspark_ckpt.runtimes.release_model import (
    ArchitectureModel,
    LoadOutcome,
    architecture_model,
    built_model,
    modelled_release,
)
from dspark_ckpt.runtimes.release_verdict import (
    built_verdict,
    cited,
    ignored_suffixes,
    landing_issues,
    proposer_refusal,
    target_refusal,
)
from dspark_ckpt.runtimes.sglang_null_refusals import refused_null

GENERATED = "the release's generated model"  # how a generated verdict's source says where it comes from


def generated_model(built: BuiltConfig) -> tuple[str, ArchitectureModel] | None:
    """The release whose data models this build's class, and that model; None where it is not built."""
    if built.architecture is None or built.hf is None or built.error is not None:
        return None
    model = built_model(built.runtime, built.version, built.architecture)
    release = modelled_release(built.runtime, built.version) if model is not None else None
    return (release, model) if release is not None and model is not None else None


REFUSED_APART: FindingCode = "DSP370"


def refused_apart(model: ArchitectureModel, built: BuiltConfig, *, target_hidden: int | None,
                  target_vocab: int | None) -> Issue | None:
    """The class's own refusal of two values that differ (its record's `refused_apart`: Laguna's DFlash and XPress
    refuse a vocabulary other than the target's), in its words at the draft's values; None where they agree or one
    is unknown."""
    assert built.hf is not None
    values = landing.variables(model, built.hf, target_hidden=target_hidden, target_vocab=target_vocab,
                               config_class=landing.config_class_of(model, built.hf, built.config_class))
    for key, other, said in model.refused_apart:
        mine, theirs = values.get(key), values.get(other)
        if mine is not None and theirs is not None and mine != theirs:
            words = said.message.replace(f"{{{key}}}", str(mine)).replace(f"{{{other}}}", str(theirs))
            return Issue(REFUSED_APART, f"{said.raises}: {words} ({said.where}, in __init__: {key} {mine}, "
                                        f"{other} {theirs})")
    return None


REFUSED_VALUE: FindingCode = "DSP372"


def refused_value(model: ArchitectureModel, built: BuiltConfig) -> Issue | None:
    """The class's own refusal of the draft's value of one key (its record's single-key `samples_refused`), where
    the refusal is the key's alone: every value of it the samples set apart from the base was refused in the same
    words (EAGLE-3's "currently only supports 1 layer" for num_hidden_layers 2 and 3), so the words depend on no
    other value; the draft's value is one of them or, the refused values being consecutive integers, above them."""
    assert built.hf is not None
    by_key: dict[str, list[tuple[Any, LoadOutcome]]] = {}
    for key, value, said in model.refused_values:
        by_key.setdefault(key, []).append((value, said))
    for key, refused in sorted(by_key.items()):
        mine = built.hf.get(key)
        words = {(said.raises, said.message) for _, said in refused}
        if mine is None or isinstance(mine, bool) or len(refused) < 2 or len(words) != 1:
            continue
        values = [v for v, _ in refused]
        ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
        above = (isinstance(mine, int) and len(ints) == len(values) and mine > max(ints)
                 and sorted(ints) == list(range(min(ints), max(ints) + 1)))
        if mine in values or above:
            said = refused[0][1]
            return Issue(REFUSED_VALUE, f"{said.raises}: {said.message} ({said.where}, in __init__: {key} {mine})")
    return None


def not_modelled(runtime: str, version: str, architecture: str) -> str | None:
    """Why the release's generated model has no class to judge with (its own code stopped building it on CPU: the
    error, where), in a few words; None where it built it or has no data for the release."""
    release = modelled_release(runtime, version)
    model = architecture_model(runtime, release, architecture) if release is not None else None
    if model is None or model.not_built is None:
        return None
    stop = model.not_built
    message = " ".join(str(stop.get("message", "")).split())
    message = message if len(message) <= 160 else message[:157] + "..."
    said = f"{stop.get('type', 'an error')}{': ' + message if message else ''}"
    return (f"registered, not modelled: {runtime} {release}'s own code stops building {architecture} on CPU "
            f"({said}, {stop.get('where', '?')}{', ' + str(stop['phase']) if stop.get('phase') else ''})")


def is_generated(contract: Contract) -> bool:
    return contract.family is None and contract.supported and GENERATED in contract.source


def generated_verdict(built: BuiltConfig, tensors: Mapping[str, tuple[int, ...]], *, target_hidden: int | None,
                      target_vocab: int | None, target_model_type: str | None = None,
                      config_time: bool = True) -> Verdict | None:
    """`config_time` False: what the model's own __init__ and load_weights do, without the speculative config's
    validation and the proposer before them (as built_verdict's)."""
    found = generated_model(built)
    if found is None:
        return None
    release, model = found
    assert built.hf is not None
    contract = Contract(built.runtime, built.version, built.version, None, model.cls.rsplit(".", 1)[-1],
                        f"{model.where} @ v{release} ({GENERATED}, runtimes/release_data)")
    if config_time and (refused := target_refusal(built, contract, target_model_type)) is not None:
        return refused  # _verify_args, no weight read
    if config_time and (proposer := proposer_refusal(built)) is not None:  # the runner's proposer, before the model
        return Verdict(built.runtime, built.version, cited(contract, proposer[1]), proposer[0], ())
    if (apart := refused_apart(model, built, target_hidden=target_hidden, target_vocab=target_vocab)) is not None:
        return Verdict(built.runtime, built.version, contract, apart, ())
    if (value := refused_value(model, built)) is not None:
        return Verdict(built.runtime, built.version, contract, value, ())
    if (absent := refused_absence(model, built.hf)) is not None:  # a key left out or null beside its partners
        return Verdict(built.runtime, built.version, contract, absent, ())
    if built.runtime == "sglang" and (null := refused_null(built.version, built.architecture, built.hf)) is not None:
        return Verdict(built.runtime, built.version, contract, null, ())  # a null no sample set (hand-read)
    problems = landing.land(model, built.hf, tensors, target_hidden=target_hidden, target_vocab=target_vocab,
                            config_class=built.config_class, family=None,
                            ignored=ignored_suffixes(built.runtime, built.version),
                            dropped=landing.dropped_unshipped(model, built.version))
    error, silent = landing_issues(problems, model.cls, built.hf)
    return Verdict(built.runtime, built.version, contract, error, silent)


def unmodelled_verdicts(builds: Sequence[BuiltConfig], tensors: Mapping[str, tuple[int, ...]], *,
                        target_hidden: int | None, target_vocab: int | None,
                        target_model_type: str | None = None) -> tuple[Verdict, ...]:
    """Per release: the build's own error where it raised (no class, a refused conversion), else the generated
    model's verdict where there is one."""
    out = []
    for built in builds:
        verdict = built_verdict(built, None) if built.error is not None or built.silent else generated_verdict(
            built, tensors, target_hidden=target_hidden, target_vocab=target_vocab, target_model_type=target_model_type)
        if verdict is not None:
            out.append(verdict)
    return tuple(out)
