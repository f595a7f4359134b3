#!/bin/sh
# Everything the Go client must pass: go vet (the client and the conformance driver, a module
# of its own that uses this one by `replace`), the tests with the race detector (property
# tests and the live-host tests included), then bounded fuzzing of the SSE reader (raw bytes;
# generated streams against their model), the submission checks and the whole Stream path
# (docs/property-tests.md). Every step runs and names itself when it fails; a fuzz target that
# finds an input prints it and where it was saved.
#
# Budgets are counts of executions, not durations: with a duration, Go before 1.27 can fail a
# target that found nothing with "context deadline exceeded" when the time is up while a worker
# is busy (go.dev/issue/75804), which a loaded machine makes likely. Each count is about what
# the target executes in 5 s on a busy 2-core box. No minimization: it has a deadline of its own.
# AGENTICDRIVER_FUZZ_TIME (e.g. 10m or 1000000x) gives every target another budget.
set -u
client="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$client/../.." && pwd)"
steps_label=go
. "$root/scripts/lib/steps.sh"

# fuzz TARGET EXECUTIONS: runs the target; when it fails, shows each input it saved under testdata/fuzz.
fuzz() {
  corpus="$client/testdata/fuzz/$1"
  known="$(ls "$corpus" 2>/dev/null)"
  if in_dir "$client" go test -run '^$' -fuzz "^$1\$" -fuzztime "${AGENTICDRIVER_FUZZ_TIME:-$2}" -fuzzminimizetime 0s -parallel 1 .; then
    return 0
  else
    fuzz_status=$?
  fi
  for input in $(ls "$corpus" 2>/dev/null); do
    case "
$known
" in
      *"
$input
"*) ;;
      *)
        printf '%s found a failing input, saved at %s (it now runs as a regression case in `go test`; commit it with the fix):\n' "$1" "clients/go/testdata/fuzz/$1/$input" >&2
        cat "$corpus/$input" >&2
        printf 're-run it: (cd clients/go && go test -run %s/%s .)\n' "$1" "$input" >&2
        ;;
    esac
  done
  return "$fuzz_status"
}

step "go vet: client" in_dir "$client" go vet ./...
step "go vet: conformance driver" in_dir "$root/conformance/drivers/go" go vet ./...
step "go test -race: client" in_dir "$client" go test -race -count=1 ./...
step "fuzz: FuzzSSEReader" fuzz FuzzSSEReader 30000x
step "fuzz: FuzzSSEModel" fuzz FuzzSSEModel 16000x
step "fuzz: FuzzSubmissions" fuzz FuzzSubmissions 10000x
step "fuzz: FuzzStreamPath" fuzz FuzzStreamPath 6000x
finish
