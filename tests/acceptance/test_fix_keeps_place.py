"""In place means in place: the folder itself, a link to it and a shell inside it all see the fix; a run killed or
interrupted half-way is completed or rolled back by the next check or fix, which says so; Ctrl-C exits 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from conftest import make_checkpoint, run_cli, wait_stopped
from test_fix_repairs import tree_digest

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96, shards=3)
FIX = ("--target-vocab-size", "96")

# A long-lived process whose working directory is the checkpoint, like a shell left in it.
SHELL = r"""
import json, os, sys
for line in sys.stdin:
    st = os.stat(".")
    config = json.loads(open("config.json").read())
    print(json.dumps({"ino": st.st_ino, "links": st.st_nlink, "files": sorted(os.listdir(".")),
                      "draft_vocab_size": config.get("draft_vocab_size")}), flush=True)
"""


def flat(text: str) -> str:
    return " ".join(text.split())


def fixed_reference(tmp_path: Path) -> dict[str, str]:
    reference = make_checkpoint(tmp_path / "reference", **PADDED)
    assert run_cli("fix", str(reference), *FIX, "--in-place").returncode == 0
    return tree_digest(reference)


def test_fix_dot_from_inside_keeps_the_folder_a_shell_is_in(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    expected = fixed_reference(tmp_path)
    shell = subprocess.Popen([sys.executable, "-c", SHELL], cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    assert shell.stdin is not None and shell.stdout is not None
    try:
        shell.stdin.write("look\n")
        shell.stdin.flush()
        before = json.loads(shell.stdout.readline())
        done = run_cli("fix", ".", *FIX, "--in-place", cwd=folder)
        assert done.returncode == 0, done.stdout + done.stderr
        shell.stdin.write("look\n")
        shell.stdin.flush()
        after = json.loads(shell.stdout.readline())
    finally:
        shell.stdin.close()
        shell.wait(timeout=30)
    assert before["draft_vocab_size"] == 100 and after["draft_vocab_size"] == 96, "the shell sees the fixed files"
    assert after["ino"] == before["ino"] and after["links"] >= 2, "the same folder, not a deleted one"
    assert after["files"] == before["files"] == sorted(os.listdir(folder))
    assert tree_digest(folder) == expected


def test_a_symlinked_checkpoint_is_fixed_where_it_is(tmp_path: Path) -> None:
    real = make_checkpoint(tmp_path / "checkpoint-3", **PADDED)
    expected = fixed_reference(tmp_path)
    (tmp_path / "latest").symlink_to("checkpoint-3")
    done = run_cli("fix", "latest", *FIX, "--in-place", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert os.readlink(tmp_path / "latest") == "checkpoint-3", "the link is kept and still points at the folder"
    assert tree_digest(real) == expected, "the real folder is fixed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-3", "latest", "reference"], "no stale entry"
    assert "(given as the link" in flat(done.stdout)


def _killed_at(folder: Path, step: str) -> None:
    env = {"DSPARK_CKPT_CRASH_AT": step}
    assert run_cli("fix", str(folder), *FIX, "--in-place", env=env).returncode == -signal.SIGKILL


def test_check_completes_a_fix_killed_while_putting_files_in_place(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    expected = fixed_reference(tmp_path)
    _killed_at(folder, "put:model-00002-of-00003.safetensors")  # one shard in place, the rest still staged
    assert (folder / ".dspark-fix-journal.json").is_file()
    checked = run_cli("check", str(folder), *FIX)
    assert "completed a fix that was interrupted while putting its files in place" in flat(checked.stderr)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert tree_digest(folder) == expected and not [p for p in os.listdir(folder) if p.startswith(".")]


def test_check_rolls_back_a_fix_killed_before_its_commit(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    original = tree_digest(folder)
    _killed_at(folder, "verified")
    assert (folder / ".dspark-fix-stage").is_dir()
    checked = run_cli("check", str(folder), *FIX)
    assert "rolled back a fix that was interrupted before changing anything" in flat(checked.stderr)
    assert tree_digest(folder) == original and not [p for p in os.listdir(folder) if p.startswith(".")]


def test_fix_completes_a_dead_fix_first_and_says_so(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    expected = fixed_reference(tmp_path)
    _killed_at(folder, "commit")
    done = run_cli("fix", str(folder), *FIX, "--in-place", "--format", "json")
    doc = json.loads(done.stdout)["checkpoints"][0]
    assert done.returncode == 0 and doc["status"] == "nothing-to-do", done.stdout + done.stderr
    assert "completed a fix" in doc["recovered"] and tree_digest(folder) == expected


def test_an_unfinished_fix_in_a_read_only_folder_is_reported_not_guessed(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    _killed_at(folder, "commit")
    folder.chmod(0o555)
    try:
        checked = run_cli("check", str(folder), *FIX)
        refused = run_cli("fix", str(folder), *FIX, "--out", str(tmp_path / "o"))
    finally:
        folder.chmod(0o755)
    assert "cannot be finished without write access" in flat(checked.stderr)
    assert refused.returncode == 2 and "[DSP-E079]" in refused.stderr and not (tmp_path / "o").exists()
    assert (folder / ".dspark-fix-journal.json").is_file(), "left for someone who may write it"


def _interrupted_at(step: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Hold fix at `step` (SIGSTOP), press Ctrl-C (SIGINT), let it go on: what it does with the interrupt."""
    env = {**os.environ, "NO_COLOR": "1", "DSPARK_CKPT_CRASH_AT": step, "DSPARK_CKPT_CRASH_SIGNAL": "STOP"}
    proc = subprocess.Popen([sys.executable, "-m", "dspark_ckpt", "fix", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_stopped(proc.pid)
        os.kill(proc.pid, signal.SIGINT)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_ctrl_c_while_staging_changes_nothing_and_exits_130(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    original = tree_digest(folder)
    done = _interrupted_at("write:model-00002-of-00003.safetensors", str(folder), *FIX, "--in-place")
    assert done.returncode == 130, done.stdout + done.stderr
    assert "interrupted: nothing was changed" in flat(done.stderr) and "Traceback" not in done.stderr
    assert tree_digest(folder) == original and not [p for p in os.listdir(folder) if p.startswith(".")]
    out = _interrupted_at("linked", str(folder), *FIX, "--out", str(tmp_path / "o"))
    assert out.returncode == 130 and "nothing was written" in flat(out.stderr), out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"], "no output, no staging folder"


def test_ctrl_c_during_the_commit_lets_it_finish_and_says_so(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", **PADDED)
    expected = fixed_reference(tmp_path)
    done = _interrupted_at("commit", str(folder), *FIX, "--in-place")
    assert done.returncode == 130, done.stdout + done.stderr
    assert "was already complete when the interrupt came" in flat(done.stderr)
    assert tree_digest(folder) == expected and not [p for p in os.listdir(folder) if p.startswith(".")]
