"""A worker that imports the CLI once, then runs each hostile case in a child forked from it, under the limits.

Started by limits.py (`python fork_server.py`); one JSON request per line on stdin, one JSON answer per line on
stdout. A request names the argv, the environment, the working folder and two files for the child's stdout and
stderr. The child is what a new `python -m dspark_ckpt` would be, less the interpreter start and the imports:
- its environment is exactly the request's (putenv included), its folder the request's, stdin /dev/null;
- fds 1 and 2 are the two files, with new text streams over them (PYTHONIOENCODING honoured);
- a PYTHONPATH entry that the server did not start with is put on sys.path, and a sitecustomize.py in it runs,
  as the interpreter's `site` would run it (the Hub tests' network guard is one);
- RLIMIT_AS is set before the command starts, so the command's own allocations meet it as in a subprocess.

huggingface_hub and torch are not imported here: each reads its environment when imported, so the child imports
them under the request's environment, as a new process would. The answer gives the exit status (negative: the
signal), the wall time, and the child's own CPU time from wait4 (a forked child's counters start at zero).
"""

from __future__ import annotations

import io
import json
import os
import resource
import runpy
import signal
import sys
import time
import traceback
from typing import Any

_ANSWERS = os.fdopen(os.dup(1), "w", buffering=1)


def _prepare(request: dict[str, Any]) -> None:
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    name, _, handler = os.environ.get("PYTHONIOENCODING", "").partition(":")
    encoding = name or "utf-8"
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=encoding)
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding=encoding,
                                  errors=handler or "strict")
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding=encoding,
                                  errors=handler or "backslashreplace", line_buffering=True)
    for entry in reversed([p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
            if os.path.isfile(os.path.join(entry, "sitecustomize.py")):
                runpy.run_path(os.path.join(entry, "sitecustomize.py"), run_name="sitecustomize")
    limit = request.get("memory_limit")
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _child(request: dict[str, Any]) -> None:
    status = 1
    try:
        _prepare(request)
        if "code" in request:  # the server's own tests: a snippet in place of the CLI
            exec(compile(request["code"], "<request>", "exec"), {"__name__": "__main__"})
        else:
            from dspark_ckpt.cli.app import main

            sys.argv = ["dspark-ckpt", *request["args"]]
            main(list(request["args"]))
        status = 0
    except SystemExit as done:
        code = done.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            status = code
        else:
            print(code, file=sys.stderr)
    except BaseException:  # what the interpreter would print for an exception nothing caught
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status & 0xFF)


def _run(request: dict[str, Any]) -> dict[str, Any]:
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(request)
    deadline = started + float(request["timeout"])
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            return {"timed_out": True, "wall": time.monotonic() - started,
                    "cpu": usage.ru_utime + usage.ru_stime, "returncode": -signal.SIGKILL}
        time.sleep(0.002)
    returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return {"timed_out": False, "wall": time.monotonic() - started, "cpu": usage.ru_utime + usage.ru_stime,
            "returncode": returncode}


def serve() -> None:
    from dspark_ckpt.cli import app

    for name in app.COMMANDS:  # every command module, imported once for all the children
        app.build_command(name)
    assert "huggingface_hub" not in sys.modules and "torch" not in sys.modules
    _ANSWERS.write("ready\n")
    for line in sys.stdin:
        _ANSWERS.write(json.dumps(_run(json.loads(line))) + "\n")


if __name__ == "__main__":
    serve()
