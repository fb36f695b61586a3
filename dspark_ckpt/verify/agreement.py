"""Compare the verdicts the torch run observed with the ones `check` reasons from headers (DSP605 when they differ)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.records import Verdict
from dspark_ckpt.runtimes.selectors import RuntimeVersion


def same_error(observed: Verdict, predicted: Verdict) -> bool:
    """Same code and words: check quotes the E-noparam/model-prefix errors only up to "are:" (the rest varies), and
    a raise its release record judges whole, with where and the shapes added (landing.quoted_whole)."""
    if observed.error is None or predicted.error is None:
        return observed.error is predicted.error
    seen, said = observed.error.text, predicted.error.text
    return observed.error.code == predicted.error.code and (seen.startswith(said) or landing.quoted_whole(seen, said))


def vocab_part(predicted: Verdict) -> Verdict:
    """check's verdict without what the generated release model adds about the other tensors (runtimes/landing.py:
    header facts, the same on both sides), which torch's vocab loaders do not look at."""
    error = None if predicted.error is not None and predicted.error.code in landing.CODES else predicted.error
    return replace(predicted, error=error, silent=tuple(i for i in predicted.silent if i.code not in landing.CODES))


def _differs(observed: Verdict, predicted: Verdict) -> str | None:
    if observed.error is not None and observed.error.code not in landing.CODES and predicted.error is not None \
            and predicted.error.code in landing.CODES:
        # Both refuse the draft. check's first error is a tensor the torch run does not load (the record's load
        # order over every tensor); the torch run stops at the first one it models (a vocabulary head, a name its
        # loader refuses), which check meets later or not at all: which comes first is not the torch run's to say.
        return None
    predicted = vocab_part(predicted)
    if observed.loads != predicted.loads or not same_error(observed, predicted):
        seen = observed.error.code if observed.error else "loads"
        said = predicted.error.code if predicted.error else "loads"
        return f"torch observed {seen}, check predicted {said}"
    mine = sorted({i.code for i in observed.silent})
    theirs = sorted({i.code for i in predicted.silent})
    if mine != theirs:
        return f"silent issues observed {mine or 'none'}, predicted {theirs or 'none'}"
    return None


def disagreements(observed: Sequence[Verdict], predicted: Sequence[Verdict]) -> tuple[str, ...]:
    """`predicted` is the analysis' own verdicts: check's prediction as check made it, never rebuilt here."""
    by_runtime = {(v.runtime, v.version): v for v in predicted}
    found = []
    for verdict in observed:
        other = by_runtime.get((verdict.runtime, verdict.version))
        if other is not None and other.error is not None and other.error.code == "DSP368":
            other = None  # the row says check could not judge it (check/no_verdict.py): no prediction to compare
        why = _differs(verdict, other) if other is not None else "check has no verdict"
        if why:
            found.append(f"{RuntimeVersion(verdict.runtime, verdict.version)}: {why}")
    return tuple(found)
