"""The generator's shape fitter (tools/release_model.py `fit`): the expression each generated dimension carries.

A product of two config keys seen only with one factor changed at a time is, on those points, exactly a linear
polynomial with a constant (head_dim*num_attention_heads = -16 + 2*head_dim + 8*num_attention_heads around
head_dim=8, heads=2). The fitter took that linear stand-in while SGLang 0.5.8-0.5.23's joint samples did not build,
and check then called a correct draft's o_proj "not what the release builds". These cases pin the choice.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tools")]
import release_model as rm  # tools/ is on sys.path, not a package

BASE = {"head_dim": 8, "num_attention_heads": 2, "num_key_value_heads": 1, "hidden_size": 16}
ALTERNATES = {"head_dim": (4, 12), "num_attention_heads": (4, 8), "num_key_value_heads": (2,),
              "hidden_size": (24, 40)}


def one_at_a_time() -> list[dict[str, int]]:
    points = [dict(BASE)]
    for key, values in ALTERNATES.items():
        points += [{**BASE, key: v} for v in values]
    return points


def fitted(shape: Callable[[dict[str, int]], int], points: list[dict[str, int]]) -> str:
    base = shape(BASE)
    depends = {k for p in points for k in BASE if p[k] != BASE[k] and shape(p) != base and
               sum(p[j] != BASE[j] for j in BASE) == 1}
    terms = rm.fit([(p, shape(p)) for p in points], list(BASE), depends)
    return "unfitted" if terms is None else rm.text(terms)


CASES = [
    ("o_proj in", lambda v: v["head_dim"] * v["num_attention_heads"], "head_dim*num_attention_heads"),
    ("qkv out", lambda v: v["head_dim"] * (v["num_attention_heads"] + 2 * v["num_key_value_heads"]),
     "head_dim*num_attention_heads + 2*head_dim*num_key_value_heads"),
    ("fc in", lambda v: 3 * v["hidden_size"], "3*hidden_size"),
    ("offset", lambda v: v["hidden_size"] + 16, "16 + hidden_size"),
    ("two keys added", lambda v: v["hidden_size"] + v["head_dim"], "hidden_size + head_dim"),
    ("constant", lambda v: 7, "7"),
]


@pytest.mark.parametrize(("what", "shape", "expected"), CASES, ids=[c[0] for c in CASES])
def test_axis_samples_alone_give_the_sparsest_exact_fit(what: str, shape: Callable[[dict[str, int]], int],
                                                        expected: str) -> None:
    got = fitted(shape, one_at_a_time())
    assert set(got.split(" + ")) == set(expected.split(" + ")), what


@pytest.mark.parametrize(("what", "shape", "expected"), CASES, ids=[c[0] for c in CASES])
def test_joint_samples_decide_where_they_exist(what: str, shape: Callable[[dict[str, int]], int],
                                               expected: str) -> None:
    joint = [{"head_dim": 12, "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 24},
             {"head_dim": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 40},
             {"head_dim": 12, "num_attention_heads": 4, "num_key_value_heads": 1, "hidden_size": 40}]
    got = fitted(shape, one_at_a_time() + joint)
    assert set(got.split(" + ")) == set(expected.split(" + ")), what


def test_points_that_cannot_tell_two_sparse_fits_apart_stay_unfitted() -> None:
    # two points, two candidate single products that agree on both: no choice is honest
    points = [{**BASE}, {**BASE, "head_dim": 4, "hidden_size": 8}]
    terms = rm.fit([(p, p["head_dim"] * 2) for p in points], list(BASE), {"head_dim", "hidden_size"})
    assert terms is None


def expressions(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if "expr" in node and "text" in node:
            yield node
        else:
            for value in node.values():
                yield from expressions(value)
    elif isinstance(node, list):
        for value in node:
            yield from expressions(value)


def test_no_generated_shape_is_a_linear_stand_in_with_a_negative_constant() -> None:
    """Parameter sizes are sums of products of config keys; a negative constant beside two or more keys is the
    signature of a product the samples did not determine (what the fix above removed from SGLang's data)."""
    data = ROOT / "dspark_ckpt" / "runtimes" / "release_data"
    suspicious = []
    for file in sorted(data.glob("*/*.json")):
        for dim in expressions(json.loads(file.read_text())):
            constants = [n for n, _d, names in dim["expr"] if not names]
            keys = [names for _n, _d, names in dim["expr"] if names]
            if any(c < 0 for c in constants) and len(keys) >= 2:
                suspicious.append(f"{file.parent.name}/{file.name}: {dim['text']}")
    assert not suspicious, suspicious[:5]
