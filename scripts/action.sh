#!/usr/bin/env bash
# The script behind action.yml: every input arrives as an INPUT_* environment variable and is passed on as one
# quoted argument; nothing is eval'd, so an input cannot run shell code. Exit code: the check's.
set -euo pipefail
set -f  # no glob expansion of inputs

py="${INPUT_PYTHON:-python3}"

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
  "$py" -m pip install --disable-pip-version-check --quiet "${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}"
fi

args=()
while IFS= read -r line || [[ -n "$line" ]]; do  # one checkpoint per line, so paths may hold spaces
  line="${line%$'\r'}"
  [[ -n "${line// /}" ]] && args+=("$line")
done <<< "${INPUT_CHECKPOINTS:-}"
if [[ ${#args[@]} -eq 0 ]]; then
  echo "::error title=dspark-ckpt::the checkpoints input is empty" >&2
  exit 2
fi

[[ -n "${INPUT_TARGET:-}" ]] && args+=(--target "$INPUT_TARGET")
[[ -n "${INPUT_TARGET_VOCAB_SIZE:-}" ]] && args+=(--target-vocab-size "$INPUT_TARGET_VOCAB_SIZE")
[[ -n "${INPUT_FAIL_ON:-}" ]] && args+=(--fail-on "$INPUT_FAIL_ON")
[[ -n "${INPUT_SETTINGS:-}" ]] && args+=(--settings "$INPUT_SETTINGS")
for option in runtime select extend-select ignore; do
  var="INPUT_$(printf '%s' "$option" | tr 'a-z-' 'A-Z_')"
  split_words words "${!var:-}"
  for word in "${words[@]}"; do args+=("--$option" "$word"); done
done

policy=()
[[ "${INPUT_EXIT_ZERO:-false}" == "true" ]] && policy+=(--exit-zero)

# Annotations on stdout, the Markdown summary into $GITHUB_STEP_SUMMARY; this run's exit code is the step's.
rc=0
"$py" -m dspark_ckpt check "${args[@]}" "${policy[@]}" --format github || rc=$?

# Extra reports never change the verdict, but failing to write one is an error (exit 2 or 3).
for format in sarif junit; do
  var="INPUT_$(printf '%s' "$format" | tr 'a-z' 'A-Z')_FILE"
  file="${!var:-}"
  [[ -z "$file" ]] && continue
  mkdir -p -- "$(dirname -- "$file")"
  extra=0
  "$py" -m dspark_ckpt check "${args[@]}" --exit-zero --quiet --format "$format" --output "$file" || extra=$?
  if [[ $extra -ge 2 && $rc -lt 2 ]]; then rc=$extra; fi
done

if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  echo "exit-code=$rc" >> "$GITHUB_OUTPUT"
fi
exit "$rc"
