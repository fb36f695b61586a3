"""The corpus's CPU limit itself: 5 s on any input, and past that only a multiple of the naive floor of big inputs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from limits import FLOOR_RATIO, SERVER, TIME_LIMIT_S, Run, cpu_limit_s, naive_floor_s


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


# The fork server: each child holds the limits and the isolation a subprocess would.
def serve(code: str, tmp_path: Path, env: dict[str, str] | None = None,
          timeout: float = 20) -> tuple[subprocess.CompletedProcess[str], float, float]:
    return SERVER.run((), {**os.environ, **(env or {})}, tmp_path, timeout, code=code)


def test_a_child_meets_the_address_space_limit(tmp_path: Path) -> None:
    done, _, _ = serve("bytearray(3 * 2**30)", tmp_path)
    assert done.returncode == 1 and "MemoryError" in done.stderr


def test_a_child_has_the_requested_environment_folder_and_streams(tmp_path: Path) -> None:
    code = ("import os, sys; print(os.environ.get('CASE'), os.environ.get('HOME_ONLY_HERE'), os.getcwd());"
            " print('err', file=sys.stderr); print(sys.stdin.read() == '')")
    done, _, _ = serve(code, tmp_path, env={"CASE": "one"})
    assert done.stdout.split() == ["one", "None", str(tmp_path), "True"] and done.stderr == "err\n"
    again, _, _ = serve("import os; print(os.environ.get('CASE'))", tmp_path)  # nothing leaks between cases
    assert again.stdout.split() == [os.environ.get("CASE", "None")]


def test_a_child_reports_its_own_cpu_time_and_exit_status(tmp_path: Path) -> None:
    done, wall, cpu = serve("import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\n"
                            "raise SystemExit(7)", tmp_path)
    assert done.returncode == 7 and 0.35 < cpu <= wall + 0.05


def test_a_child_that_hangs_is_killed_at_the_timeout(tmp_path: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        serve("import time; time.sleep(60)", tmp_path, timeout=0.5)
    assert serve("print('next')", tmp_path)[0].stdout == "next\n"  # the server goes on


def test_the_server_imported_the_cli_and_neither_torch_nor_huggingface_hub(tmp_path: Path) -> None:
    done, _, _ = serve("import sys; print(sorted(m for m in ('dspark_ckpt.cli.check', 'torch', 'huggingface_hub')"
                       " if m in sys.modules))", tmp_path)
    assert done.stdout.strip() == "['dspark_ckpt.cli.check']"
