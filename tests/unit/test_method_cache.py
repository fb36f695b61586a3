"""dspark_ckpt/cli/method_cache.py: dataclasses' generated methods compiled once and kept; the classes are the same."""

from __future__ import annotations

import dataclasses
import marshal
import os
import stat
import sys
from pathlib import Path

import pytest

import dspark_ckpt.cli  # noqa: F401 - installs the cache, as every CLI start does
from dspark_ckpt.cli import method_cache


def _define() -> type:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Point:
        """A record as the package writes them."""

        x: int
        label: str = "p"

    return Point


def test_the_cli_package_installs_it_and_classes_behave_as_dataclasses_builds_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert vars(dataclasses).get("exec") is method_cache.cached_exec
    first, second = _define(), _define()  # the second from the kept code
    with monkeypatch.context() as m:
        m.delattr(dataclasses, "exec")  # dataclasses' own exec of the text
        plain = _define()
    assert first.__init__.__annotations__ == plain.__init__.__annotations__
    assert first.__init__.__code__.co_code == plain.__init__.__code__.co_code
    for cls in (first, second):
        p = cls(1)
        assert p == cls(1) and p != cls(2) and hash(p) == hash(cls(1))
        assert repr(p).endswith("Point(x=1, label='p')")
        with pytest.raises(dataclasses.FrozenInstanceError):
            p.x = 3  # type: ignore[misc]
        assert cls.__init__.__annotations__ == plain.__init__.__annotations__


def test_kept_code_round_trips_through_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _define()
    monkeypatch.setitem(method_cache._state, "added", True)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "__pycache__" / "dataclass-methods.test.marshal"
    assert method_cache.save(path)
    mode = stat.S_IMODE(path.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # readable as a .pyc is, not the owner's only
    loaded = method_cache._load(path)
    assert loaded.keys() == method_cache._codes.keys()
    text = next(k for k in loaded if "def __init__(" in k and "_type_x" in k)
    assert marshal.loads(loaded[text]).co_filename == "<string>"  # type: ignore[arg-type]
    assert not list(path.parent.glob(".*"))  # the temporary file was renamed, not left


def test_nothing_written_where_bytecode_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(method_cache._state, "added", True)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "__pycache__" / "m.marshal"
    assert not method_cache.save(path) and not path.exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert not method_cache.save(blocked / "m.marshal")  # its folder cannot be made: no error, nothing written


@pytest.mark.parametrize("content", [b"", b"not marshal", marshal.dumps([1, 2]), marshal.dumps({"a": 1})])
def test_a_damaged_file_is_an_empty_cache(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "m.marshal"
    path.write_bytes(content)
    assert method_cache._load(path) == {}
    assert method_cache._load(tmp_path / "absent.marshal") == {}
