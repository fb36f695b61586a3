"""Pure: a row for every requested release. A release the evaluators could not judge gets a verdict that says so and
why (DSP368): never a missing row, which every format would read as nothing wrong (issue 42, item 2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import DraftConfig
from dspark_ckpt.model.families import target_architecture
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.generated_verdict import not_modelled
from dspark_ckpt.runtimes.records import BuiltConfig, DraftFacts, Issue, Verdict
from dspark_ckpt.runtimes.registered import registration
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.serving_method import ServingMethod

NO_VERDICT: FindingCode = "DSP368"
SOURCE = "no verdict: dspark-ckpt could not judge this release (check/no_verdict.py)"


def _unmodelled(built: BuiltConfig, named: bool) -> str:
    arch = built.architecture
    if arch is None:
        return "config.json names no architecture the release builds a class for"
    if named and built.method in ("draft_model", "mtp", "ngram"):
        return (f"served with method {built.method!r}, the release builds {arch} as an independent model: "
                "dspark-ckpt models no draft contract for it")
    found = registration(built.runtime, built.version, arch)
    if found is not None and found.draft:
        why = not_modelled(built.runtime, built.version, arch)
        return (f"{arch} is registered there, but dspark-ckpt models no contract for it and the release's "
                f"generated model does not build it from this config{': ' + why if why else ''} (DSP232)")
    if found is not None:
        return (f"{arch} is registered there as a model, not a draft class: the release would build the target's "
                "own class from this draft config, which dspark-ckpt does not judge")
    return f"the release builds {arch} from config.json, a class dspark-ckpt models no contract for"


def reason(rv: RuntimeVersion, builds: Sequence[BuiltConfig], raw: Mapping[str, Any] | None,
           cfg: DraftConfig | None, facts: DraftFacts | None, method: ServingMethod | None = None) -> str:
    """Why `rv` has no verdict, in a few words the row and the finding both carry."""
    if raw is None or cfg is None:
        return "config.json could not be read, so no release's build could be evaluated"
    named = method is not None and method.named
    if not named and (target := target_architecture(dict(raw))) is not None:
        return f"config.json names the target model {target}, not a draft (DSP231)"
    built = next((b for b in builds if (b.runtime, b.version) == (rv.runtime, rv.version)), None)
    if built is not None and built.family is None:
        return _unmodelled(built, named)
    family = (built.family if built is not None else None) or cfg.family
    if family is not None and facts is None:
        return (f"config.json does not give the vocabulary sizes the {family.value} contract needs "
                "(vocab_size, draft_vocab_size)")
    if family is not None:
        return f"no contract row describes {family.value} there"
    return "dspark-ckpt models no contract for this draft's class"


def every_release(verdicts: tuple[Verdict, ...], runtimes: Sequence[RuntimeVersion], builds: Sequence[BuiltConfig],
                  raw: Mapping[str, Any] | None, cfg: DraftConfig | None,
                  facts: DraftFacts | None, method: ServingMethod | None = None) -> tuple[Verdict, ...]:
    """The verdicts, with a no-verdict one for each requested release that has none, in the runtimes' order."""
    have = {(v.runtime, v.version): v for v in verdicts}
    if all((rv.runtime, rv.version) in have for rv in runtimes):
        return verdicts
    family = cfg.family if cfg is not None else None
    arch = (cfg.architecture if cfg is not None else None) or "-"
    out = []
    for rv in runtimes:
        found = have.pop((rv.runtime, rv.version), None)
        if found is None:
            contract = Contract(rv.runtime, rv.version, rv.version, family, arch, SOURCE, supported=False,
                                verbatim_errors=False)
            found = Verdict(rv.runtime, rv.version, contract,
                            Issue(NO_VERDICT, f"no verdict: {reason(rv, builds, raw, cfg, facts, method)}", verbatim=False), ())
        out.append(found)
    return (*out, *have.values())  # a verdict no requested release names (none today) keeps its place at the end
