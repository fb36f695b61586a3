"""The conventions a user of ruff or `hf` expects, checked on the real CLI in subprocesses: -h, -V, version/env,
--output-format, --color/--no-color, -q/-v, -e, --revision, completion, rules/explain over both registries,
pipe-friendly output and help text."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli
from hub.conftest import cli, hub, net_guard, publish  # noqa: F401 - the FakeHub fixtures, for --revision

from dspark_ckpt.cli.app import COMMANDS
from dspark_ckpt.model.error_catalog import ERRORS
from dspark_ckpt.model.rule_catalog import RULES

EXAMPLE = Path(__file__).parents[2] / "examples" / "inkling-small-dspark"
EXAMPLE_TARGET = EXAMPLE.parent / "inkling-small-target"
ALL_COMMANDS = [*COMMANDS, "env"]
REPORT_COMMANDS = ("check", "fix", "verify")


def piped(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as `dspark-ckpt ... | grep`: stdout and stderr are pipes, and no COLUMNS is set."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run([sys.executable, "-m", "dspark_ckpt", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120, check=False)


@pytest.mark.parametrize("command", ["", *ALL_COMMANDS])
def test_dash_h_is_help_everywhere(command: str) -> None:
    done = run_cli(*([command] if command else []), "-h")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Usage: dspark-ckpt {command}".rstrip() + " ")
    assert "-h, --help" in done.stdout


def test_dash_capital_v_and_version_flag() -> None:
    for flag in ("-V", "--version"):
        done = run_cli(flag)
        assert done.returncode == 0 and re.fullmatch(r"dspark-ckpt \d+\.\d+\.\d+\n", done.stdout)


@pytest.mark.parametrize("command", ["version", "env"])
def test_version_command_lists_what_a_bug_report_needs(command: str) -> None:
    done = run_cli(command)
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()]
    for name in ("dspark-ckpt", "python", "safetensors", "huggingface_hub", "torch", "vllm", "sglang"):
        assert name in names
    doc = json.loads(run_cli(command, "--output-format", "json").stdout)
    versions = {p["name"]: p["version"] for p in doc["packages"]}
    assert versions["python"] == ".".join(map(str, sys.version_info[:3]))
    assert run_cli(command, "-q").stdout.strip() == versions["dspark-ckpt"]


def test_version_reads_metadata_and_imports_none_of_them() -> None:
    probe = ("import sys\nfrom dspark_ckpt.cli.app import main\ntry:\n    main(['version', '-v'])\n"
             "except SystemExit:\n    pass\n"
             "heavy = ('torch', 'vllm', 'sglang', 'safetensors', 'huggingface_hub')\n"
             "print('IMPORTED', sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "IMPORTED []" in done.stdout


def test_help_and_version_import_no_command_module() -> None:
    probe = ("import sys\nfrom dspark_ckpt.cli.app import main\nfor argv in (['--help'], ['-V']):\n"
             "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
             "print('LOADED', sorted(m for m in sys.modules if m.startswith('dspark_ckpt.')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    loaded = done.stdout.split("LOADED", 1)[1]
    for module in ("cli.check", "cli.fix", "cli.verify", "cli.rules", "check.", "repair", "sources", "model."):
        assert f"dspark_ckpt.{module}" not in loaded, loaded


def test_root_help_lists_every_command_with_its_whole_summary() -> None:
    import importlib

    out = run_cli("--help").stdout
    for name, entry in COMMANDS.items():
        function = getattr(importlib.import_module(entry.module), entry.function)
        first_line = (function.__doc__ or "").strip().splitlines()[0]
        assert entry.summary == first_line, f"app.COMMANDS[{name!r}] differs from {entry.module}.{entry.function}"
        assert re.search(rf"^  {name} +{re.escape(entry.summary.rstrip('.'))}", out, flags=re.MULTILINE), out
    assert "..." not in out.split("Commands:")[1]


@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_shared_options_on_every_command(command: str) -> None:
    out = run_cli(command, "-h").stdout
    for option in ("--color", "--no-color", "-q, --quiet", "-v, --verbose", "--format, --output-format"):
        assert option in out, f"{command} -h lacks {option}"
    if command in REPORT_COMMANDS:
        assert "--revision" in out or command == "verify"
    if command in ("check", "verify"):
        assert "-e, --exit-zero" in out


@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_help_shows_real_metavars(command: str) -> None:
    out = run_cli(command, "-h").stdout
    usage = out.splitlines()[0]
    assert "{" not in usage and "<" not in usage, usage
    assert not re.search(r"<(str|int|path|list\[str\]|float)>", out), out
    if command in REPORT_COMMANDS:
        assert "CHECKPOINTS..." in usage


def test_select_extend_select_and_ignore_say_different_things() -> None:
    out = " ".join(run_cli("check", "-h").stdout.split())
    helps = [re.search(rf"{flag} CODES (.+?) --", out)[1] for flag in ("--select", "--extend-select", "--ignore")]
    assert len(set(helps)) == 3, helps


def test_usage_errors_carry_no_pydantic_prefix() -> None:
    done = run_cli("check", str(EXAMPLE), "--fail-on", "fatal")
    assert done.returncode == 2 and "Invalid value for '--fail-on'" in done.stderr
    assert "Value error" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("argv", [
    ["check", str(EXAMPLE)], ["fix", str(EXAMPLE), "--dry-run"], ["verify", str(EXAMPLE)], ["rules"],
    ["explain", "DSP301"], ["version"],
])
def test_quiet_and_verbose_together_is_a_usage_error(argv: list[str]) -> None:
    done = run_cli(*argv, "-q", "-v", "--target-vocab-size", "200058") if argv[0] in REPORT_COMMANDS \
        else run_cli(*argv, "-q", "-v")
    assert done.returncode == 2 and "[DSP-E025]" in done.stderr, done.stderr


@pytest.mark.parametrize("argv", [["check", str(EXAMPLE)], ["rules"], ["version"]])
def test_no_color_beside_color_always_is_a_usage_error(argv: list[str]) -> None:
    done = run_cli(*argv, "--no-color", "--color", "always")
    assert done.returncode == 2 and "[DSP-E103]" in done.stderr, done.stderr


def test_color_always_and_no_color() -> None:
    args = ("check", str(EXAMPLE), "--target", str(EXAMPLE_TARGET))
    coloured = run_cli(*args, "--color", "always")
    plain = run_cli(*args, "--no-color")
    assert "\x1b[" in coloured.stdout and "\x1b[" not in plain.stdout
    assert coloured.returncode == plain.returncode == 1
    assert "\x1b[" in run_cli("explain", "DSP301", "--color", "always").stdout


def test_dash_e_is_exit_zero() -> None:
    args = ("check", str(EXAMPLE), "--target", str(EXAMPLE_TARGET))
    assert run_cli(*args).returncode == 1
    assert run_cli(*args, "-e").returncode == 0


def test_output_format_is_format() -> None:
    args = ("check", str(EXAMPLE), "--target", str(EXAMPLE_TARGET))
    assert json.loads(run_cli(*args, "--output-format", "json").stdout) == json.loads(
        run_cli(*args, "--format", "json").stdout)


def test_shell_completion() -> None:
    # Typer detects the shell from the process tree (shellingham): run it from bash, as a user does; a test process
    # detached from any shell (a background job whose shell exited) would get "Shell  not supported."
    script = subprocess.run(["bash", "-c", f"{shlex.quote(sys.executable)} -m dspark_ckpt --show-completion; exit $?"],
                            capture_output=True, text=True, check=False, timeout=120)
    assert script.returncode == 0 and "_DSPARK_CKPT_COMPLETE" in script.stdout, script.stderr
    env = {"_DSPARK_CKPT_COMPLETE": "complete_bash", "COMP_WORDS": "dspark-ckpt ch", "COMP_CWORD": "1"}
    assert run_cli(env=env).stdout.split() == ["check"]
    env = {**env, "COMP_WORDS": "dspark-ckpt check --output-f", "COMP_CWORD": "2"}
    assert run_cli(env=env).stdout.split() == ["--output-format"]


# --- rules and explain: one view over the finding and error registries ---

def test_rules_lists_both_registries_and_takes_a_prefix() -> None:
    listed = [line.split()[0] for line in run_cli("rules").stdout.splitlines()]
    assert listed == sorted(RULES) + list(ERRORS)
    for prefix in ("DSP3", "dsp30", "DSP-E", "DSP-E05"):
        codes = [line.split()[0] for line in run_cli("rules", prefix).stdout.splitlines()]
        assert codes and all(c.startswith(prefix.upper()) for c in codes)
    assert run_cli("rules", "DSP-E07", "-q").stdout.split() == [c for c in ERRORS if c.startswith("DSP-E07")]
    done = run_cli("rules", "DSP9")
    assert done.returncode == 2 and "[DSP-E005]" in done.stderr


def test_rules_as_json() -> None:
    doc = json.loads(run_cli("rules", "--output-format", "json").stdout)
    assert [d["code"] for d in doc] == sorted(RULES) + list(ERRORS)
    first_error = next(d for d in doc if d["kind"] == "error")
    assert first_error["severity"] == "exit 2" and first_error["summary"] == ERRORS[first_error["code"]].summary


@pytest.mark.parametrize("code", sorted(c for c, e in ERRORS.items() if not e.retired))
def test_explain_documents_every_operational_error(code: str) -> None:
    done = run_cli("explain", code.lower())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{code} {ERRORS[code].slug} (operational error, exit 2)")
    for section in ("What it means", "Why it matters", "Example", "How to fix"):
        assert section in done.stdout


def test_explain_takes_a_prefix_a_slug_and_json() -> None:
    out = run_cli("explain", "DSP-E05").stdout
    assert [c for c in ERRORS if c.startswith("DSP-E05")] == re.findall(r"^(DSP-E05\d) ", out, flags=re.MULTILINE)
    assert run_cli("explain", "fix-lock-held").stdout.startswith("DSP-E071 ")
    [doc] = json.loads(run_cli("explain", "DSP301", "--output-format", "json").stdout)
    assert doc["code"] == "DSP301" and doc["what"] == RULES["DSP301"].what
    done = run_cli("explain", "DSP-E999")
    assert done.returncode == 2 and "[DSP-E005]" in done.stderr


# --- pipe-friendly: no hard wraps off a terminal, no trailing padding ---

def test_rules_piped_to_grep_gives_whole_lines() -> None:
    out = piped("rules").stdout
    lines = out.splitlines()
    for code, rule in RULES.items():
        [line] = [x for x in lines if x.startswith(code + " ")]
        assert line.endswith(rule.summary), line
    mask = [x for x in lines if "mask" in x]
    assert mask and all(re.match(r"DSP(-E)?\d{3} ", x) for x in mask)


def test_reports_off_a_terminal_are_neither_wrapped_nor_padded(tmp_path: Path) -> None:
    args = ("check", str(EXAMPLE), "--target", str(EXAMPLE_TARGET))
    for done in (piped(*args), run_cli(*args), piped(*args, "--format", "markdown"), piped("explain", "DSP3")):
        assert done.stdout and not [line for line in done.stdout.splitlines() if line != line.rstrip()]
    out = piped(*args).stdout
    assert "Reduced-vocabulary Qwen3 DSpark checkpoints must include a d2t mapping so sampled draft ids can be " \
           "converted to target ids." in out  # a long runtime error stays on one line, in the table too
    report = tmp_path / "report.txt"
    run_cli(*args, "-o", str(report))
    assert not [line for line in report.read_text().splitlines() if line != line.rstrip()]


def test_errors_are_one_line_however_long() -> None:
    missing = "/nonexistent/" + "very-long-folder-name/" * 12 + "draft"
    done = piped("check", missing)
    assert done.returncode == 2
    [line] = [x for x in done.stderr.splitlines() if x.startswith("dspark-ckpt: error")]
    assert missing in line and "[DSP-E010]" in line


# --- --revision beside org/repo@rev ---

def test_revision_picks_the_commit_of_each_hub_repo(tmp_path: Path, hub: object) -> None:  # noqa: F811
    old = make_checkpoint(tmp_path / "old", vocab=96, draft_vocab=64, target_vocab=96, d2t=True)
    sha = publish(hub, "org/draft", old, tags=["v1"])  # type: ignore[arg-type]
    hub.add_commit("org/draft", {"README.md": b"newer"})  # type: ignore[attr-defined]
    done = cli(hub, tmp_path, "check", "org/draft", "--revision", "v1", "--target-vocab-size", "96",
               "--runtime", "vllm>=0.25.0", "--format", "json")  # Qwen3DSparkModel's releases (registry.py @ v0.25.0)
    assert done.returncode == 0, done.stderr
    [doc] = json.loads(done.stdout)["checkpoints"]
    assert doc["revision"] == sha


@pytest.mark.parametrize(("args", "code"), [
    (["org/draft@v1", "--revision", "v2"], "DSP-E101"),
    (["--revision", "v2", str(EXAMPLE)], "DSP-E102"),
    (["org/draft", "--revision", "a@b"], "DSP-E100"),
])
def test_revision_conflicts_are_usage_errors_before_any_request(args: list[str], code: str) -> None:
    done = run_cli("check", *args, "--target-vocab-size", "96", env={"HF_ENDPOINT": "http://127.0.0.1:9"})
    assert done.returncode == 2 and f"[{code}]" in done.stderr, done.stderr
