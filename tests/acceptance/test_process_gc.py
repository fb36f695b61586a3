"""The process's own run (`dspark-ckpt ...`, `python -m dspark_ckpt ...`: main() without argv) collects garbage
rarely and freezes what is left before it exits, so that leaving costs no collection pass (docs/architecture.md,
Start-up); a caller that runs main(argv) in its own process keeps its garbage collector as it was. The process is
the point of the first test: a real subprocess reports the collector's state from an exit handler."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from pathlib import Path

from cli_runner import cli_env, run_cli

REPO = Path(__file__).parents[2]
DRAFT = str(REPO / "examples" / "inkling-small-dspark")
TARGET = str(REPO / "examples" / "inkling-small-target")

PROBE = textwrap.dedent("""
    import atexit, gc, sys
    atexit.register(lambda: print("gc", gc.get_threshold()[0], gc.get_freeze_count() > 0, file=sys.stderr))
    sys.argv = ["dspark-ckpt", *sys.argv[1:]]
    from dspark_ckpt.cli.app import main
    main()
""")


def test_the_process_run_collects_rarely_and_freezes_before_it_exits() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, "check", DRAFT, "--target", TARGET, "--isolated"],
                          capture_output=True, text=True, env=cli_env(), cwd=REPO, check=False)
    assert done.returncode == 1, done.stderr  # the example's findings
    from dspark_ckpt.cli.app import _GC_THRESHOLDS

    assert f"gc {_GC_THRESHOLDS[0]} True" in done.stderr.splitlines()


def test_main_with_argv_leaves_the_callers_collector_as_it_was() -> None:
    from dspark_ckpt.cli.app import _GC_THRESHOLDS

    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # the interpreter's default: the suite's own process runs at the CLI's (conftest)
    try:
        before = gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()
        assert before[0] != _GC_THRESHOLDS
        done = run_cli("check", DRAFT, "--target", TARGET, "--isolated")
        assert done.returncode == 1, done.stderr
        assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before
    finally:
        gc.set_threshold(*saved)
