#!/usr/bin/env bash
# The script behind action.yml: every input arrives as an INPUT_* environment variable and is passed on as one
# quoted argument; nothing is eval'd, so an input cannot run shell code. Exit code: the check's.
set -euo pipefail
set -f  # no glob expansion of inputs

py="${INPUT_PYTHON:-python3}"

# Every way out goes through finish, so the `exit-code` output is written whatever happens; a failure of this script
# itself (a folder it cannot create, a failed install) is exit 2, never 1, which means "findings".
finish() {
  if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
    echo "exit-code=$1" >> "$GITHUB_OUTPUT" || echo "::warning title=dspark-ckpt::cannot write GITHUB_OUTPUT" >&2
  fi
  exit "$1"
}
trap 'finish 2' ERR  # anything unexpected under set -e

# Split a list input on newlines, commas and spaces into the array named by $1.
split_words() {
  local -n out=$1
  out=()
  local word
  for word in $(printf '%s' "$2" | tr ',\n\r\t' '    '); do
    out+=("$word")
  done
}

if [[ "${INPUT_INSTALL:-true}" == "true" ]]; then
  "$py" -m pip install --disable-pip-version-check --quiet "${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}" \
    || { echo "::error title=dspark-ckpt::pip could not install dspark-ckpt" >&2; finish 2; }
fi

args=()
while IFS= read -r line || [[ -n "$line" ]]; do  # one checkpoint per line, so paths may hold spaces
  line="${line%$'\r'}"
  [[ -n "${line// /}" ]] && args+=("$line")
done <<< "${INPUT_CHECKPOINTS:-}"
# No checkpoints: the speculative config (input or settings file) names the one to check, or check exits 2.
no_checkpoints=$(( ${#args[@]} == 0 ))

[[ -n "${INPUT_TARGET:-}" ]] && args+=(--target "$INPUT_TARGET")
[[ -n "${INPUT_TARGET_VOCAB_SIZE:-}" ]] && args+=(--target-vocab-size "$INPUT_TARGET_VOCAB_SIZE")
[[ -n "${INPUT_FAIL_ON:-}" ]] && args+=(--fail-on "$INPUT_FAIL_ON")
[[ -n "${INPUT_SETTINGS:-}" ]] && args+=(--settings "$INPUT_SETTINGS")
[[ -n "${INPUT_SPECULATIVE_CONFIG:-}" ]] && args+=(--speculative-config "$INPUT_SPECULATIVE_CONFIG")
# Without T, check exits 2 (DSP-E038) unless this is given (or the settings file says allow-no-target = true).
[[ "${INPUT_ALLOW_NO_TARGET:-false}" == "true" ]] && args+=(--allow-no-target)
for option in runtime select extend-select ignore; do
  var="INPUT_$(printf '%s' "$option" | tr 'a-z-' 'A-Z_')"
  split_words words "${!var:-}"
  for word in "${words[@]}"; do args+=("--$option" "$word"); done
done

policy=()
[[ "${INPUT_EXIT_ZERO:-false}" == "true" ]] && policy+=(--exit-zero)
[[ -n "${INPUT_REVISION:-}" ]] && args+=(--revision "$INPUT_REVISION")
# The token reaches huggingface_hub through the environment, never the command line (which `ps` shows).
[[ -n "${INPUT_TOKEN:-}" ]] && export HF_TOKEN="$INPUT_TOKEN"

# SARIF and JUnit are rendered by the same run, from the same report (--report FORMAT=FILE): one check, one set
# of Hub requests, reports that cannot drift from the annotations. A folder that cannot be made is an error.
reports=()
rc=0
for format in sarif junit; do
  var="INPUT_$(printf '%s' "$format" | tr 'a-z' 'A-Z')_FILE"
  file="${!var:-}"
  [[ -z "$file" ]] && continue
  if mkdir -p -- "$(dirname -- "$file")" 2>/dev/null; then
    reports+=(--report "$format=$file")
  else
    echo "::error title=dspark-ckpt::${format}-file: cannot create the folder of $file" >&2
    rc=2
  fi
done

# Annotations on stdout, the Markdown summary into $GITHUB_STEP_SUMMARY; this run's exit code is the step's
# (a report that cannot be written is exit 2, as is a folder above that could not be made).
run=0
"$py" -m dspark_ckpt check "${args[@]}" "${policy[@]}" "${reports[@]}" --format github || run=$?
if [[ $run -eq 2 && $no_checkpoints -eq 1 ]]; then
  echo "::error title=dspark-ckpt::the checkpoints input is empty, and no speculative config names a checkpoint" >&2
fi
if [[ $run -ne 0 && ( $rc -eq 0 || $run -ge 2 ) ]]; then rc=$run; fi

finish "$rc"
