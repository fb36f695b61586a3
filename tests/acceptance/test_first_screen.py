"""A first screen like ruff's (issue 41, item 6): the shipped example's verdict within its first 10 lines, one line
per finding, each suggested command whole on a line of its own (never wrapped inside), no line over 200 characters
off a terminal, the long form behind -v; a bare `dspark-ckpt` prints the help as --help lays it out."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys

from conftest import REPO, run_cli

EXAMPLE = ("check", "examples/inkling-small-dspark", "--target", "examples/inkling-small-target", "--isolated")


def example(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*EXAMPLE, *args, cwd=REPO)


def test_the_verdict_is_on_the_first_screen() -> None:
    done = example()
    lines = done.stdout.splitlines()
    assert done.returncode == 1
    assert any(line.startswith("examples/inkling-small-dspark: FAIL (DSP302)") for line in lines[:10]), lines[:10]
    assert lines[-1].startswith("1 checkpoint(s): 1 error(s)")


def test_no_line_over_200_characters_off_a_terminal() -> None:
    for columns in ("80", "100", "400"):
        done = run_cli(*EXAMPLE, cwd=REPO, env={"COLUMNS": columns})
        assert max(len(line) for line in done.stdout.splitlines()) <= 200, columns


def test_one_line_per_finding() -> None:
    codes = [f["code"] for f in json.loads(example("--format", "json").stdout)["checkpoints"][0]["findings"]]
    lines = example().stdout.splitlines()
    for code in codes:
        assert sum(1 for line in lines if re.match(rf"\s+(error|warning|info)\s+{code}\b", line)) == 1, code


def test_each_command_is_whole_on_a_line_of_its_own() -> None:
    lines = example().stdout.splitlines()
    commands = [line.strip() for line in lines if "dspark-ckpt fix" in line]
    assert commands and all(c.startswith("dspark-ckpt fix ") for c in commands), commands
    assert len(commands) == len(set(commands))  # one repair, one command
    assert commands[0].endswith("--strategy trim --for vllm")


def test_the_long_form_is_behind_v() -> None:
    short, long = example().stdout, example("-v").stdout
    assert "Compatibility" not in short and "Compatibility" in long and "hint:" in long
    assert "-v shows" in short
    assert long.splitlines()[-1] == short.splitlines()[-1]


def test_on_a_terminal_no_command_is_wrapped_inside() -> None:
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm", "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "dspark_ckpt", *EXAMPLE], stdout=slave, stderr=slave,
                            cwd=REPO, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    out = b"".join(chunks).decode().replace("\r", "")
    command = ("dspark-ckpt fix examples/inkling-small-dspark --target examples/inkling-small-target --strategy trim "
               "--for vllm")
    assert command in out.split("\n") or any(line.strip() == command for line in out.split("\n")), out
    finding_lines = [line for line in out.split("\n") if re.match(r"\s+(error|warning)\s+DSP", line)]
    assert finding_lines and all(len(line) <= 80 for line in finding_lines), finding_lines


def test_bare_dspark_ckpt_prints_the_help_laid_out() -> None:
    done = run_cli()
    text = done.stdout + done.stderr
    assert text.startswith("Usage: dspark-ckpt [OPTIONS] COMMAND [ARGS]...\n"), text[:200]
    assert "\nCommands:\n" in text and "\n  check " in text
