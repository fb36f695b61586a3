"""What each SGLang release's own first draft step did with a draft vocab V against the target head's width W, as
tools/probe_first_step.py recorded it by executing the release (`release_data/sglang-X/first_step.json`): DSpark's
Markov step (`dspark`, per head type) and DFlash2's candidate selector (`dflash2`, 0.5.19+).

Per relation the step ran with three previous tokens: the zeros a CUDA-graph capture feeds (`capture`, what the
server runs at start-up); the last id that has a markov_w1 row (`inside`); the first that has none (`outside`: V,
recorded where V < W, null elsewhere). The first draft step's failure is the capture's, else the `outside` one
where the target can propose an id >= V (V < T), else the `inside` one.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.runtimes.release_store import folder

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

    def words(self, v: int, w: int) -> str:
        return self.text.replace("{v}", str(v)).replace("{w}", str(w))


def relation(v: int, w: int) -> str:
    return "V<W" if v < w else "V=W" if v == w else "V>W"


@functools.cache
def _document(release: str) -> dict[str, Any] | None:
    path = folder("sglang", release) / FILE
    if not path.is_file():
        return None
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


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
