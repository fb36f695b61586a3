"""What each SGLang release's own first draft step did with a draft vocab V against the target head's width W, as
tools/probe_first_step.py recorded it by executing the release (`release_data/sglang-X/first_step.json`): DSpark's
Markov step (`dspark`, per head type), DFlash2's candidate selector (`dflash2`, 0.5.19+) and EAGLE-3's shared head,
logits crop and hot_token_id lookup (`eagle3`, 0.5.12+: tools/probe_first_step_eagle3.py).

Per relation the step ran with three previous tokens: the zeros a CUDA-graph capture feeds (`capture`, what the
server runs at start-up); the last id that has a markov_w1 row (`inside`); the first that has none (`outside`: V,
recorded where V < W, null elsewhere). The first draft step's failure is the capture's, else the `outside` one
where the target can propose an id >= V (V < T), else the `inside` one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dspark_ckpt.runtimes.release_store import release_file

FILE = "first_step.json"
SCHEMA = 1
HEAD_TYPES = ("vanilla", "gated", "rnn")  # models/dspark.py build_markov_head's types
RELATIONS = ("V<W", "V=W", "V>W")
ANCHORS = ("capture", "inside", "outside")


@dataclass(frozen=True, slots=True)
class StepFailure:
    """One recorded exception of the release's first draft step, its sizes written as {v} and {w}."""

    raises: str  # the exception's type, e.g. RuntimeError
    text: str  # str(exc), or the type's name when it says nothing (a bare assert)
    where: str | None  # the release's frame that raised it: file:line inside the wheel
    anchor: str  # which previous token it failed with (ANCHORS)

    stage: str | None = None  # EAGLE-3: where the step raised (head, crop, lookup, embed)

    def words(self, v: int, w: int) -> str:
        return self.fill({"v": v, "w": w})

    def fill(self, sizes: dict[str, int]) -> str:
        text = self.text
        for name, value in sizes.items():
            text = text.replace(f"{{{name}}}", str(value))
        return text


def relation(v: int, w: int) -> str:
    return "V<W" if v < w else "V=W" if v == w else "V>W"


def _document(release: str) -> dict[str, Any] | None:
    return release_file("sglang", release, FILE)


def recorded(release: str, step: str = "dspark") -> dict[str, Any] | None:
    """The release's recorded steps of one kind (`dspark`: head type -> relation -> anchor -> outcome; `dflash2`:
    relation -> anchor -> outcome); None where nothing was recorded (no such class, or a release the probe has not
    run)."""
    doc = _document(release)
    steps: dict[str, Any] | None = doc[step]["steps"] if doc is not None and step in doc else None
    return steps


def first_failure(table: dict[str, Any], v: int, w: int, outside: bool) -> StepFailure | None:
    """The first failure of a recorded relation table: the capture's, then (`outside`: an id without a row of the
    V-row table reaches it) the first id without a row's, else the last id with one's; None when it runs."""
    for anchor in ("capture", "outside" if outside else "inside"):
        seen = table[relation(v, w)][anchor]
        if seen not in ("ok", None):
            return StepFailure(seen["raises"], seen["text"], seen.get("where"), anchor)
    return None


def dspark_failure(steps: dict[str, Any], head_type: str, v: int, w: int, t: int) -> StepFailure | None:
    """DSpark's Markov step for V bias columns over W base logits, behind a target whose own tokens (the previous
    token, looked up in markov_w1) are below T."""
    return first_failure(steps.get(head_type) or steps["vanilla"], v, w, outside=v < min(t, w))


def dflash2_failure(steps: dict[str, Any], v: int, w: int) -> StepFailure | None:
    """DFlash2's selector: codebooks of V rows looked up with the target head's top-k candidate ids (below W)."""
    return first_failure(steps, v, w, outside=v < w)


EAGLE3_KINDS = ("own", "null", "tied", "tied-null")  # untied with D; untied, D null; tied with D; tied, D null


def size_ranking(sizes: dict[str, int]) -> str:
    """`C<L=R`: the sizes named, smallest first, ties joined by `=` (as tools/probe_first_step_eagle3.py keys them)."""
    ranked = sorted(sizes, key=lambda n: (sizes[n], n))
    return "".join(n if i == 0 else ("=" if sizes[n] == sizes[ranked[i - 1]] else "<") + n
                   for i, n in enumerate(ranked))


def eagle3_failure(steps: dict[str, Any], kind: str, c: int, r: int, length: int | None) -> StepFailure | None:
    """EAGLE-3's first draft step for a crop C (draft_vocab_size, or V where null), a target head/embedding of R rows
    and a d2t of `length` entries (None: no d2t): the capture's failure, else one the head's last id meets in the
    crop or the hot_token_id lookup. The next step's embedding of an id >= R (a padded head proposing it) is not
    one: it needs the draft to pick that id (DSP305 says so)."""
    sizes = {"C": c, "R": r, **({"L": length} if length is not None else {})}
    seen = steps[kind][size_ranking(sizes)]
    for anchor in ("capture", "last"):
        outcome = seen[anchor]
        if outcome != "ok" and (anchor == "capture" or outcome["stage"] != "embed"):
            return StepFailure(outcome["raises"], outcome["text"], outcome.get("where"), anchor, outcome["stage"])
    return None


def eagle3_sizes(c: int, r: int, length: int | None) -> dict[str, int]:
    """The values a recorded EAGLE-3 text's placeholders stand for."""
    return {"c-1": c - 1, "r-1": r - 1, "c": c, "r": r, **({"l": length} if length is not None else {})}
