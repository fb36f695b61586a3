"""What every command resolves the same way before it works: settings, policy, runtimes, target and token."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from dspark_ckpt.check.hints import HintInputs, target_flags
from dspark_ckpt.check.policy import DEFAULT_GATE, Layer, Policy, normalize, resolve
from dspark_ckpt.cli.options import ColorChoice
from dspark_ckpt.cli.settings import Settings, discover, load_settings, nearest, read_settings
from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.findings import Severity
from dspark_ckpt.model.report import Report
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.write import stderr_console
from dspark_ckpt.runtimes.selectors import RuntimeVersion, folded, parse_selectors
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME
from dspark_ckpt.sources.target import resolve_target
from dspark_ckpt.version import __version__


@dataclass(frozen=True, slots=True)
class Common:
    """The shared flags as given on the command line (None: not given, the settings file may say)."""

    target: str | None = None
    target_vocab_size: int | None = None
    runtime: list[str] | None = None
    config: Path | None = None
    settings_file: Path | None = None
    isolated: bool = False
    select: list[str] | None = None
    extend_select: list[str] | None = None
    ignore: list[str] | None = None
    fail_on: Severity | None = None
    exit_zero: bool | None = None
    quiet: bool = False
    verbose: bool = False
    color: ColorChoice = ColorChoice.AUTO
    token: str | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """One command's resolved inputs: the same for check, fix and verify."""

    settings: Settings
    policy: Policy
    runtimes: tuple[RuntimeVersion, ...]
    runtime_selectors: tuple[str, ...] | None  # as given (fix passes them on to its planner), None: default
    target: TargetVocab | None
    config: Path | None  # the draft config.json for a single .safetensors file, if any
    token: str | None
    common: Common
    hints: HintInputs = field(default_factory=HintInputs)  # target and runtimes as given, for hint commands

    @property
    def repair_runtimes(self) -> tuple[RuntimeVersion, ...]:
        """What fix repairs for: what check gates on, every chosen runtime, else DEFAULT_GATE's (issue 41)."""
        if self.runtime_selectors is not None:
            return self.runtimes
        return tuple(r for r in self.runtimes if self.policy.gate is None or r.runtime in self.policy.gate)

    @property
    def repair_selectors(self) -> tuple[str, ...]:
        """The selectors fix plans with: as given, else the default gate's runtimes named bare (`vllm`)."""
        return self.runtime_selectors or (self.policy.gate or DEFAULT_GATE)

    def stays_broken(self, not_repaired_for: tuple[str, ...], older: tuple[str, ...]) -> tuple[str, ...]:
        """Of the releases a plan leaves unrepaired, those check gates on: all but the releases older than the
        draft's architecture reached through a broad selector (a release pinned with `==` gates)."""
        return tuple(r for r in not_repaired_for if r not in older or r in self.policy.exact)


def _split_config(config: Path | None, settings_file: Path | None) -> tuple[Path | None, Path | None]:
    """A `.toml` --config is settings: a draft config is JSON, so the suffix cannot be ambiguous."""
    if config is not None and config.suffix.lower() == ".toml":
        if settings_file is not None:
            raise UsageError("give the settings file once: --settings or a .toml --config", code="DSP-E024")
        return None, config
    return config, settings_file


def cli_layer(c: Common) -> Layer:
    return Layer(select=normalize(c.select, "--select") if c.select is not None else None,
                 extend_select=normalize(c.extend_select or [], "--extend-select"),
                 ignore=normalize(c.ignore, "--ignore") if c.ignore is not None else None,
                 fail_on=c.fail_on, exit_zero=c.exit_zero)


def resolve_run(c: Common, *, need_target: bool = True, settings: Settings | None = None) -> Run:
    """`settings`: those of one checkpoint (`Runs.for_checkpoint`), else the file found from the working folder."""
    if c.quiet and c.verbose:
        raise UsageError("--quiet and --verbose contradict each other", code="DSP-E025")
    config, settings_file = _split_config(c.config, c.settings_file)
    if settings is None:
        settings = load_settings(Path.cwd(), explicit=settings_file, isolated=c.isolated)
    selectors = c.runtime or (list(settings.runtime) if settings.runtime is not None else None)
    # Runtimes chosen (flag or settings): every one of them gates. None chosen: all are shown, DEFAULT_GATE gates.
    runtimes = tuple(parse_selectors(selectors))
    exact = frozenset(str(r) for s in selectors or () if "==" in s for r in parse_selectors([s]))
    policy = replace(resolve(settings.policy, cli_layer(c)), gate=None if selectors else DEFAULT_GATE, exact=exact,
                     allow_no_verdict=bool(settings.allow_no_verdict))  # check's --allow-no-verdict overrides it
    target, size = c.target, c.target_vocab_size
    if target is None and size is None:  # either flag replaces both settings keys: they are one choice
        target, size = settings.target, settings.target_vocab_size
    target_vocab = resolve_target(target, size, token=c.token) if need_target else None
    chosen = tuple(selectors) if selectors else None
    return Run(settings, policy, runtimes, chosen, target_vocab, config, c.token, c,
               HintInputs(target_flags(target, size), chosen))


class Runs:
    """Each checkpoint's run, as ruff resolves each file's settings: the nearest settings file above it and its
    `per-path` entry (cli/settings.py `nearest`), resolved once per distinct settings (issue 41)."""

    def __init__(self, run: Run, *, need_target: bool = True) -> None:
        self.run = run
        self._need_target = need_target
        self._by_settings: dict[Settings, Run] = {run.settings: run}
        self._files: dict[Path, Settings] = {}
        self._found: dict[Path, Path | None] = {}
        self.policies: dict[str, Policy] = {}  # report source -> its policy, where it is not the run's

    def _read(self, path: Path) -> Settings:
        if path not in self._files:
            self._files[path] = read_settings(path)
        return self._files[path]

    def _discover(self, folder: Path) -> Path | None:
        if folder not in self._found:
            self._found[folder] = discover(folder)
        return self._found[folder]

    def for_checkpoint(self, spec: str) -> Run:
        c = self.run.common
        settings = nearest(spec, self.run.settings, explicit=c.settings_file is not None or
                           (c.config is not None and c.config.suffix.lower() == ".toml"), isolated=c.isolated,
                           read=self._read, find=self._discover)
        if settings not in self._by_settings:
            self._by_settings[settings] = resolve_run(c, need_target=self._need_target, settings=settings)
        return self._by_settings[settings]

    def note(self, source: str, run: Run) -> None:
        """The checkpoint reported as `source` was checked under `run`: its policy decides its findings."""
        if run is not self.run:
            self.policies[source] = run.policy

    def resolved(self) -> Run:
        """The run, with each checkpoint's own policy where its settings differ (check/policy.py `for_`)."""
        if not self.policies:
            return self.run
        return replace(self.run, policy=replace(self.run.policy, per_source=tuple(self.policies.items())))


def read_paths(run: Run, specs: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """What this run reads from disk (checkpoints, --config, the target): no report may be written over them."""
    c = run.common
    target = c.target if c.target is not None or c.target_vocab_size is not None else run.settings.target
    extra = [str(p) for p in (run.config, target) if p is not None]
    return (*specs, *extra)


def render_context(run: Run, report: Report, full: Report | None = None) -> RenderContext:
    """What the renderers may know of this run's policy: the threshold, what the gate left out, which findings
    decide the exit code, and (given the report before select/ignore) the policy record of the documents."""
    policy = run.policy
    gated = frozenset() if policy.exit_zero else frozenset(
        (c.source, f) for c in report.checkpoints for f in c.findings if policy.gates(f, c))
    return RenderContext(fail_on=policy.fail_on, tool_version=__version__, root=Path.cwd(), quiet=run.common.quiet,
                         verbose=run.common.verbose,
                         outside_gate=len(policy.outside_gate(report)),
                         ungated_runtimes=policy.ungated_runtimes(report), gated=gated,
                         outside=frozenset((c.source, f) for c in report.checkpoints for f in c.findings
                                           if not policy.in_gate(f, c)),
                         policy=policy_record(run, full, report) if full is not None else None)


@dataclass(frozen=True, slots=True)
class Hidden:
    """What the policy did beyond the defaults: findings hidden, those of them that would have failed the run, and
    the exit code with the defaults (select all, ignore nothing, fail on error, no exit-zero) and with the policy."""

    hidden: int
    hidden_failing: tuple[str, ...]  # their codes
    default_exit: int
    exit: int


def policy_effect(run: Run, full: Report, shown: Report) -> Hidden:
    policy = run.policy
    baseline = Policy(gate=policy.gate, allow_no_verdict=policy.allow_no_verdict)  # not a select/ignore effect
    hidden_failing = tuple(f.code for c in full.checkpoints for f in c.findings
                           if not policy.for_(c).is_selected(f.code) and baseline.gates(f, c))
    exit_now = 0 if policy.exit_zero or not policy.failing(shown) else 1
    return Hidden(len(full.findings) - len(shown.findings), hidden_failing, 1 if baseline.failing(full) else 0,
                  exit_now)


def policy_sources(run: Run) -> list[str]:
    """Where the select/ignore/fail-on/exit-zero in force came from: the settings file, the command line."""
    c, layer = run.common, run.settings.policy
    out = []
    if run.settings.path is not None and (layer.select is not None or layer.extend_select or layer.ignore
                                          or layer.exit_zero is not None or layer.fail_on is not None):
        out.append(str(run.settings.path))
    if (c.select is not None or c.extend_select or c.ignore is not None or c.exit_zero is not None
            or c.fail_on is not None):
        out.append("the command line")
    return out


def policy_record(run: Run, full: Report, shown: Report) -> dict[str, object]:
    p, effect = run.policy, policy_effect(run, full, shown)
    return {"settings": str(run.settings.path) if run.settings.path else None, "sources": policy_sources(run),
            "select": list(p.select), "ignore": list(p.ignore), "fail_on": p.fail_on.value,
            "exit_zero": p.exit_zero, "gate": list(p.gate) if p.gate is not None else None,
            "hidden": effect.hidden, "hidden_failing": len(effect.hidden_failing),
            "exit_code_with_defaults": effect.default_exit}


def announce_policy(run: Run, full: Report, shown: Report) -> None:
    """Settings are never silent: a hidden finding that would have counted, or a changed exit code, is one line on
    stderr naming where the policy came from, whatever the format (even with -q)."""
    effect = policy_effect(run, full, shown)
    if not effect.hidden_failing and effect.exit == effect.default_exit:
        return
    where = " and ".join(policy_sources(run)) or "the policy"
    parts = []
    if effect.hidden_failing:
        codes = ", ".join(dict.fromkeys(effect.hidden_failing))
        parts.append(f"hid {len(effect.hidden_failing)} finding(s) that would fail the run ({codes})")
    if effect.exit != effect.default_exit:
        parts.append(f"changed the exit code from {effect.default_exit} to {effect.exit}"
                     + (" (exit-zero)" if run.policy.exit_zero else ""))
    stderr_console().print(f"dspark-ckpt: note: the policy from {where} {' and '.join(parts)}; "
                           f"{effect.hidden} finding(s) hidden in all", markup=False)


def hook_folders(paths: list[str]) -> list[str]:
    """For hooks that pass changed file names: each checkpoint file's folder, once. Other files are skipped, and so
    is a config.json in a folder with no weights and no index: it is some other tool's config, not a draft's."""
    folders: list[str] = []
    for raw in paths:
        path = Path(raw)
        folder = path if path.is_dir() else path.parent
        has_weights = (folder / INDEX_NAME).exists() or any(folder.glob("*.safetensors"))
        if not path.is_dir() and not (path.name.endswith(".safetensors") or path.name == INDEX_NAME
                                      or (path.name == CONFIG_NAME and has_weights)):
            continue
        if str(folder) not in folders:
            folders.append(str(folder))
    return folders


def diagnose(run: Run, hidden: int) -> None:
    """-v: what shaped this run, on stderr so machine output on stdout stays clean."""
    err = stderr_console()
    settings, policy = run.settings, run.policy
    source = "ignored (--isolated)" if run.common.isolated else str(settings.path) if settings.path else "none found"
    err.print(f"settings: {source}", markup=False)
    err.print(f"policy: select {','.join(policy.select)}; ignore {','.join(policy.ignore) or '-'}; "
              f"fail on {policy.fail_on.value}{'; exit-zero' if policy.exit_zero else ''}", markup=False)
    gate = ("every runtime shown" if policy.gate is None
            else f"{', '.join(policy.gate)} (the default; --runtime or settings `runtime` choose)")
    err.print(f"gate: {gate}", markup=False)
    err.print(f"runtimes: {folded(run.runtimes)}", markup=False)
    err.print(f"{hidden} finding(s) hidden by select/ignore", markup=False)
