#!/bin/sh
# Everything the Rust client must pass: formatting, clippy in every feature combination
# (types only, async, async + blocking), and the tests. All builds share one target folder;
# the test build is the same profile and features as the conformance driver's build.
set -eu
cd "$(dirname "$0")/.."
cargo fmt --check
cargo clippy --locked --no-default-features -- -D warnings
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --all-targets --features blocking -- -D warnings
cargo test --locked --features blocking
