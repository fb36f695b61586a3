"""Process start-up: the methods `dataclasses` generates, compiled once and kept like bytecode.

`dataclasses` builds every generated method (`__init__`, `__repr__`, `__eq__`, a frozen class's `__setattr__`,
`__delattr__` and `__hash__`) by `exec` of source text, so each start of the CLI parses and compiles that text again
for its ~80 record classes: about 180 M instructions of a check's ~930 M (docs/architecture.md, "Start-up").
`install()` gives the dataclasses module an `exec` that compiles each distinct text once per interpreter version and
keeps the code objects in the package's `__pycache__`, as the interpreter keeps `.pyc` files (and, like it, writes
nothing under PYTHONDONTWRITEBYTECODE, or where it cannot write); later starts exec the kept code. The same text
compiled the same way (no inherited `__future__` flags, as `exec` of a string from dataclasses.py has none) is the same
code: every class is what dataclasses would have built. Installed by the CLI package only (`dspark_ckpt/cli/__init__.py`), so a
program that imports dspark_ckpt as a library keeps its own dataclasses untouched.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import marshal
import os
import sys
import tempfile
from pathlib import Path
from types import CodeType
from typing import Any

CACHE = Path(__file__).with_name("__pycache__") / f"dataclass-methods.{sys.implementation.cache_tag}.marshal"
LIMIT = 4096  # texts kept at most (the package defines ~150 classes; anything beyond is another program's)
# text -> its code, or the code's marshal bytes until first used (a start reads the file as bytes: `--version`,
# which defines two classes, does not unmarshal the check's hundreds)
_codes: dict[str, CodeType | bytes] = {}
_state = {"added": False}


def _load(path: Path) -> dict[str, CodeType | bytes]:
    """The kept code objects, each as its marshal bytes; nothing when the file is absent, unreadable or not this
    format."""
    try:
        with path.open("rb") as handle:
            found = marshal.load(handle)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, bytes)}


def cached_exec(source: Any, globals: dict[str, Any] | None = None, locals: Any = None) -> None:
    """`exec` as dataclasses calls it; a source text is compiled once and kept."""
    if isinstance(source, str):
        code = _codes.get(source)
        if isinstance(code, bytes):
            try:
                code = _codes[source] = marshal.loads(code)
            except (EOFError, ValueError, TypeError):
                code = None
        if not isinstance(code, CodeType):
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if len(_codes) < LIMIT:
                _codes[source] = code
                _state["added"] = True
        source = code
    builtins.exec(source, globals, locals)  # noqa: S102 - dataclasses' own exec, of the code it compiled


def save(path: Path = CACHE) -> bool:
    """Write the kept code objects if this process compiled new ones (atomically; never where the interpreter would
    not write bytecode). Returns whether it wrote."""
    if not _state["added"] or sys.dont_write_bytecode:
        return False
    try:
        path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as handle:
                marshal.dump({k: v if isinstance(v, bytes) else marshal.dumps(v) for k, v in _codes.items()}, handle)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # readable as a .pyc is (mkstemp makes it the owner's only)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, ValueError):
        return False
    _state["added"] = False
    return True


def install(path: Path = CACHE) -> bool:
    """Give dataclasses the caching exec (once per process). False where this interpreter has no cache tag."""
    if sys.implementation.cache_tag is None:
        return False
    if vars(dataclasses).get("exec") is cached_exec:
        return True
    _codes.update(_load(path))
    dataclasses.exec = cached_exec  # type: ignore[attr-defined]  # found before the builtin by its functions
    atexit.register(save, path)
    return True
