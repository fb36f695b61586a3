"""stdout/stderr closed, full or broken, and SIGINT at any moment (issue 22, item 2). The process boundary is the
point here, so every call is a real subprocess with its descriptors arranged by the test."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_runner import cli_env
from conftest import make_checkpoint

T96 = ("--target-vocab-size", "96", "--isolated")
FAILING = ("--target-vocab-size", "96", "--isolated", "--runtime", "vllm==0.29.0")  # padded: DSP302, exit 1


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("streams")
    make_checkpoint(root / "clean", vocab=96, draft_vocab=96, target_vocab=96)
    make_checkpoint(root / "padded", vocab=120, draft_vocab=120, target_vocab=96)
    return root


def spawn(ws: Path, *args: str, close: tuple[int, ...] = (), stdout: object = subprocess.PIPE,
          stderr: object = subprocess.PIPE, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    def arrange() -> None:
        # As from a shell: SIGINT at its default. A test runner's worker may ignore it (an ignored SIGINT is
        # inherited, and Python then leaves it ignored: no interrupt would ever reach the command).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        for fd in close:
            os.close(fd)

    return subprocess.run([sys.executable, "-m", "dspark_ckpt", *args], check=False, cwd=ws, env=cli_env(env),
                          stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,  # type: ignore[arg-type]
                          preexec_fn=arrange, timeout=60)


COMMANDS = [("check", "clean", *T96), ("check", "padded", *FAILING), ("check", "clean", *T96, "--format", "json"),
            ("check", "padded", *FAILING, "--format", "sarif"), ("rules",), ("--version",), ("--help",),
            ("explain", "DSP302"), ("version",)]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_a_closed_stdout_is_an_operational_error_with_one_line_on_stderr(ws: Path, args: tuple[str, ...]) -> None:
    r = spawn(ws, *args, close=(1,), stdout=None)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "[DSP-E036]" in err and "Traceback" not in err and "Exception ignored" not in err
    assert err.count("error [") == 1


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_stdout_on_a_full_device_is_an_operational_error(ws: Path, args: tuple[str, ...]) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "wb") as full:
        r = spawn(ws, *args, stdout=full)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "[DSP-E036]" in err and "No space left" in err and "Traceback" not in err
    assert "Exception ignored" not in err


@pytest.mark.parametrize(("args", "code"), [(("check", "clean", *T96), 0), (("check", "padded", *FAILING), 1),
                                            (("check", "clean", *T96, "--format", "json"), 0),
                                            (("check", "padded", *FAILING, "--format", "junit"), 1),
                                            (("rules",), 0), (("--help",), 0)])
def test_a_broken_pipe_ends_quietly_with_the_runs_own_exit_code(ws: Path, args: tuple[str, ...], code: int) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write is EPIPE
    try:
        r = spawn(ws, *args, stdout=write)
    finally:
        os.close(write)
    err = r.stderr.decode()
    assert r.returncode == code, err
    assert "Traceback" not in err and "Exception ignored" not in err and "error [" not in err


def test_a_reader_that_leaves_after_one_line_keeps_the_exit_code(ws: Path) -> None:
    for args, code in ((("check", "clean", *T96), 0), (("check", "padded", *FAILING), 1)):
        p = subprocess.Popen([sys.executable, "-m", "dspark_ckpt", *args], cwd=ws, env=cli_env({"COLUMNS": "40"}),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert p.stdout is not None and p.stderr is not None
        p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait(60) == code, err
        assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.parametrize("how", ["closed", "full"])
def test_a_failing_stderr_is_reported_on_stdout(ws: Path, tmp_path: Path, how: str) -> None:
    """With -o the verdict line goes to stderr; when stderr cannot take it, one line says so on stdout."""
    if how == "full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    args = ("check", "clean", *T96, "--format", "json", "-o", str(tmp_path / "r.json"))
    if how == "closed":
        r = spawn(ws, *args, close=(2,), stderr=None)
    else:
        with open("/dev/full", "wb") as full:
            r = spawn(ws, *args, stderr=full)
    out = r.stdout.decode()
    assert r.returncode == 2, out
    assert "[DSP-E037]" in out and out.count("error [") == 1 and "Traceback" not in out


def test_a_closed_stdout_with_the_report_in_a_file_still_writes_it(ws: Path, tmp_path: Path) -> None:
    r = spawn(ws, "check", "clean", *T96, "--format", "json", "-o", str(tmp_path / "r.json"), close=(1,),
              stdout=None)
    assert r.returncode == 0, r.stderr.decode()
    assert (tmp_path / "r.json").read_text().startswith("{")


# --- SIGINT, delivered at the Nth import after the command's handler is in place ---

SITE = textwrap.dedent("""
    import atexit, os, signal, sys
    _at = int(os.environ["DSPARK_TEST_SIGINT_AT"])  # 0: count the imports only, into DSPARK_TEST_IMPORT_COUNT
    _seen = [0]
    def _hook(event, args):
        if event != "import" or "dspark_ckpt.cli.app" not in sys.modules:
            return
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            return  # main() has not installed its handler yet
        _seen[0] += 1
        if _seen[0] == _at:
            os.kill(os.getpid(), signal.SIGINT)
    sys.addaudithook(_hook)
    if _at == 0:
        atexit.register(lambda: open(os.environ["DSPARK_TEST_IMPORT_COUNT"], "w").write(str(_seen[0])))
""")


def interrupted_at(ws: Path, tmp_path: Path, at: int, *args: str) -> subprocess.CompletedProcess[bytes]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITE)
    count = tmp_path / "import-count"
    return spawn(ws, *args, env={"PYTHONPATH": str(site), "DSPARK_TEST_SIGINT_AT": str(at),
                                 "DSPARK_TEST_IMPORT_COUNT": str(count)})


def import_points(ws: Path, tmp_path: Path, where: float, *args: str) -> int:
    """The import at which to interrupt: `where` >= 1 is that import; below 1, that fraction of the imports the
    command makes after main() took over SIGINT, counted by a first, uninterrupted run."""
    if where >= 1:
        return int(where)
    interrupted_at(ws, tmp_path, 0, *args)
    total = int((tmp_path / "import-count").read_text())
    assert total >= 20, f"only {total} imports after main() installed its handler"
    return max(1, min(total, round(where * total)))


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# Fixed early points, then seeded random fractions of the imports the command really makes (measured per run, so
# every point lands inside the run whatever the start-up work trims).
SAMPLE = sorted(round(random.Random(22).uniform(0.05, 0.99), 3) for _ in range(10))


@pytest.mark.parametrize("where", [1, 2, 3, 5, 8, 13, *SAMPLE, 0.9999])  # 0.9999: the last import
def test_an_interrupt_at_any_import_of_check_exits_130(ws: Path, tmp_path: Path, where: float) -> None:
    args = ("check", "padded", *FAILING, "--format", "sarif")
    r = interrupted_at(ws, tmp_path, import_points(ws, tmp_path, where, *args), *args)
    err = r.stderr.decode()
    assert r.returncode == 130, err
    assert "dspark-ckpt: interrupted" in err and "Exception ignored" not in err and "Traceback" not in err


@pytest.mark.parametrize("where", [1, 4, 9, 20, *SAMPLE, 0.9999])  # 0.9999: the last import
def test_an_interrupt_at_any_import_of_fix_exits_130_and_leaves_the_original(tmp_path: Path, where: float) -> None:
    draft = make_checkpoint(tmp_path / "ws" / "d", vocab=120, draft_vocab=120, target_vocab=96)
    before = tree(draft)
    args = ("fix", "d", "--target-vocab-size", "96", "--isolated", "--out", "fixed")
    at = import_points(tmp_path / "ws", tmp_path, where, *args)
    if where < 1:  # the counting run wrote a fixed copy: start again from the original alone
        shutil.rmtree(tmp_path / "ws" / "fixed", ignore_errors=True)
    r = interrupted_at(tmp_path / "ws", tmp_path, at, *args)
    err = r.stderr.decode()
    assert r.returncode == 130, err
    assert "Exception ignored" not in err and "Traceback" not in err
    assert tree(draft) == before  # fix --out never touches the original, interrupted or not
