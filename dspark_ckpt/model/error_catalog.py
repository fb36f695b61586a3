"""Every operational error code (DSP-Exxx, exit 2) with its documentation, as the finding codes have theirs."""

from __future__ import annotations

from dataclasses import dataclass

from dspark_ckpt.model.codes import ErrorCode


@dataclass(frozen=True, slots=True)
class ErrorDoc:
    """One operational error: why a run could not answer. Same sections as a finding's documentation."""

    code: ErrorCode
    slug: str
    summary: str
    what: str
    why: str
    example: str
    fix: str
    # Raised from several modules: the modules (relative to dspark_ckpt/), judged to share this one meaning.
    shared: tuple[str, ...] = ()
    retired: bool = False  # no longer raised; kept so the code is never reused


def _errors(*docs: ErrorDoc) -> dict[str, ErrorDoc]:
    table: dict[str, ErrorDoc] = {}
    for doc in docs:
        if doc.code in table:
            raise ValueError(f"duplicate error code {doc.code}")
        table[doc.code] = doc
    return table


E = ErrorDoc
_STOP = "The run stops before it reads any checkpoint and exits 2, so a CI gate never mistakes it for a pass."
_NO_ANSWER = "The run cannot answer for this checkpoint and exits 2: a checkpoint that was not checked never passes."
_HUB = "Nothing is known about the repo, so the run exits 2; with several checkpoints it is DSP702 for this one."
_NOTHING_WRITTEN = "fix stops before it writes anything: the original checkpoint is untouched."

# A new code: one entry in its range, in order. Codes are never reused: a code no longer raised stays, retired.
ERRORS: dict[str, ErrorDoc] = _errors(
    # --- DSP-E00x: runtime and target selection on the command line ---
    E("DSP-E001", "unknown-runtime", "`--runtime` names no runtime dspark-ckpt knows",
      "A `--runtime` (or fix's `--for`, or the settings file's `runtime`) is not vllm, sglang, installed or all, "
      "or does not have the form `vllm==X.Y.Z` / `vllm>=X.Y`; or a release `diff` compares is not one "
      "`runtime==version`, or the two are releases of two runtimes.", _STOP,
      "`dspark-ckpt check ./draft --runtime tgi==1.0`, or `--runtime 'vllm 0.30'` (no operator).",
      "Use vllm==X.Y.Z, a range such as 'vllm>=0.30', vllm, sglang, installed or all.",
      shared=("runtimes/selectors.py", "cli/releases.py")),
    E("DSP-E002", "runtime-version-unknown", "A vLLM release newer than the contract table (retired)",
      "Raised by early releases for a vLLM version the contract table did not list.",
      "It made a new vLLM release break every preflight.", "`--runtime vllm==0.40.0` before it was known.",
      "Nothing: a newer release is now evaluated with the newest row and a DSP220 warning.", retired=True),
    E("DSP-E003", "bad-target-vocab-size", "`--target-vocab-size` is not a positive integer up to 2**40",
      "The target vocabulary size T given on the command line (or as `target-vocab-size` in the settings file) "
      "is zero, negative or absurdly large.", "Every verdict is computed against T; a wrong T gives wrong "
      "verdicts. " + _STOP, "`dspark-ckpt check ./draft --target-vocab-size 0`.",
      "Pass the target's text-config `vocab_size`, or `--target DIR` to read it from the target's config.json."),
    E("DSP-E004", "target-given-twice", "Both `--target` and `--target-vocab-size`",
      "T was given twice, once as a target model and once as a number; they could disagree.", _STOP,
      "`dspark-ckpt check ./draft --target ./qwen3 --target-vocab-size 151936`.",
      "Keep one: `--target` reads T from the target's config.json, `--target-vocab-size` states it."),
    E("DSP-E005", "unknown-code", "`explain` or `rules` was given a code that no registry holds",
      "The argument is neither a finding code (DSPnnn), an operational error code (DSP-Exxx), nor a prefix of "
      "one.", "There is no documentation to show; the command exits 2.",
      "`dspark-ckpt explain DSP999`.", "`dspark-ckpt rules` lists every code; prefixes such as DSP3 work."),
    E("DSP-E006", "no-runtime-installed", "`--runtime installed` where neither vLLM nor SGLang is installed",
      "`installed` selects the vLLM/SGLang versions this Python environment's package metadata lists, and it "
      "lists none.", "There is nothing to check against; guessing would gate on the wrong runtime. " + _STOP,
      "`dspark-ckpt check ./draft --runtime installed` on a laptop without vLLM.",
      "Run inside the deployment image (where `pip show vllm` finds it), or name it: `--runtime vllm==X.Y.Z`."),
    E("DSP-E007", "runtime-range-empty", "A version range matches none of the vLLM versions dspark-ckpt knows",
      "A PEP 440 range such as `vllm>=0.40` selects no row of the contract table; or a release `diff` "
      "compares is older than every release with generated data.",
      "An empty selection would check nothing and pass. " + _STOP, "`dspark-ckpt check ./draft --runtime "
      "'vllm<0.20'`.", "Widen the range, or name one release exactly (`vllm==X.Y.Z`): an unknown single "
      "release is evaluated with the newest row (DSP220).", shared=("runtimes/selectors.py", "cli/releases.py")),
    E("DSP-E008", "bad-runtime-version", "A runtime version or range does not parse (PEP 440)",
      "The part after the runtime name is not a valid version (`vllm==abc`) or specifier (`vllm>=x.y`).", _STOP,
      "`dspark-ckpt check ./draft --runtime vllm==`.", "Write a version such as vllm==0.31.0 or a range such as "
      "'vllm>=0.30' (quote it in the shell)."),
    E("DSP-E009", "runtime-version-not-a-release", "A runtime version is no release of that runtime",
      "`==` names a version that is malformed (a number with a leading zero, `vllm==033`, which PEP 440 would read "
      "as 33.0.0; or a bare major, `vllm==1`), or one inside the range of listed releases that was never released "
      "(`vllm==0.33.2` between 0.33.0 and 0.34.0). A version newer than every listed release is not this: it is "
      "evaluated with the newest row and a DSP220 warning.", "A typo would otherwise be answered from another "
      "release's row, or read as a release far in the future, and gate on nothing real. " + _STOP,
      "`dspark-ckpt check ./draft --runtime vllm==033`.", "Name a listed release (the message names the nearest "
      "ones), a range such as 'vllm>=0.30', or vllm for every release."),
    # --- DSP-E01x: the checkpoint argument ---
    E("DSP-E010", "no-such-checkpoint", "The checkpoint is neither an existing path nor a Hub repo id",
      "The argument names no local file or folder, and cannot be an `org/repo[@rev]` Hub id, or it is shaped like "
      "a local path (`./x`, `~/x`, `a/b/c`, `x/`, `x.json`, or `drafts/typo` whose `drafts/` exists): such a "
      "name never goes to the Hub. The hint says which, and names what is there instead.", _NO_ANSWER, "`dspark-ckpt check ./drafts/typo`.",
      "Give the draft's folder, a .safetensors file (with --config), or org/repo[@rev]; write hf://org/repo to "
      "force the Hub when a local folder of that name exists."),
    E("DSP-E011", "checkpoint-permission-denied", "The checkpoint exists but cannot be read",
      "The file is not readable, or the folder cannot be listed or entered, by this user.", _NO_ANSWER,
      "A draft folder with mode 0700 owned by another user.", "Fix the permissions, or run as a user who may "
      "read it."),
    E("DSP-E012", "not-a-checkpoint", "The path holds neither a config.json nor any .safetensors file",
      "The folder exists but has nothing a draft checkpoint would have: no config.json and no weights.",
      "Usually a wrong path (the parent folder, an output folder); reporting only findings could pass under a "
      "lenient policy, so it is always an error.", "`dspark-ckpt check ~/models` (the parent of the draft).",
      "Give the draft's own folder, a .safetensors file, or org/repo[@rev]."),
    E("DSP-E013", "verify-over-memory-budget", "verify would allocate more memory than its budget",
      "The sizes in config.json and the headers (D, V, H, the tensors to read) add up to more than verify's "
      "memory budget: DSPARK_CKPT_VERIFY_MEMORY, else 90% of this machine's memory (or of the process's "
      "address-space limit), or 90% of the free memory of the CUDA device. It is counted before anything is "
      "allocated.", "torch would try to allocate it and die of it (or take the machine down with it); a "
      "config that claims 2**34 vocabulary rows is corrupt or hostile, not a draft. " + _NO_ANSWER,
      "`dspark-ckpt verify ./draft --target-vocab-size 96` with `\"vocab_size\": 17179869184` in config.json.",
      "Run `dspark-ckpt check DRAFT` (DRAFT: the checkpoint) to see what is wrong with the sizes; for a draft that really is this large, "
      "run on a machine that has the memory and raise DSPARK_CKPT_VERIFY_MEMORY (e.g. 64G)."),
    E("DSP-E014", "checkpoint-not-staged", "A hook's checkpoint folder holds files the commit would not hold",
      "With `--checkpoint-folders` (the pre-commit hooks) inside a git work tree, a checkpoint file of a checked "
      "folder (`*.safetensors`, the index, config.json) is untracked or differs from what is staged: a d2t shard "
      "and an index that the fix-safe hook wrote, before `git add`.", "The check would judge files the commit "
      "does not hold, and pass a commit whose clean checkout fails. The run stops and exits 2.",
      "`git commit` again, without `git add`, after the fix-safe hook wrote a d2t shard.",
      "Stage the files (`git add -- FOLDER`), or remove them, then commit again."),
    # --- DSP-E02x: settings, policy and command-line consistency ---
    E("DSP-E020", "code-matches-nothing", "A `--select`/`--ignore` code or prefix matches no finding code",
      "A code or prefix in --select, --extend-select, --ignore (or the settings file) is not the start of any "
      "registered finding code.", "A typo would silently select or ignore nothing and loosen the gate. " + _STOP,
      "`dspark-ckpt check ./draft --ignore DSP99`.", "`dspark-ckpt rules` lists the codes; prefixes such as "
      "DSP3 or DSP32 work, and ALL selects everything."),
    E("DSP-E021", "bad-setting-value", "A settings key has a value of the wrong type",
      "A key of dspark-ckpt.toml or `[tool.dspark-ckpt]` has the wrong type (a number for `select`, a string "
      "for `exit-zero`, ...), or `[tool.dspark-ckpt]` is not a table.", _STOP,
      "`fail-on = \"fatal\"` or `exit-zero = \"yes\"`.", "Use the types the message names; the keys are "
      "select, extend-select, ignore, fail-on, exit-zero, runtime, target, target-vocab-size, "
      "speculative-config."),
    E("DSP-E022", "unknown-setting", "The settings file has a key dspark-ckpt does not know",
      "A key that is not one of dspark-ckpt's settings, usually a typo.",
      "A misspelt `ignore` would silently change nothing; it is refused rather than skipped. " + _STOP,
      "`ignores = [\"DSP4\"]` in dspark-ckpt.toml.", "Correct the key; the message lists the valid ones."),
    E("DSP-E023", "unreadable-settings", "The settings file cannot be read or is not TOML",
      "The settings file (found upward, or given with --settings) cannot be opened, is not valid TOML, or is a "
      "pyproject.toml without a `[tool.dspark-ckpt]` table.", _STOP, "`--settings pyproject.toml` in a project "
      "whose pyproject.toml has no [tool.dspark-ckpt].", "Fix the TOML syntax or permissions, or pass "
      "--isolated to ignore every settings file."),
    E("DSP-E024", "settings-given-twice", "Two settings-file options contradict each other",
      "--settings and --isolated together, or --settings together with a .toml --config (which is read as "
      "settings).", _STOP, "`dspark-ckpt check ./draft --settings a.toml --isolated`.",
      "Give the settings file once, or --isolated alone.", shared=("cli/run.py", "cli/settings.py")),
    E("DSP-E025", "quiet-and-verbose", "`--quiet` and `--verbose` together",
      "-q asks for less output and -v for more; there is no way to do both.", _STOP,
      "`dspark-ckpt check ./draft -q -v`.", "Keep one of them.",
      shared=("cli/options.py", "cli/run.py")),  # run.py for check, fix and verify; options.py for the others
    E("DSP-E026", "no-checkpoint-given", "No checkpoint to check: none given, and no speculative config names one",
      "`check` was given no checkpoint argument (and no --checkpoint-folders), and there is no --speculative-config "
      "(or settings `speculative-config`) whose `model` names the draft; or that config is not a JSON object.",
      _STOP, "`dspark-ckpt check --speculative-config '{\"method\": \"dspark\"}'`.",
      "Name the checkpoint, or put its path in the speculative config's \"model\" (docs/deploy.md).",
      shared=("cli/check.py", "check/deploy.py")),
    E("DSP-E027", "speculative-config-unreadable", "The speculative config file cannot be read",
      "--speculative-config (or settings `speculative-config`) names a file that does not exist, is a folder or "
      "a special file, is larger than 1 MiB, or cannot be read.",
      "Without the deploy's config there is nothing to check it against. " + _STOP,
      "`dspark-ckpt check --speculative-config deploy/spec.jsn`.",
      "Give the path of the .json file (relative to the working directory; in the settings file, to the "
      "settings file's folder), or the JSON object itself."),
    E("DSP-E028", "speculative-config-empty", "`--speculative-config` is empty",
      "The flag (or the settings key) was given an empty or blank string.", _STOP,
      "`dspark-ckpt check ./draft --speculative-config \"$SPEC\"` with SPEC unset.",
      "Give the JSON object vLLM gets, or the path of a .json file holding it."),
    # --- DSP-E03x: where the report goes, and the target model ---
    E("DSP-E030", "report-not-written", "The report could not be written to `--output`",
      "The --output file (or the folder that should hold it) cannot be created or written: missing folder, "
      "no permission, full disk.", "The report was asked for and does not exist; the run exits 2 even when the "
      "checkpoint is clean. The previous file, if any, is left as it was (writes are atomic).",
      "`dspark-ckpt check ./draft --format sarif -o /nonexistent/report.sarif`.",
      "Write to a folder that exists and is writable."),
    E("DSP-E031", "step-summary-not-written", "The GitHub job summary file cannot be appended to",
      "`$GITHUB_STEP_SUMMARY` names a file that cannot be opened for appending.",
      "The job summary the workflow expects is missing; the run exits 2 after printing the report.",
      "`GITHUB_STEP_SUMMARY=/read-only/summary.md dspark-ckpt check ./draft --format github`.",
      "Unset GITHUB_STEP_SUMMARY outside GitHub Actions, or point it at a writable file."),
    E("DSP-E032", "report-over-input", "A report path is part of a checkpoint (or target) being read",
      "`--output` (or `$GITHUB_STEP_SUMMARY`) resolves, directly, through a symlink or as a hard link, to a file or "
      "folder inside a checkpoint, the --config or the target the run reads.",
      "Writing there would replace the draft's own weights, config or index with the report. Nothing is written "
      "and the run exits 2.", "`dspark-ckpt check ./draft -o ./draft/model.safetensors`.",
      "Write the report outside the checkpoint folder."),
    E("DSP-E033", "report-path-not-regular", "A report path is a device, FIFO, socket, folder or process stream",
      "`--output` or `$GITHUB_STEP_SUMMARY` names (or links to) something that is not a regular file: /dev/null, "
      "/dev/full, a FIFO, a socket, a folder, or /dev/stdout and other /proc/self/fd links.",
      "A report replaces only a regular file: renaming over a device node would replace it with a file (for "
      "/dev/null, the system's), and opening a FIFO can block forever. Nothing is written and the run exits 2.",
      "`dspark-ckpt check ./draft -o /dev/null`, or `GITHUB_STEP_SUMMARY=/tmp/fifo dspark-ckpt check ./draft "
      "--format github`.", "Give the path of a regular file (created if absent); leave -o out to write to stdout."),
    E("DSP-E034", "report-link-dangling", "A report path is a symlink to nothing",
      "`--output` or `$GITHUB_STEP_SUMMARY` is a symlink whose target does not exist.",
      "Writing through it would create a file wherever the link points, which is rarely what was meant (GNU cp "
      "refuses too). Nothing is written and the run exits 2.", "`ln -s /gone/report.json r.json; dspark-ckpt "
      "check ./draft -o r.json`.", "Point the link at an existing regular file, or write to a plain path."),
    E("DSP-E035", "unusable-target", "The target's config cannot be read or has no vocab_size",
      "--target names a folder or config.json (local or on the Hub) that cannot be read, is not a JSON object, "
      "or has no positive integer `vocab_size` (in the text sub-config for multimodal targets).",
      "Without T no draft can be classified. " + _STOP, "`--target ./qwen3` where ./qwen3/config.json is "
      "missing or truncated.", "Point --target at the target model's folder or config.json, or pass "
      "--target-vocab-size N."),
    E("DSP-E036", "stdout-unwritable", "stdout is closed or cannot be written",
      "stdout was closed when the command started (`>&-`, as under cron or some daemons), or a write to it failed "
      "(a full device, an I/O error). A reader that goes away (a broken pipe, `| head -1`) is not this error: the "
      "output ends quietly and the run keeps its own exit code.",
      "The report was asked for and did not arrive; the run exits 2, with one line on stderr.",
      "`dspark-ckpt check ./draft > /dev/full`, or `dspark-ckpt check ./draft >&-`.",
      "Run with stdout on a writable file, pipe or terminal, or write the report with -o FILE."),
    E("DSP-E037", "stderr-unwritable", "stderr is closed or cannot be written",
      "stderr was closed at start or a write to it failed while the command had a message to print.",
      "A message the user must see (an error, the verdict of a -o run) was lost; the run exits 2 and says so in "
      "one line on stdout.", "`dspark-ckpt check ./draft -o report.json 2>/dev/full`.",
      "Run with stderr on a writable file, pipe or terminal, or pass -q to print nothing there."),
    E("DSP-E038", "no-runtime-contract-evaluated", "check ran without a target vocabulary T",
      "No --target or --target-vocab-size was given and none is in the settings file, so the draft could not be "
      "classified and no runtime contract was evaluated (finding DSP206); only structural checks ran.",
      "A CI job whose target setting was forgotten would stay green while checking almost nothing. The report is "
      "printed, then the run exits 2 (exit 1 when a structural finding already fails it).",
      "`dspark-ckpt check ./draft` with no target anywhere.",
      "Pass --target DIR or --target-vocab-size N (or set `target` in [tool.dspark-ckpt]); to accept a "
      "structural check on purpose, pass --allow-no-target or set `allow-no-target = true`."),
    E("DSP-E039", "bad-report-option", "A `--report` value is not FORMAT=FILE with a known format",
      "`--report` takes an output format and a file, joined by `=` (`sarif=results/draft.sarif`); the format is "
      "one of `--format`'s, and each file is named once.", _STOP,
      "`dspark-ckpt check ./draft --report results/draft.sarif` (no format), or `--report sarif=a --report "
      "sarif=a`.", "Write FORMAT=FILE, e.g. `--report sarif=results/draft.sarif --report junit=results/draft.xml`."),
    # --- DSP-E04x: verify ---
    E("DSP-E040", "torch-missing", "`verify` needs torch, which is not installed",
      "verify loads the draft's tensors with torch, and torch cannot be imported.",
      "verify cannot run; `check` works without torch.", "`dspark-ckpt verify ./draft` in an environment "
      "with only the base package.", "pip install 'dspark-ckpt[torch]' (install the CPU build of torch first "
      "if you have no GPU)."),
    E("DSP-E041", "bad-device", "`--device` names no usable device",
      "The device is not auto, cpu, cuda or cuda:N, or names CUDA where torch sees no (or not that many) CUDA "
      "devices.", "verify would otherwise fall back silently and report results for another device. " + _STOP,
      "`dspark-ckpt verify ./draft --device cuda:3` on a one-GPU machine.",
      "Use --device auto (CUDA when present) or cpu, or an index below torch.cuda.device_count()."),
    E("DSP-E042", "verify-needs-local", "`verify` was given a Hub repo; it reads tensor data from local files",
      "verify loads weights, and dspark-ckpt never downloads weights implicitly.", _NO_ANSWER,
      "`dspark-ckpt verify org/draft`.", "Download it first (`hf download org/draft --local-dir draft`), then "
      "verify the folder; `check org/draft` works from headers without downloading weights.",
      shared=("cli/verify.py", "verify/torch_loader.py")),
    # --- DSP-E05x: the Hugging Face Hub ---
    E("DSP-E050", "hub-repo-not-found", "The Hub repo does not exist, or is private and no token was sent",
      "The Hub answered 404 for the repo.", _HUB, "`dspark-ckpt check org/no-such-draft`.",
      "Check the name; for a private repo pass --token or set HF_TOKEN (or `hf auth login`)."),
    E("DSP-E051", "hub-access-denied", "The Hub refused access: no token, or one without access",
      "The Hub answered 401/403: the repo is gated or private and the token is missing or lacks access, or "
      "(`fix --push`) the token may not open pull requests there.", _HUB,
      "`dspark-ckpt check meta-llama/gated-draft` without accepting its conditions.",
      "Accept the repo's conditions on the Hub and pass a token with access (--token or HF_TOKEN).",
      shared=("sources/hub.py", "sources/hub_push.py")),
    E("DSP-E052", "hub-revision-not-found", "The revision does not exist in the Hub repo",
      "The `@rev` (or --revision) is no branch, tag, PR ref or commit of the repo.", _HUB,
      "`dspark-ckpt check org/draft@no-such-branch`.", "Give a branch, tag, refs/pr/N or commit that exists."),
    E("DSP-E053", "hub-rate-limited", "The Hub rate-limited the run (HTTP 429) after the retries",
      "Every retry was answered 429; the message says how long the Hub asked to wait.", _HUB,
      "Checking hundreds of repos anonymously with --jobs 32.",
      "Wait and retry, use a token (higher limits), or lower --jobs."),
    E("DSP-E054", "hub-unreachable", "The Hub could not be reached, or answered a server error",
      "Connection failures, timeouts, or 5xx answers after the retries (or an unexpected HTTP status).", _HUB,
      "A CI runner without network access, or HF_ENDPOINT pointing at a dead mirror.",
      "Check the network and HF_ENDPOINT, or raise DSPARK_CKPT_HUB_TIMEOUT."),
    E("DSP-E055", "hub-snapshot-split", "`fix --push`: the downloaded files are not in one cache snapshot",
      "The files fix downloaded to plan the pull request landed in different snapshot folders of the Hugging "
      "Face cache (the repo moved while they were fetched).", "fix cannot build one consistent checkpoint to "
      "repair, so it opens no pull request.", "Someone pushes to the repo while `fix --push` downloads it.",
      "Run it again; pin a commit with org/repo@sha for a stable snapshot."),
    E("DSP-E056", "hub-offline-not-cached", "HF_HUB_OFFLINE=1 and the revision is not in the local cache",
      "Offline mode forbids the network, and the Hugging Face cache has no snapshot for this repo/revision.",
      _HUB, "`HF_HUB_OFFLINE=1 dspark-ckpt check org/draft` on a fresh machine.",
      "Check it once online (or download it), or unset HF_HUB_OFFLINE."),
    E("DSP-E057", "config-with-hub", "`--config` with a Hub repo",
      "--config supplies the config.json of a bare local .safetensors file; a Hub repo has its own.", _STOP,
      "`dspark-ckpt check org/draft --config config.json`.", "Drop --config for Hub repos."),
    E("DSP-E058", "bad-jobs", "`--jobs` is out of range",
      "--jobs must be between 1 and the maximum the message names.", _STOP, "`dspark-ckpt check a b --jobs 0`.",
      "Pass a value in range; 1 checks one checkpoint at a time."),
    E("DSP-E059", "push-needs-hub-repo", "`fix --push` was given a local folder or local write options",
      "--push opens a pull request on a Hub repo: it takes `org/repo[@rev]` and writes nothing locally, so "
      "--out, --in-place and --dry-run do not apply.", _NOTHING_WRITTEN,
      "`dspark-ckpt fix ./draft --push`, or `fix org/draft --push --dry-run`.",
      "For a local folder use --out DIR or --in-place; to preview a push run `fix org/draft --dry-run` without "
      "--push."),
    # --- DSP-E06x-E08x: fix ---
    E("DSP-E060", "unknown-strategy", "Unknown repair strategy (Python API)",
      "`plan_fix(..., strategy=...)` was given a name that is not a repair strategy (the CLI rejects it while "
      "parsing --strategy).", _NOTHING_WRITTEN, "`plan_fix(path, strategy=\"trim-everything\")`.",
      "Use one of the names the message lists (`dspark-ckpt fix --help` shows them)."),
    E("DSP-E061", "fix-needs-target", "fix needs the target vocabulary T",
      "No --target or --target-vocab-size, and none in the settings file.",
      "Every repair is sized by T (trim to T rows, d2t over T). " + _NOTHING_WRITTEN,
      "`dspark-ckpt fix ./draft`.", "Pass --target DIR or --target-vocab-size N, or set `target` in the "
      "settings file."),
    E("DSP-E062", "fix-needs-folder", "fix was given something other than a local checkpoint folder",
      "fix rewrites a checkpoint folder; a single .safetensors file or a Hub repo (without --push) is not one.",
      _NOTHING_WRITTEN, "`dspark-ckpt fix model.safetensors`.",
      "Give the folder holding config.json and the safetensors files; for a Hub repo use --dry-run to see the "
      "plan, --push to open a pull request.",
      shared=("cli/fix.py", "repair/read.py")),  # fix.py: a Hub repo id, before anything is read
    E("DSP-E063", "fix-into-hf-cache", "The destination is inside a Hugging Face cache",
      "The folder fix would write is a snapshot in the Hugging Face cache (`.../hub/models--*/snapshots/`), "
      "whose files are links into blobs that other snapshots share.", "Writing there would corrupt other "
      "revisions of the repo. " + _NOTHING_WRITTEN, "`dspark-ckpt fix ~/.cache/huggingface/hub/models--org--"
      "draft/snapshots/<sha> --in-place`.", "Write the fixed copy elsewhere with --out DIR."),
    E("DSP-E064", "fix-destination-unwritable", "The destination, or the folder that would hold it, is missing "
      "or read-only", "fix checks write access before it starts (no write bit means no write, even for root).",
      _NOTHING_WRITTEN, "`dspark-ckpt fix ./draft --out /read-only/fixed`.",
      "Choose a writable destination, or fix the permissions."),
    E("DSP-E065", "fix-destination-exists", "The `--out` folder (or the default NAME-fixed) exists and is not "
      "empty", "fix writes a complete new checkpoint and never merges into or overwrites an existing folder.",
      _NOTHING_WRITTEN, "Running `dspark-ckpt fix ./draft` twice: ./draft-fixed is left by the first run.",
      "Remove it, or pass another --out DIR, or --in-place."),
    E("DSP-E066", "fix-destination-inside", "The `--out` folder is inside the checkpoint itself",
      "A destination inside the source would be read while it is written.", _NOTHING_WRITTEN,
      "`dspark-ckpt fix ./draft --out ./draft/fixed`.", "Choose a folder outside the checkpoint."),
    E("DSP-E067", "empty-plan-applied", "`apply_fix` was given a plan that changes nothing (Python API)",
      "The plan was refused, or there is nothing to repair.", _NOTHING_WRITTEN,
      "`apply_fix(plan_fix(clean_draft, ...), out=...)`.", "Check `plan.changes_anything` (and `plan.refusal`) "
      "before applying."),
    E("DSP-E068", "fix-destination-conflict", "Both `--out` and `--in-place` (from Python: neither)",
      "fix writes either a new folder or over the checkpoint, never both.", _NOTHING_WRITTEN,
      "`dspark-ckpt fix ./draft --out fixed --in-place`.",
      "Pass one; with neither the CLI writes NAME-fixed beside the checkpoint."),
    E("DSP-E069", "fix-write-failed", "A write failed while fix built the result",
      "A full disk, a permission change or another I/O error while the fixed files were written; the message "
      "names the file.", "The staged result is removed; the original checkpoint is unchanged.",
      "The disk fills up while the trimmed lm_head is streamed out.",
      "Free disk space or fix permissions, then run fix again."),
    E("DSP-E070", "checkpoint-changed", "The checkpoint changed between planning and writing",
      "A file fix read to plan the repair was modified, replaced or removed before fix put its result in place.",
      "A repair planned from other bytes could be wrong. Nothing was put in place.",
      "A download still writing the shards while fix runs.",
      "Make sure nothing else writes the checkpoint, then run fix again."),
    E("DSP-E071", "fix-lock-held", "Another fix holds the lock on this checkpoint",
      "A second `dspark-ckpt fix` on the same checkpoint, while the first still runs.",
      "Two fixes of one folder would interleave their writes. " + _NOTHING_WRITTEN,
      "Two CI jobs fixing the same shared folder at once.",
      "Wait for the other fix to finish; a lock whose process is gone is taken over."),
    E("DSP-E072", "push-with-local-options", "`--push` with options that only apply to local folders",
      "--push takes exactly one Hub repo and no --safe-only, --checkpoint-folders or --exit-non-zero-on-fix.",
      _NOTHING_WRITTEN, "`dspark-ckpt fix org/a org/b --push`.", "Push one repo at a time, without those "
      "options."),
    E("DSP-E073", "out-with-many", "`--out` with several checkpoints",
      "--out names one folder, but several checkpoints would be written there.", _NOTHING_WRITTEN,
      "`dspark-ckpt fix a b --out fixed`.", "Omit --out (each gets NAME-fixed beside it), or use --in-place."),
    E("DSP-E074", "no-default-destination", "No folder name to derive the default destination from",
      "The checkpoint is a path with no name (such as `/`), so NAME-fixed cannot be formed.", _NOTHING_WRITTEN,
      "`dspark-ckpt fix /`.", "Pass --out DIR or --in-place."),
    E("DSP-E075", "fix-link-leaves-checkpoint", "A file in the checkpoint is a link that leaves it",
      "A symbolic link inside the checkpoint points outside it; fix copies nothing from outside the checkpoint.",
      "Following it could copy or rewrite a file the user never meant to give fix. " + _NOTHING_WRITTEN,
      "`model.safetensors -> /data/shared/model.safetensors`.",
      "Replace the link by the file it points at, or remove it, then run fix again."),
    E("DSP-E076", "fix-special-file", "A file in the checkpoint is not a regular file",
      "A FIFO, socket or device sits where fix would read or copy a file.",
      "Opening it could block forever or read a device. " + _NOTHING_WRITTEN,
      "A named pipe `notes.fifo` left in the draft folder.", "Move it out of the checkpoint, then run fix again."),
    E("DSP-E077", "fix-lock-blocked", "Something that is not a regular file is in the way of fix's lock",
      "The lock file's name is taken by a folder, link or special file.", _NOTHING_WRITTEN,
      "A folder with the lock file's name inside the checkpoint.",
      "Remove or rename it (fix never deletes it for you), then run fix again."),
    E("DSP-E079", "interrupted-fix-read-only", "An interrupted in-place fix cannot be finished without write "
      "access", "An earlier in-place fix was interrupted and left its journal; the folder is now read-only to "
      "this user, so the journal cannot be rolled forward or back.", "The files may be a mix of old and new "
      "until it is finished, so nothing is checked or fixed on top of them.",
      "A fix killed mid-way, then the folder checked by a read-only CI user.",
      "Run `dspark-ckpt check DRAFT` as a user who may write it (DRAFT: the checkpoint folder, which the error's "
      "own hint names): that completes or rolls back the fix."),
    E("DSP-E080", "bad-fix-journal", "The journal of an interrupted fix is unreadable or inconsistent",
      "The journal an in-place fix keeps is damaged, or does not match the staged files, so fix cannot tell how "
      "to finish or undo it.", "Guessing could lose data; fix touches nothing.",
      "A journal edited by hand, or truncated by a full disk.",
      "Compare the staged folder with the checkpoint by hand, then remove both the journal and the stage."),
    E("DSP-E081", "fix-finish-failed", "fix could not finish putting an in-place fix in place",
      "A write failed after some files were already moved over their originals.",
      "The journal records what is left; the next fix or check of the folder completes it.",
      "The disk fills up while the last shard is renamed into place.",
      "Free disk space or fix permissions, then run `dspark-ckpt check DRAFT` to complete it (DRAFT: the "
      "checkpoint folder, which the error's own hint names)."),
    E("DSP-E082", "fix-destination-dangling-link", "The `--out` folder is a symlink to nothing",
      "--out names a symlink whose target does not exist.",
      "Following it would create the fixed checkpoint wherever the link points; GNU cp refuses to write through a "
      "dangling symlink too. " + _NOTHING_WRITTEN, "`ln -s /gone fixed; dspark-ckpt fix ./draft --out fixed`.",
      "Remove the link or point it at an empty folder, or give --out a plain path."),
    E("DSP-E083", "fix-result-fails-check", "The repaired checkpoint still fails check: nothing was put in place",
      "fix wrote the repair to a staging folder and check of it still finds errors for the chosen runtimes "
      "(the finding DSP504, with the errors it names).",
      "The result would not load or would misbehave, so it is not put in place and fix exits 1: the checkpoint "
      "is still not fixed. The original checkpoint is untouched and the staged files are removed.",
      "A repair planned on a draft whose shards changed while fix ran.",
      "Run `dspark-ckpt check` on the checkpoint and repair the remaining errors first."),
    # --- DSP-E090-E099: hostile or broken Hub answers ---
    E("DSP-E084", "fix-write-mismatch", "A tensor fix wrote differs from its source bytes: nothing was put in place",
      "Before the commit, fix reads every staged shard back: its header must be the planned one and each tensor's "
      "bytes must equal its source range (located by the source shard's own header) or the bytes the plan gives.",
      "A tensor written from the wrong offset or the wrong file would load and serve garbage weights while every "
      "header-only check passes. The staged files are removed and the original is untouched.",
      "A file system that returned other bytes than were written, or a source rewritten in place while fix copied.",
      "Run fix again; if it recurs, check the disk and report it with the checkpoint's headers."),
    E("DSP-E090", "hub-redirect-refused", "The server redirected to another host",
      "An answer redirected off the endpoint's host (and not to the Hub's own CDN); dspark-ckpt follows redirects "
      "within the endpoint's host only, so a token or a request never goes where the user did not point it.",
      _HUB, "A mirror in HF_ENDPOINT that redirects to a third-party host.",
      "Point HF_ENDPOINT at a server that answers itself, or at the Hub."),
    E("DSP-E091", "hub-redirect-loop", "The server's redirects loop or never end",
      "A redirect led back to a URL already visited, or there were more redirects than the limit.", _HUB,
      "A misconfigured proxy that redirects a file to itself.", "Fix the server or proxy, or use another endpoint."),
    E("DSP-E092", "hub-answer-too-large", "An answer is larger than dspark-ckpt will read",
      "The server announced or sent more bytes than the budget for that request (a config, an index, a header "
      "range), or ignores Range so that reaching a header would mean downloading the shard.",
      "Reading on would cost unbounded memory or bandwidth for a check that needs kilobytes. " + _HUB,
      "A server that ignores `Range:` and streams a 20 GB shard for a 100 kB header.",
      "Use a server that honours Range requests (the Hub does), or download the checkpoint and check it locally."),
    E("DSP-E093", "hub-too-slow", "An answer took longer than the deadline",
      "One try of a request ran past its deadline (three timeouts by default), however the bytes trickled in.",
      "A server sending a byte a second would otherwise hold the run forever. " + _HUB,
      "A throttled mirror that dribbles a config.json.", "Retry, or raise DSPARK_CKPT_HUB_DEADLINE (seconds)."),
    E("DSP-E094", "hub-answer-malformed", "The server's answer is malformed",
      "An answer that cannot be what was asked: a body that does not decompress, a compressed byte range, a "
      "Content-Range that is unreadable or starts elsewhere, a model_info document that is not what the Hub sends.",
      "Bytes from a broken answer would be read as a header and give confident wrong findings. " + _HUB,
      "A proxy that gzips `Range` answers.", "Fix the server or proxy, or use the Hub directly."),
    E("DSP-E095", "hub-bad-commit", "The Hub's answer names no valid commit",
      "model_info gave a commit sha that is not 40 hex digits (or none), so the revision cannot be pinned.",
      "Every file must come from one commit; without it the files could mix revisions. " + _HUB,
      "A fake or broken Hub server that answers `sha: \"main\"`.", "Use the Hub or a faithful mirror."),
    E("DSP-E096", "hub-download-unwritable", "`fix --push`: a downloaded file cannot be written to the cache",
      "fix downloads the checked commit's files into the Hugging Face cache (its snapshot folder) to repair them, "
      "and writing one there failed: a full disk, no permission, a read-only HF_HOME.",
      "Without every file the repair cannot be planned, so no pull request is opened; the partial download is "
      "removed.", "`HF_HOME=/read-only dspark-ckpt fix org/draft --push`.",
      "Free space or fix the permissions of HF_HOME (or point HF_HOME at a writable folder), then run it again."),
    E("DSP-E097", "hub-download-mismatch", "`fix --push`: a downloaded file does not hash to the sha256 the Hub lists",
      "fix downloads the checked commit's files to repair them, and model_info lists each LFS file's sha256; the "
      "bytes the server sent (or a copy already in the cache) hash to something else.",
      "A repair built on other bytes than the commit's would be pushed as a pull request on that commit; nothing is "
      "put in the cache and no pull request is opened.",
      "A mirror or proxy behind HF_ENDPOINT that serves a stale or altered shard of the listed size.",
      "Point HF_ENDPOINT at the Hub or a faithful mirror, or retry later; a cached copy that does not match is "
      "downloaded again."),
    # --- DSP-E10x: command-line conventions shared by every command ---
    E("DSP-E100", "bad-revision", "`--revision` is empty, padded or holds an @",
      "The value of --revision cannot be a Hub revision (branch, tag, refs/pr/N or commit).", _STOP,
      "`dspark-ckpt check org/draft --revision ''` or `--revision main@v2`.",
      "Give one revision: a branch, tag, refs/pr/N or commit sha."),
    E("DSP-E101", "revision-given-twice", "`org/repo@REV` and `--revision` name different revisions",
      "A checkpoint argument pins a revision and --revision pins another one.",
      "Checking one of them silently would answer for the wrong commit. " + _STOP,
      "`dspark-ckpt check org/draft@v1 --revision v2`.", "Give the revision once: org/repo@REV or --revision REV."),
    E("DSP-E102", "revision-without-hub-repo", "`--revision` where no checkpoint is a Hub repo",
      "--revision applies to `org/repo` arguments, and every checkpoint given is a local path.",
      "A flag that changes nothing hides a mistake (a local folder named like a repo, a missing hf://). " + _STOP,
      "`dspark-ckpt check ./draft --revision main`.",
      "Drop --revision for local folders; write hf://org/repo when a local folder has the repo's name."),
    E("DSP-E103", "color-conflict", "`--no-color` with `--color always`",
      "--no-color means --color never, which contradicts --color always.", _STOP,
      "`dspark-ckpt check ./draft --color always --no-color`.", "Keep one of them."),
    E("DSP-E104", "statistics-format", "`--statistics` with a format other than text or json",
      "--statistics prints counts per code, in text or as a JSON list; the other formats are reports of findings.",
      "Writing counts where a SARIF, JUnit or Code Quality reader expects findings would break the job that reads "
      "it. " + _STOP, "`dspark-ckpt check ./draft --statistics --format sarif`.",
      "Drop --statistics, or use --format text or json with it."),
    # --- DSP-E11x: a checkpoint argument that is the wrong kind of file ---
    E("DSP-E110", "json-file-given", "A JSON file (config.json, the shard index) was given as the checkpoint",
      "The argument is a `.json` file: a draft's config.json, its `model.safetensors.index.json`, or another JSON "
      "file. A checkpoint is the folder holding them (or one `.safetensors` file, with --config).",
      "Read as a safetensors file, its first 8 bytes would give a nonsense header length and a confident false "
      "error. " + _NO_ANSWER, "`dspark-ckpt check draft/config.json`.",
      "Give the folder: `dspark-ckpt check draft`."),
    E("DSP-E111", "not-safetensors", "A weight file in another format was given (.bin, .pt, .gguf, ...)",
      "The argument is a PyTorch pickle, GGUF, ONNX or other non-safetensors weight file; dspark-ckpt reads "
      "safetensors headers only.", "Parsing it as safetensors would report nonsense about a file that is "
      "simply another format. " + _NO_ANSWER, "`dspark-ckpt check draft/pytorch_model.bin`.",
      "Convert the weights to safetensors (what vLLM and SGLang load drafts from), then check the folder."),
)
