"""The corpus's CPU limit itself: 5 s on any input, and past that only a multiple of the naive floor of big inputs."""

from __future__ import annotations

import json
from pathlib import Path

from limits import FLOOR_RATIO, TIME_LIMIT_S, Run, cpu_limit_s, naive_floor_s


def slow_run(*inputs: Path, cpu_s: float) -> Run:
    return Run(1, "", "", cpu_s, cpu_s, "check", tuple(map(str, inputs)))


def test_a_small_input_is_held_to_the_fixed_limit(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    assert cpu_limit_s(slow_run(tmp_path, cpu_s=1.0)) == TIME_LIMIT_S
    assert cpu_limit_s(slow_run(tmp_path, cpu_s=TIME_LIMIT_S + 1)) == TIME_LIMIT_S  # the floor is far below


def test_a_big_input_earns_a_multiple_of_its_measured_floor(tmp_path: Path) -> None:
    index = {"weight_map": {f"t{i}": f"s{i}.safetensors" for i in range(300_000)}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    floor = naive_floor_s(slow_run(tmp_path, cpu_s=0))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert floor > naive_floor_s(slow_run(empty, cpu_s=0))  # the parse is measured, not just the start-up
    assert cpu_limit_s(slow_run(tmp_path, cpu_s=TIME_LIMIT_S)) <= max(TIME_LIMIT_S, FLOOR_RATIO * floor * 3)
