#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds autofuse and runs it on a bundled
# example (LayerNorm): fused into one kernel, compiled once, run on two
# shapes and checked against the reference interpreter. Safe to run again:
# every step is idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
bash scripts/setup-python.sh
cmake --preset release >/dev/null
cmake --build --preset release
./build/release/autofuse print examples/layernorm.af
./build/release/autofuse fuse examples/layernorm.af
./build/release/autofuse run examples/layernorm.af --check --shape N=4,D=768 --shape N=17,D=1023
