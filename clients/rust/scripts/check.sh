#!/bin/sh
# Everything the Rust client must pass: formatting, clippy in every feature combination
# (types only, async, async + blocking), and the tests; then formatting and clippy of the
# conformance driver (conformance/drivers/rust, a crate of its own using this one by path).
# All builds share one target folder; the test build is the same profile and features as
# the conformance driver's build.
set -eu
cd "$(dirname "$0")/.."
driver=../../conformance/drivers/rust/Cargo.toml
export CARGO_TARGET_DIR="$PWD/target"
cargo fmt --check
cargo fmt --check --manifest-path "$driver"
cargo clippy --locked --no-default-features -- -D warnings
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --all-targets --features blocking -- -D warnings
cargo clippy --locked --manifest-path "$driver" -- -D warnings
cargo test --locked --features blocking
