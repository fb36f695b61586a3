"""Settings files: discovery upward, pyproject vs dspark-ckpt.toml, strict parsing, paths relative to the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from dspark_ckpt.cli.settings import discover, load_settings, parse_settings, read_settings
from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.findings import Severity


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_discovers_pyproject_table_upward(tmp_path: Path) -> None:
    found = _write(tmp_path / "pyproject.toml", '[tool.dspark-ckpt]\nfail-on = "warning"\n')
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert discover(deep) == found
    settings = load_settings(deep, explicit=None, isolated=False)
    assert settings.path == found and settings.policy.fail_on is Severity.WARNING


def test_pyproject_without_our_table_is_skipped(tmp_path: Path) -> None:
    outer = _write(tmp_path / "dspark-ckpt.toml", 'ignore = ["DSP206"]\n')
    _write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "x"\n')
    assert discover(tmp_path / "pkg") == outer


def test_dspark_ckpt_toml_wins_over_pyproject_in_one_folder(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", '[tool.dspark-ckpt]\nfail-on = "info"\n')
    own = _write(tmp_path / "dspark-ckpt.toml", 'fail-on = "warning"\n')
    assert discover(tmp_path) == own


def test_nearest_file_wins(tmp_path: Path) -> None:
    _write(tmp_path / "dspark-ckpt.toml", 'fail-on = "info"\n')
    near = _write(tmp_path / "sub" / "pyproject.toml", '[tool.dspark-ckpt]\nfail-on = "warning"\n')
    assert discover(tmp_path / "sub") == near


def test_isolated_reads_nothing_and_contradicts_explicit(tmp_path: Path) -> None:
    explicit = _write(tmp_path / "dspark-ckpt.toml", 'fail-on = "info"\n')
    assert load_settings(tmp_path, explicit=None, isolated=True).path is None
    with pytest.raises(UsageError) as err:
        load_settings(tmp_path, explicit=explicit, isolated=True)
    assert err.value.code == "DSP-E024"


def test_every_key_parses(tmp_path: Path) -> None:
    table = {"select": ["dsp3", "DSP1"], "extend-select": "DSP206", "ignore": ["DSP305"], "fail-on": "warning",
             "exit-zero": True, "runtime": ["vllm==0.29.0", "sglang"], "target": "../target",
             "target-vocab-size": 200058}
    s = parse_settings(table, base=tmp_path, where="x")
    assert s.policy.select == ("DSP3", "DSP1") and s.policy.extend_select == ("DSP206",)
    assert s.policy.ignore == ("DSP305",) and s.policy.fail_on is Severity.WARNING and s.policy.exit_zero is True
    assert s.runtime == ("vllm==0.29.0", "sglang") and s.target_vocab_size == 200058
    assert s.target == str(tmp_path / "../target")  # relative to the settings file's folder, not the cwd


@pytest.mark.parametrize(("table", "code", "fragment"), [
    ({"fail_on": "error"}, "DSP-E022", "fail_on"),            # a typo is an error, not silently ignored
    ({"fail-on": "fatal"}, "DSP-E021", "fail-on"),
    ({"exit-zero": "yes"}, "DSP-E021", "exit-zero"),
    ({"target-vocab-size": "200058"}, "DSP-E021", "target-vocab-size"),
    ({"target-vocab-size": True}, "DSP-E021", "target-vocab-size"),
    ({"select": [1, 2]}, "DSP-E021", "select"),
    ({"runtime": 3}, "DSP-E021", "runtime"),
    ({"ignore": ["DSP3O1"]}, "DSP-E020", "DSP3O1"),
])
def test_bad_values_are_usage_errors(tmp_path: Path, table: dict[str, object], code: str, fragment: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_settings(table, base=tmp_path, where="settings.toml")
    assert err.value.code == code and fragment in str(err.value) and "settings.toml" in str(err.value)


def test_invalid_toml_and_missing_file_are_errors(tmp_path: Path) -> None:
    broken = _write(tmp_path / "dspark-ckpt.toml", "select = [\n")
    with pytest.raises(UsageError) as err:
        read_settings(broken)
    assert err.value.code == "DSP-E023"
    with pytest.raises(UsageError):
        load_settings(tmp_path, explicit=tmp_path / "nope.toml", isolated=False)


def test_explicit_pyproject_without_table_is_an_error(tmp_path: Path) -> None:
    bare = _write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    with pytest.raises(UsageError) as err:
        read_settings(bare)
    assert "[tool.dspark-ckpt]" in str(err.value)
