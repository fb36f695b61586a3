"""`check` as a CI gate, through the real CLI: exit-code matrix, policy and settings precedence, formats, output."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from conftest import make_checkpoint, run_cli

SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace: a clean draft, a padded one, a warning-only one (on SGLang 0.5.16+, which drafts with the
    target's head: DSP307), an empty folder and a target."""
    root = tmp_path_factory.mktemp("ws")
    make_checkpoint(root / "clean", vocab=96, draft_vocab=96, target_vocab=96)
    make_checkpoint(root / "padded", vocab=120, draft_vocab=120, target_vocab=96)
    make_checkpoint(root / "warned", vocab=96, draft_vocab=96, target_vocab=96,
                    config_extra={"markov_head_type": "vanilla", "mask_token_id": 0})
    (root / "empty").mkdir()
    (root / "target").mkdir()
    (root / "target" / "config.json").write_text(json.dumps({"vocab_size": 96}))
    return root


def check(ws: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return run_cli("check", *args, cwd=cwd or ws, env=env)


T96 = ("--target-vocab-size", "96", "--isolated")
SGLANG = ("--runtime", "sglang>=0.5.16")  # warned loads but DSP307 (info since issue 41: nothing to repair)
VLLM29 = ("--runtime", "vllm==0.29.0")  # padded fails to load: DSP302 (error)


@pytest.mark.parametrize(("args", "code"), [
    (("clean", *T96), 0),
    (("warned", *T96, *SGLANG), 0),
    (("warned", *T96, *SGLANG, "--fail-on", "warning"), 0),
    (("warned", *T96, *SGLANG, "--fail-on", "info"), 1),
    (("warned", *T96, *SGLANG, "--fail-on", "info", "--exit-zero"), 0),
    (("padded", *T96, *VLLM29), 1),
    (("padded", *T96, *VLLM29, "--ignore", "DSP302"), 0),
    (("padded", *T96, *VLLM29, "--select", "DSP1,DSP2"), 0),
    (("padded", *T96, *VLLM29, "--select", "DSP3", "--ignore", "DSP30"), 0),
    (("padded", *T96, *VLLM29, "--select", "DSP302", "--ignore", "DSP30"), 1),
    (("padded", *T96, *VLLM29, "--select", "DSP1", "--extend-select", "DSP302"), 1),
    # Never a green gate when nothing was checked, whatever the policy says:
    (("no-such-draft", *T96), 2),
    (("no-such-draft", *T96, "--exit-zero"), 2),
    (("empty", *T96, "--exit-zero", "--ignore", "DSP"), 2),
    (("clean", "--target", "no-such-target", "--isolated"), 2),
    (("clean", *T96, "--select", "DSP999"), 2),
    (("clean", *T96, "--fail-on", "fatal"), 2),
    (("clean", *T96, "--settings", "missing.toml"), 2),
])
def test_exit_code_matrix(ws: Path, args: tuple[str, ...], code: int) -> None:
    result = check(ws, *args)
    assert result.returncode == code, result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_not_a_checkpoint_names_the_reason(ws: Path) -> None:
    result = check(ws, "empty", *T96, "--exit-zero")
    assert "DSP-E012" in result.stderr and "not a checkpoint" in result.stderr


def _settings(ws: Path, name: str, text: str) -> Path:
    folder = ws / name
    (folder / "sub").mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(text)
    return folder


def test_settings_file_is_found_upward_and_flags_override_it(ws: Path) -> None:
    repo = _settings(ws, "repo-a", '[tool.dspark-ckpt]\nfail-on = "info"\nruntime = ["sglang>=0.5.16"]\n'
                                   'target = "../target"\n')
    draft = str(ws / "warned")
    assert check(ws, draft, cwd=repo / "sub").returncode == 1  # info fails, T from the file's relative target
    assert check(ws, draft, "--fail-on", "error", cwd=repo / "sub").returncode == 0
    assert check(ws, draft, "--isolated", "--target-vocab-size", "96", *SGLANG, cwd=repo / "sub").returncode == 0
    pinned = json.loads(check(ws, draft, "--format", "json", cwd=repo / "sub").stdout)
    assert pinned["runtimes"] == [f"sglang==0.5.{n}" for n in range(16, 24)]
    assert pinned["checkpoints"][0]["target_vocab_source"].endswith("target/config.json:vocab_size")
    flagged = json.loads(check(ws, draft, "--format", "json", *VLLM29, cwd=repo / "sub").stdout)
    assert flagged["runtimes"] == ["vllm==0.29.0"]


def test_settings_select_and_ignore_with_cli_precedence(ws: Path) -> None:
    repo = _settings(ws, "repo-b", '[tool.dspark-ckpt]\ntarget-vocab-size = 96\nruntime = "vllm==0.29.0"\n'
                                   'ignore = ["DSP302"]\n')
    draft = str(ws / "padded")
    assert check(ws, draft, cwd=repo).returncode == 0                           # the file ignores DSP302
    assert check(ws, draft, "--ignore", "DSP206", cwd=repo).returncode == 1     # --ignore replaces the file's
    assert check(ws, draft, "--extend-select", "DSP302", cwd=repo).returncode == 0  # ignore still wins a tie


def test_toml_config_is_settings_and_both_forms_conflict(ws: Path) -> None:
    (ws / "strict.toml").write_text('fail-on = "info"\ntarget-vocab-size = 96\nruntime = ["sglang>=0.5.16"]\n')
    assert check(ws, "warned", "--config", "strict.toml").returncode == 1
    assert check(ws, "warned", "--settings", "strict.toml").returncode == 1
    both = check(ws, "warned", "--config", "strict.toml", "--settings", "strict.toml")
    assert both.returncode == 2 and "DSP-E024" in both.stderr
    isolated = check(ws, "warned", "--settings", "strict.toml", "--isolated")
    assert isolated.returncode == 2 and "DSP-E024" in isolated.stderr


def test_bad_settings_file_is_an_error_with_its_path(ws: Path) -> None:
    repo = _settings(ws, "repo-c", '[tool.dspark-ckpt]\nfail_on = "warning"\n')
    result = check(ws, str(ws / "clean"), cwd=repo)
    assert result.returncode == 2 and "DSP-E022" in result.stderr and "fail_on" in result.stderr


def test_sarif_to_output_file_validates(ws: Path) -> None:
    out = ws / "report.sarif"
    result = check(ws, "clean", "padded", *T96, *VLLM29, "--format", "sarif", "--output", str(out))
    assert result.returncode == 1 and result.stdout == ""
    assert "report written to" in result.stderr and "1 error(s)" in result.stderr
    log = json.loads(out.read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["DSP302"]
    assert (out.stat().st_mode & 0o777) != 0o600 or (out.stat().st_mode & 0o044) == 0  # follows the umask


def test_output_to_a_missing_folder_creates_it(ws: Path) -> None:
    """`-o nodir/x.sarif` makes the folder, as the Action's script does (issue 41)."""
    result = check(ws, "clean", *T96, "--format", "sarif", "--output", str(ws / "nodir" / "deeper" / "x.sarif"))
    assert result.returncode == 0, result.stderr
    assert json.loads((ws / "nodir" / "deeper" / "x.sarif").read_text())["version"] == "2.1.0"


def test_output_under_a_file_is_an_error(ws: Path) -> None:
    (ws / "a-file").write_text("")
    result = check(ws, "clean", *T96, "--format", "json", "--output", str(ws / "a-file" / "r.json"))
    assert result.returncode == 2 and "DSP-E030" in result.stderr


def test_junit_on_stdout_parses(ws: Path) -> None:
    result = check(ws, "padded", *T96, *VLLM29, *SGLANG, "--format", "junit")
    root = ET.fromstring(result.stdout)
    # vLLM 0.29 (DSP302) and SGLang 0.5.16-0.5.23 (no markov_head_type: DSP344, one case for the releases) fail.
    assert root.tag == "testsuites" and root.get("failures") == "2"
    assert [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None] == [
        "runtime vllm==0.29.0", "runtime sglang 0.5.16-0.5.23"]
    assert result.returncode == 1


def test_github_format_appends_the_step_summary(ws: Path) -> None:
    summary = ws / "summary.md"
    summary.write_text("earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    result = check(ws, "padded", *T96, *VLLM29, "--format", "github", env=env)
    assert result.returncode == 1
    assert result.stdout.startswith("::error file=padded/config.json,line=1,title=DSP302 reduced-without-d2t::")
    check(ws, "clean", *T96, "--format", "github", env=env)
    text = summary.read_text()
    assert text.startswith("earlier step\n") and text.count("## dspark-ckpt:") == 2
    assert "| vllm 0.29.0 | ❌ no | DSP302:" in text


def test_markdown_format(ws: Path) -> None:
    result = check(ws, "padded", *T96, *VLLM29, "--format", "markdown")
    assert result.stdout.startswith("## dspark-ckpt: ❌ 1 finding(s) at or above error")


def test_quiet_and_verbose(ws: Path) -> None:
    quiet = check(ws, "padded", *T96, *VLLM29, "-q")
    assert "Compatibility" not in quiet.stdout and "DSP302" in quiet.stdout and quiet.stderr == ""
    assert quiet.stdout.rstrip().endswith("1 checkpoint(s): 1 error(s), 0 warning(s), 0 info")
    verbose = check(ws, "padded", *T96, *VLLM29, "-v", "--ignore", "DSP302")
    assert "settings: ignored (--isolated)" in verbose.stderr
    assert "ignore DSP302" in verbose.stderr and "1 finding(s) hidden" in verbose.stderr


def test_color_choices_and_no_color(ws: Path) -> None:
    red = "\x1b[1;31m"
    always = check(ws, "padded", *T96, *VLLM29, "--color", "always", env={"NO_COLOR": "1"})
    assert red in always.stdout  # an explicit flag beats NO_COLOR
    auto = check(ws, "padded", *T96, *VLLM29, env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert red not in auto.stdout
    never = check(ws, "padded", *T96, *VLLM29, "--color", "never", env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in never.stdout


def test_checkpoint_folders_checks_each_folder_once(ws: Path) -> None:
    (ws / "notes.txt").write_text("not a checkpoint file")
    files = ["padded/config.json", "padded/model.safetensors", "target/config.json", "notes.txt"]
    result = check(ws, "--checkpoint-folders", *files, *T96, *VLLM29, "--format", "json")
    sources = [c["source"] for c in json.loads(result.stdout)["checkpoints"]]
    assert sources == ["padded"]  # target/ has a config.json but no weights, notes.txt is no checkpoint file
    assert result.returncode == 1
    nothing = check(ws, "--checkpoint-folders", "notes.txt", "target/config.json", *T96)
    assert nothing.returncode == 0 and "0 checkpoint(s)" in nothing.stdout
