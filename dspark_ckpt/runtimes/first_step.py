"""What each SGLang release's own DSpark first draft step did with a Markov vocab V against the target head's width W,
as tools/probe_first_step.py recorded it by executing the release (`release_data/sglang-X/first_step.json`).

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
def recorded(release: str) -> dict[str, Any] | None:
    """The release's recorded DSpark steps (head type -> relation -> anchor -> outcome); None where nothing was
    recorded (no DSpark class, or a release the probe has not run)."""
    path = folder("sglang", release) / FILE
    if not path.is_file():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    steps: dict[str, Any] = doc["dspark"]["steps"]
    return steps


def dspark_failure(steps: dict[str, Any], head_type: str, v: int, w: int, t: int) -> StepFailure | None:
    """The first failure, in a release's recorded steps, of the first draft step for a Markov head of V columns
    over W base logits, behind a target that proposes ids below T; None when it runs."""
    table = steps.get(head_type) or steps["vanilla"]
    for anchor in ("capture", "outside" if v < min(t, w) else "inside"):
        seen = table[relation(v, w)][anchor]
        if seen not in ("ok", None):
            return StepFailure(seen["raises"], seen["text"], seen.get("where"), anchor)
    return None
