"""The generator's probe of one structural key (verify/release_worker.py KeyProbe), on a stand-in release.

The stand-in builds as SGLang 0.5.15's DFlash backbone does (models/dflash.py L355-366 @ 0.5.15: the target's layer
count is `num_target_layers`, else the draft's own layer count; speculative/dflash_utils.py L431-435 refuses an id at
or past it, in the words asserted here; one `aux_hidden_norms.{k}` per id and fc `len(ids) * hidden_size` wide). At
the probe's one-layer base every longer list is refused, so before KeyProbe asked the refusal which key it checked
the list against, the record of 0.5.15-0.5.17 never said that the list's length adds modules.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from dspark_ckpt.verify import release_worker
from dspark_ckpt.verify.release_worker import BASE, KeyProbe


class Model:
    def __init__(self, shapes: dict[str, list[int]]) -> None:
        self.shapes = shapes

    def named_parameters(self) -> list[tuple[str, Any]]:
        return [(name, SimpleNamespace(shape=shape)) for name, shape in self.shapes.items()]


class DFlashLike:
    """Builds a model from a raw config as the DFlash backbone named above does; `words` is its refusal."""

    def __init__(self, words: str = "target_num_layers") -> None:
        self.words = words
        self.built: list[dict[str, Any]] = []

    def build(self, cls: Any, raw: dict[str, Any], values: dict[str, Any]) -> tuple[Model, set[str], set[str]]:
        self.built.append(raw)
        hidden, layers = raw["hidden_size"], raw["num_hidden_layers"]
        section = raw.get("dflash_config") if isinstance(raw.get("dflash_config"), dict) else {}
        ids = section.get("target_layer_ids", raw.get("target_layer_ids"))
        count = raw.get("num_target_layers") or layers
        if ids is None:
            ids = [count // 2]
        if not isinstance(ids, list):
            raise TypeError(f"target_layer_ids must be a list, got {ids!r}")
        for index, value in enumerate(ids):
            if value >= count:
                raise ValueError("DFLASH target_layer_ids contains an out-of-range layer id. "
                                 f"target_layer_ids[{index}]={value}, {self.words}={count}.")
        shapes = {"fc.weight": [hidden, len(ids) * hidden], "norm.weight": [hidden]}
        shapes.update({f"aux_hidden_norms.{k}.weight": [hidden] for k in range(len(ids))})
        return Model(shapes), set(), set()


RAW = {"architectures": ["DFlashLike"], "model_type": "qwen3", **{k: v for k, v in BASE.items() if "." not in k}}
READS = frozenset({"num_target_layers", "target_layer_ids", "dflash_config", "block_size"})


def probe(release: DFlashLike, recipe: dict[str, Any] | None = None,
          built: list[dict[str, Any]] | None = None) -> KeyProbe:
    return KeyProbe(release, object(), dict(BASE), recipe, built, READS)  # type: ignore[arg-type]


def base_parameters(release: DFlashLike) -> dict[str, list[int]]:
    model, _, _ = release.build(None, RAW, BASE)
    return {n: list(p.shape) for n, p in model.named_parameters()}


@pytest.mark.parametrize("name", ["target_layer_ids", "dflash_config.target_layer_ids"])
def test_a_list_refused_at_every_length_is_sampled_again_with_the_key_its_refusal_names(name: str) -> None:
    release = DFlashLike()
    entry = probe(release).run(RAW, name, [0], [[0, 1], [0, 1, 2]], base_parameters(release))
    assert entry is not None
    # 1 is the refused count; its first alternate (2*1+1) admits both longer lists
    assert entry["with"] == {"num_target_layers": 3}
    assert entry["alternate"] == [0, 1]
    assert entry["appears"] == ["aux_hidden_norms.1.weight"] and entry["resized"] == ["fc.weight"]
    assert entry["base"] == (None if "." in name else [0])
    assert "refused_values" not in entry  # a guessed kind (absent at base): nothing was refused of the draft's


def test_the_companion_reaches_the_points_the_shapes_are_fitted_on() -> None:
    release = DFlashLike()
    recipe = {"architectures": ["DFlashLike"], "model_type": "qwen3"}
    built = [{"sample": "base", "values": dict(BASE), "parameters": base_parameters(release)},
             {"sample": "hidden_size=24", "values": {**BASE, "hidden_size": 24},
              "parameters": {"fc.weight": [24, 24], "norm.weight": [24], "aux_hidden_norms.0.weight": [24]}}]
    entry = probe(release, recipe, built).run(RAW, "target_layer_ids", [0], [[0, 1], [0, 1, 2]],
                                              base_parameters(release))
    assert entry is not None
    points = entry["sized_points"]
    # the base and the hidden_size sample, each at one, two and three ids: every one built (none refused)
    assert len(points) == 6
    assert {(p["values"]["hidden_size"], p["values"]["len(target_layer_ids)"]): p["parameters"]["fc.weight"][1]
            for p in points} == {(h, n): h * n for h in (16, 24) for n in (1, 2, 3)}


def test_a_refusal_naming_no_key_the_class_reads_keeps_the_old_record() -> None:
    release = DFlashLike(words="layers_in_target_model")  # no read key has these words
    params = base_parameters(release)
    assert probe(release).run(RAW, "target_layer_ids", [0], [[0, 1], [0, 1, 2]], params) is None  # guessed
    present = {**RAW, "target_layer_ids": [0]}
    entry = probe(release).run(present, "target_layer_ids", [0], [[0, 1], [0, 1, 2]], params)
    assert entry is not None and "with" not in entry
    assert entry["error"]["message"].startswith("DFLASH target_layer_ids contains an out-of-range layer id.")


def test_the_refused_values_are_kept_where_the_draft_set_the_key() -> None:
    release = DFlashLike()
    present = {**RAW, "target_layer_ids": [0]}
    entry = probe(release).run(present, "target_layer_ids", [0], [[0, 1], [0, 1, 2]], base_parameters(release))
    assert entry is not None and entry["with"] == {"num_target_layers": 3}
    assert sorted(entry["refused_values"]) == ["[0, 1, 2]", "[0, 1]"]
    assert "target_num_layers=1" in entry["refused_values"]["[0, 1]"]


def test_the_named_number_is_read_from_the_refusal_words() -> None:
    found = release_worker.NAMED_NUMBER.findall("target_layer_ids[1]=1, target_num_layers=1.")
    assert found == [("target_num_layers", "1")]
