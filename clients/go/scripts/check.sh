#!/bin/sh
# Everything the Go client must pass: go vet (the client and the conformance driver, a module
# of its own that uses this one by `replace`), the tests with the race detector (property
# tests and the live-host tests included), then bounded fuzzing of the SSE reader (raw bytes;
# generated streams against their model), the submission checks and the whole Stream path
# (docs/property-tests.md). Every step runs and names itself when it fails; a fuzz target that
# finds an input prints it and where it was saved.
#
# No minimization: minimizing a new input can outlast -fuzztime and then fails the run with
# "context deadline exceeded"; without it the budget goes to executing inputs.
# AGENTICDRIVER_FUZZ_TIME (e.g. 10m) gives each target a longer run.
set -u
client="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$client/../.." && pwd)"
steps_label=go
. "$root/scripts/lib/steps.sh"

# fuzz TARGET: runs the target; when it fails, shows each input it saved under testdata/fuzz.
fuzz() {
  corpus="$client/testdata/fuzz/$1"
  known="$(ls "$corpus" 2>/dev/null)"
  if in_dir "$client" go test -run '^$' -fuzz "^$1\$" -fuzztime "${AGENTICDRIVER_FUZZ_TIME:-5s}" -fuzzminimizetime 0s -parallel 1 .; then
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
for target in FuzzSSEReader FuzzSSEModel FuzzSubmissions FuzzStreamPath; do
  step "fuzz: $target" fuzz "$target"
done
finish
