"""Settings files: `dspark-ckpt.toml` or `[tool.dspark-ckpt]` in `pyproject.toml`, found upward from a folder."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from dspark_ckpt.check.policy import Layer, normalize
from dspark_ckpt.errors import UsageError
from dspark_ckpt.formats.json_doc import JsonProblem, decode_text, read_bounded
from dspark_ckpt.model.findings import Severity

SETTINGS_NAME = "dspark-ckpt.toml"
PYPROJECT_NAME = "pyproject.toml"
TOOL_TABLE = "dspark-ckpt"
MAX_SETTINGS_BYTES = 2**20  # a pyproject.toml is kilobytes; tomllib is pure Python, so this also bounds its time
KEYS = ("select", "extend-select", "ignore", "fail-on", "exit-zero", "runtime", "target", "target-vocab-size",
        "speculative-config", "max-model-len", "allow-no-target", "allow-no-verdict", "per-path")
# What a `per-path` entry may set for the checkpoints its pattern matches (issue 41): their target and policy.
PER_PATH_KEYS = ("target", "target-vocab-size", "runtime", "select", "extend-select", "ignore", "fail-on")


@dataclass(frozen=True, slots=True)
class Settings:
    """What the settings file ([tool.dspark-ckpt] or dspark-ckpt.toml) set, paths resolved against its folder."""

    path: Path | None = None  # None: no file was read
    policy: Layer = field(default_factory=Layer)
    runtime: tuple[str, ...] | None = None
    target: str | None = None  # already resolved against the file's folder
    target_vocab_size: int | None = None
    speculative_config: str | None = None  # inline JSON, or a path already resolved against the file's folder
    max_model_len: int | None = None  # the deploy's `vllm serve --max-model-len`
    allow_no_target: bool | None = None  # check may pass without T (structural checks only)
    allow_no_verdict: bool | None = None  # a requested release without a verdict (DSP368) does not gate
    # `per-path`: (pattern relative to the file's folder, what it sets), in the file's order; the first match applies
    per_path: tuple[tuple[str, Settings], ...] = ()
    pattern: str | None = None  # the per-path pattern these settings came through, if any


def for_checkpoint(settings: Settings, checkpoint: Path) -> Settings:
    """The settings for one checkpoint: the file's, with the first `per-path` entry whose pattern matches the
    checkpoint's path (relative to the file's folder; the path itself or a folder above it) laid over them. A
    target in the entry replaces both target keys; its `ignore` adds to the file's (as ruff's per-file-ignores)."""
    if not settings.per_path or settings.path is None:
        return settings
    try:
        relative = checkpoint.absolute().relative_to(settings.path.parent.absolute()).as_posix()
    except ValueError:  # outside the file's folder: no pattern of it applies
        return settings
    candidates = [relative, *(str(p.as_posix()) for p in PurePosixPath(relative).parents if str(p) != ".")]
    for pattern, entry in settings.per_path:
        if any(fnmatch.fnmatchcase(c, pattern.rstrip("/")) for c in candidates):
            return _overlay(settings, entry, pattern)
    return settings


def _overlay(base: Settings, entry: Settings, pattern: str) -> Settings:
    targeted = entry.target is not None or entry.target_vocab_size is not None
    layer, over = base.policy, entry.policy
    ignore = over.ignore if over.ignore is None else tuple(dict.fromkeys((*(layer.ignore or ()), *over.ignore)))
    policy = Layer(select=over.select if over.select is not None else layer.select,
                   extend_select=tuple(dict.fromkeys((*layer.extend_select, *over.extend_select))),
                   ignore=ignore if ignore is not None else layer.ignore,
                   fail_on=over.fail_on or layer.fail_on, exit_zero=layer.exit_zero)
    return replace(base, policy=policy, runtime=entry.runtime if entry.runtime is not None else base.runtime,
                   target=entry.target if targeted else base.target,
                   target_vocab_size=entry.target_vocab_size if targeted else base.target_vocab_size,
                   per_path=(), pattern=pattern)


def _bad(where: str, key: str, expected: str, value: Any) -> UsageError:
    return UsageError(f"{where}: `{key}` must be {expected}, got {value!r}", code="DSP-E021",
                      hint=f"keys: {', '.join(KEYS)}")


def _codes(table: dict[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(where, key, "a list of codes or prefixes", value)
    return normalize(value, f"{where}: {key}")


def _typed(table: dict[str, Any], key: str, kind: type, where: str, expected: str) -> Any:
    value = table.get(key)
    if value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
        raise _bad(where, key, expected, value)
    return value


def _per_path(table: dict[str, Any], base: Path, where: str) -> tuple[tuple[str, Settings], ...]:
    value = table.get("per-path")
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise _bad(where, "per-path", 'a table of path patterns, each a table ([per-path."drafts/qwen-*"])', value)
    return tuple((pattern, parse_settings(entry, base=base, where=f"{where} per-path {pattern!r}",
                                          keys=PER_PATH_KEYS)) for pattern, entry in value.items())


def parse_settings(table: dict[str, Any], *, base: Path, where: str, keys: tuple[str, ...] = KEYS) -> Settings:
    """Pure: a TOML table -> Settings. Unknown keys are errors: a typo must not silently loosen the gate."""
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)}", code="DSP-E022",
                         hint=f"keys: {', '.join(keys)}")
    fail_on = _typed(table, "fail-on", str, where, "error, warning or info")
    if fail_on is not None and fail_on not in {s.value for s in Severity}:
        raise _bad(where, "fail-on", "error, warning or info", fail_on)
    runtime = table.get("runtime")
    if isinstance(runtime, str):
        runtime = [runtime]
    if runtime is not None and (not isinstance(runtime, list) or not all(isinstance(r, str) for r in runtime)):
        raise _bad(where, "runtime", "a selector or a list of selectors", runtime)
    target = _typed(table, "target", str, where, "a path")
    layer = Layer(select=_codes(table, "select", where), extend_select=_codes(table, "extend-select", where) or (),
                  ignore=_codes(table, "ignore", where), fail_on=Severity(fail_on) if fail_on else None,
                  exit_zero=_typed(table, "exit-zero", bool, where, "true or false"))
    return Settings(path=None, policy=layer, runtime=tuple(runtime) if runtime is not None else None,
                    target=_target(target, base) if target is not None else None,
                    target_vocab_size=_typed(table, "target-vocab-size", int, where, "an integer"),
                    speculative_config=_speculative_config(table, base, where),
                    max_model_len=_max_model_len(table, where),
                    allow_no_target=_typed(table, "allow-no-target", bool, where, "true or false"),
                    allow_no_verdict=_typed(table, "allow-no-verdict", bool, where, "true or false"),
                    per_path=_per_path(table, base, where))


def _target(value: str, base: Path) -> str:
    """A path relative to the settings file's folder; a Hub repo id as on the command line (`hf://org/name`, or
    `org/name` whose `org/` is no folder there: sources/resolve.py `hub_repo`) stays as written."""
    # here: a settings file without a target needs none of it
    from dspark_ckpt.sources.resolve import hub_repo

    return value if hub_repo(value, base) is not None else str(base / value)


def _speculative_config(table: dict[str, Any], base: Path, where: str) -> str | None:
    """`speculative-config = "deploy/spec.json"` (relative to the settings file's folder) or inline JSON."""
    value: str | None = _typed(table, "speculative-config", str, where, "a path to a .json file or a JSON object")
    if value is None or value.lstrip().startswith(("{", "[")):
        return value
    return str(base / value)


def _max_model_len(table: dict[str, Any], where: str) -> int | None:
    value: int | None = _typed(table, "max-model-len", int, where, "a positive integer")
    if value is not None and value < 1:
        raise _bad(where, "max-model-len", "a positive integer", value)
    return value


def _read_toml(path: Path) -> dict[str, Any]:
    """A settings file, stat-checked and read with a bound (a FIFO, /dev/zero or a huge file is refused, not read)."""
    try:
        raw = read_bounded(path, MAX_SETTINGS_BYTES)
    except OSError as exc:
        raise UsageError(f"cannot read settings file {path}: {exc.strerror or exc}", code="DSP-E023") from exc
    text = decode_text(raw)
    if isinstance(text, JsonProblem):
        raise UsageError(f"settings file {path} {text.message}", code="DSP-E023")
    import tomllib  # here: an --isolated run (and one without a settings file) never parses TOML

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}", code="DSP-E023") from exc
    except RecursionError as exc:
        raise UsageError(f"{path} is not valid TOML: it nests too deeply", code="DSP-E023") from exc
    except ValueError as exc:  # int() over Python's digit limit
        raise UsageError(f"{path} holds an integer with more digits than Python parses", code="DSP-E023") from exc


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # an unsearchable folder on the way up: nothing to read there
        return False


def _table(path: Path, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The dspark-ckpt table of a file: the whole file, or `[tool.dspark-ckpt]` of a pyproject.toml."""
    if path.name != PYPROJECT_NAME:
        return doc
    tool = doc.get("tool")
    table = tool.get(TOOL_TABLE) if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.{TOOL_TABLE}] must be a table", code="DSP-E021")
    return table


def read_settings(path: Path) -> Settings:
    table = _table(path, _read_toml(path))
    if table is None:
        raise UsageError(f"{path} has no [tool.{TOOL_TABLE}] table", code="DSP-E023",
                         hint=f"put the keys under [tool.{TOOL_TABLE}], or use a {SETTINGS_NAME}")
    where = f"{path} [tool.{TOOL_TABLE}]" if path.name == PYPROJECT_NAME else str(path)
    parsed = parse_settings(table, base=path.parent, where=where)
    return replace(parsed, path=path)


def discover(start: Path) -> Path | None:
    """The nearest folder (start, then its parents) with a dspark-ckpt.toml, or a pyproject.toml that has our table.

    In one folder dspark-ckpt.toml wins, as ruff.toml wins over pyproject.toml.
    """
    for folder in (start, *start.parents):
        if _is_file(candidate := folder / SETTINGS_NAME):
            return candidate
        if _is_file(candidate := folder / PYPROJECT_NAME) and _table(candidate, _read_toml(candidate)) is not None:
            return candidate
    return None


def nearest(checkpoint: str, fallback: Settings, *, explicit: bool, isolated: bool,
            read: Callable[[Path], Settings] = read_settings,
            find: Callable[[Path], Path | None] = discover) -> Settings:
    """The settings for one checkpoint, as ruff finds a file's: the nearest settings file above the checkpoint (a
    local path; else, or where none is above it, the run's), then its `per-path` entry for the checkpoint.
    `--settings FILE` and `--isolated` decide for every checkpoint."""
    if isolated:
        return fallback
    path = Path(checkpoint)
    try:
        local = path.exists()
    except OSError:
        local = False
    if not local:
        return fallback
    chosen = fallback
    if not explicit:
        found = find((path if path.is_dir() else path.parent).absolute())
        if found is not None and (fallback.path is None or found.absolute() != fallback.path.absolute()):
            chosen = read(found)
    return for_checkpoint(chosen, path)


def load_settings(cwd: Path, *, explicit: Path | None, isolated: bool) -> Settings:
    if explicit is not None and isolated:
        raise UsageError("--settings and --isolated contradict each other", code="DSP-E024",
                         hint="--isolated ignores every settings file")
    if isolated:
        return Settings()
    path = explicit if explicit is not None else discover(cwd.absolute())
    return read_settings(path) if path is not None else Settings()
