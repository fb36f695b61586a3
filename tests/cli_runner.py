"""The real CLI entry point, run in this process by default and in a subprocess where the process is the point.

`run_cli(*argv)` calls `dspark_ckpt.cli.app.main(argv)` the way `python -m dspark_ckpt` would, and answers with a
`subprocess.CompletedProcess`, so a test cannot tell the two apart (tests/acceptance/test_runner_agrees.py pins
that they agree). Per call the runner gives the command what a new process would have:

- the environment `{**os.environ, NO_COLOR=1, COLUMNS=100, **env}` and no other, then the caller's back;
- the working folder `cwd`;
- stdin empty (or `input`), stdout and stderr as byte streams that are not terminals, decoded as the subprocess's
  text mode decodes them (PYTHONIOENCODING honoured, universal newlines);
- huggingface_hub's import-time settings (endpoint, HF_HOME, offline, caches) re-read from that environment, as
  a fresh import would read them, and its shared HTTP client dropped before and after;
- the signal handlers, `sys.argv`, and the warning filters restored afterwards;
- a `timeout` that ends the call with `subprocess.TimeoutExpired`, as `subprocess.run` would.

A subprocess is used instead when the call needs one: a fault-injection variable that kills or stops the process
(DSPARK_CKPT_CRASH_AT), a `PYTHONPATH` of its own (a sitecustomize the child must load), `subprocess=True`, or
DSPARK_CKPT_TEST_SUBPROCESS=1 in the environment, which runs the whole suite through subprocesses as before.
"""

from __future__ import annotations

import contextlib
import io
import locale
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SUBPROCESS_ENV = "DSPARK_CKPT_TEST_SUBPROCESS"
_PROCESS_VARS = ("DSPARK_CKPT_CRASH_AT", "DSPARK_CKPT_CRASH_SIGNAL")  # they kill or stop the process itself
_SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGALRM, signal.SIGHUP))


class _Timeout(BaseException):
    """Raised into the command when its time is up: a BaseException, so the CLI's last line of defence (which
    turns any Exception into exit 3) lets it through, as a kill would end the subprocess."""


def cli_env(env: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", **(env or {})}


def needs_process(full_env: dict[str, str]) -> bool:
    if os.environ.get(SUBPROCESS_ENV) == "1" or any(full_env.get(v) for v in _PROCESS_VARS):
        return True
    return full_env.get("PYTHONPATH", "") != os.environ.get("PYTHONPATH", "")


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 120,
            input: str | None = None, subprocess_: bool = False) -> subprocess.CompletedProcess[str]:
    """The real CLI, as a user would run it: in this process unless the call needs its own (see above)."""
    full_env = cli_env(env)
    if subprocess_ or needs_process(full_env):
        return run_subprocess(*args, full_env=full_env, cwd=cwd, timeout=timeout, input=input)
    return run_in_process(*args, full_env=full_env, cwd=cwd, timeout=timeout, input=input)


def run_subprocess(*args: str, full_env: dict[str, str], cwd: Path | None = None, timeout: float = 120,
                   input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dspark_ckpt", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=timeout, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL)


def _decode(data: bytes) -> str:
    """What subprocess.run(text=True) makes of the bytes: the locale's codec, universal newlines."""
    return io.TextIOWrapper(io.BytesIO(data), encoding=locale.getpreferredencoding(False)).read()


def _stream(encoding: str, errors: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors, write_through=True)


def _io_encoding(full_env: dict[str, str]) -> tuple[str, str, str]:
    """The encoding and the error handlers of stdout and stderr in a new interpreter under this environment."""
    name, _, errors = full_env.get("PYTHONIOENCODING", "").partition(":")
    return name or locale.getpreferredencoding(False), errors or "strict", errors or "backslashreplace"


@contextlib.contextmanager
def _environment(full_env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(full_env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def hub_patches(full_env: dict[str, str]) -> list[tuple[Any, str, Any]]:
    """(object, attribute, value) for each huggingface_hub setting read at import time, as a new process importing
    it under `full_env` would have them (the FakeHub's client_env patches the same list)."""
    import huggingface_hub.constants as C
    import huggingface_hub.utils._cache_manager as cache_manager
    from huggingface_hub import hf_api

    home = os.path.expanduser(full_env.get("HF_HOME") or os.path.join(
        full_env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"))
    endpoint = (full_env.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    hub_cache = full_env.get("HF_HUB_CACHE") or full_env.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")
    truthy = {"1", "ON", "YES", "TRUE"}
    values: dict[str, Any] = dict(
        ENDPOINT=endpoint,
        HUGGINGFACE_CO_URL_TEMPLATE=endpoint + "/{repo_id}/resolve/{revision}/{filename}",
        HF_HOME=home, HF_HUB_CACHE=hub_cache, HF_ASSETS_CACHE=os.path.join(home, "assets"),
        HF_TOKEN_PATH=os.path.join(home, "token"), HF_XET_CACHE=os.path.join(home, "xet"),
        HF_STORED_TOKENS_PATH=os.path.join(home, "stored_tokens"),
        HF_HUB_OFFLINE=(full_env.get("HF_HUB_OFFLINE", "").upper() in truthy
                        or full_env.get("TRANSFORMERS_OFFLINE", "").upper() in truthy),
        HF_HUB_DISABLE_TELEMETRY=full_env.get("HF_HUB_DISABLE_TELEMETRY", "").upper() in truthy,
        HF_HUB_DISABLE_XET=full_env.get("HF_HUB_DISABLE_XET", "").upper() in truthy,
    )
    return [*((C, name, value) for name, value in values.items() if hasattr(C, name)),
            (cache_manager, "HF_HUB_CACHE", hub_cache), (hf_api.api, "endpoint", endpoint)]


@contextlib.contextmanager
def _hub_settings(full_env: dict[str, str]) -> Iterator[None]:
    """huggingface_hub reads its settings when it is imported; a new process would import it under `full_env`."""
    if "huggingface_hub" not in sys.modules:
        yield
        return
    from huggingface_hub.utils import _http

    patches = hub_patches(full_env)
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    for obj, name, value in patches:
        setattr(obj, name, value)
    _http.close_session()  # rebuilt on first use, from this environment (proxies, NO_PROXY)
    try:
        yield
    finally:
        _http.close_session()
        for obj, name, value in saved:
            setattr(obj, name, value)


def _interpreter_warnings() -> None:
    """A new interpreter's warning filters (no -W), and warnings printed to the (captured) stderr, not recorded."""
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__", append=True)
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category, append=True)
    warnings.showwarning = warnings._showwarning_orig  # type: ignore[attr-defined]


@contextlib.contextmanager
def _deadline(timeout: float) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_in_process(*args: str, full_env: dict[str, str], cwd: Path | None = None, timeout: float = 120,
                   input: str | None = None) -> subprocess.CompletedProcess[str]:
    from dspark_ckpt.cli.app import main

    encoding, out_errors, err_errors = _io_encoding(full_env)
    out, err = _stream(encoding, out_errors), _stream(encoding, err_errors)
    stdin = io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8")
    handlers = {s: signal.getsignal(s) for s in _SIGNALS}
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_argv, saved_cwd = sys.argv, os.getcwd()
    returncode: Any = 0
    with warnings.catch_warnings(), _environment(full_env), _hub_settings(full_env):
        _interpreter_warnings()
        try:
            if cwd is not None:
                os.chdir(cwd)
            sys.stdin, sys.stdout, sys.stderr = stdin, out, err
            sys.argv = [str(Path(sys.executable).parent / "dspark-ckpt"), *args]
            with _deadline(timeout):
                main(list(args))
        except SystemExit as done:
            returncode = done.code
        except _Timeout:
            raise subprocess.TimeoutExpired([sys.executable, "-m", "dspark_ckpt", *args], timeout) from None
        finally:
            for stream in (out, err):
                with contextlib.suppress(ValueError):
                    stream.flush()
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            sys.argv = saved_argv
            os.chdir(saved_cwd)
            for sig, handler in handlers.items():
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
    if returncode is None:
        returncode = 0
    elif not isinstance(returncode, int):  # sys.exit("text"): the text on stderr, status 1, as Python does
        err.buffer.write(f"{returncode}\n".encode(encoding, "backslashreplace"))  # type: ignore[attr-defined]
        returncode = 1
    return subprocess.CompletedProcess([sys.executable, "-m", "dspark_ckpt", *args], returncode,
                                       _decode(out.buffer.getvalue()),  # type: ignore[attr-defined]
                                       _decode(err.buffer.getvalue()))  # type: ignore[attr-defined]
