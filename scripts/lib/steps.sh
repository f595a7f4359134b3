# Named steps for the per-language check scripts (POSIX sh; source it). Every step runs, even
# after one failed, unless a later one cannot work without it (`step_or_stop`); a failure
# names its step, and `finish` lists the failed steps and exits non-zero.
#
#   steps_label=go
#   . "$root/scripts/lib/steps.sh"
#   step "go vet: client" in_dir "$client" go vet ./...
#   finish
failed_steps=""

# step NAME COMMAND [ARG...]: runs the command; on failure records NAME and its exit status.
step() {
  step_name=$1
  shift
  printf '\n--- %s\n' "$step_name" >&2
  if "$@"; then
    return 0
  else
    step_status=$?
  fi
  printf -- '--- FAILED: %s (exit %s)\n' "$step_name" "$step_status" >&2
  failed_steps="${failed_steps}  ${step_name} (exit ${step_status})
"
  return "$step_status"
}

# step_or_stop NAME COMMAND [ARG...]: a step the rest cannot do without; stops at once on failure.
step_or_stop() {
  step "$@" || finish
}

# in_dir DIR COMMAND [ARG...]: runs the command in DIR (in a subshell).
in_dir() {
  (cd "$1" && shift && "$@")
}

# finish: prints the failed steps and exits 1, or says every step passed.
finish() {
  if [ -n "$failed_steps" ]; then
    printf '\n%s: these steps failed:\n%s' "$steps_label" "$failed_steps" >&2
    exit 1
  fi
  printf '\n%s: every step passed\n' "$steps_label" >&2
  exit 0
}
