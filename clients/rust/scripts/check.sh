#!/bin/sh
# Everything the Rust client must pass: formatting, clippy in every feature combination
# (types only, async, async + blocking), and the tests; then formatting and clippy of the
# conformance driver (conformance/drivers/rust, a crate of its own using this one by path).
# Every step runs and names itself when it fails. All builds share one target folder; the
# test build is the same profile and features as the conformance driver's build.
set -u
crate="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$crate/../.." && pwd)"
steps_label=rust
. "$root/scripts/lib/steps.sh"
driver="$root/conformance/drivers/rust/Cargo.toml"
export CARGO_TARGET_DIR="$crate/target"
cd "$crate"
step "cargo fmt --check: client" cargo fmt --check
step "cargo fmt --check: conformance driver" cargo fmt --check --manifest-path "$driver"
step "clippy: wire types only (--no-default-features)" cargo clippy --locked --no-default-features -- -D warnings
step "clippy: async (default features, all targets)" cargo clippy --locked --all-targets -- -D warnings
step "clippy: async + blocking (all targets)" cargo clippy --locked --all-targets --features blocking -- -D warnings
step "clippy: conformance driver" cargo clippy --locked --manifest-path "$driver" -- -D warnings
step "cargo test --features blocking" cargo test --locked --features blocking
finish
