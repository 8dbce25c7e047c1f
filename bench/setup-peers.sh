#!/usr/bin/env bash
# Creates the git-ignored virtual environment .venv-bench (repository root)
# with what bench/run needs: numpy, onnx (the model files), matplotlib (the
# plot) and the peers it compares against: onnxruntime, torch (eager and
# torch.compile/Inductor) and jax[cpu] (jax.jit/XLA). Only PyPI is assumed
# reachable: torch's PyPI wheel for Linux x86-64 is the CUDA build and pulls
# the nvidia-* packages (several GB); it runs on the CPU all the same.
# Idempotent: when the venv already imports everything, pip is not called.
#
# Usage: bench/setup-peers.sh [--minimal]
#   --minimal  numpy, onnx and matplotlib only (no peers: their columns say n/a)
# Needs python3 with venv (Debian: python3-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-bench
base=("numpy" "onnx==1.17.0" "matplotlib")
peers=("onnxruntime" "torch" "jax[cpu]")
case "${1:-}" in
  --minimal) peers=() ;;
  "") ;;
  -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
  *) echo "setup-peers: unknown option $1" >&2; exit 2 ;;
esac
check='import numpy, onnx, matplotlib'
[ ${#peers[@]} -gt 0 ] && check+=', onnxruntime, torch, jax'
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "setup-peers: $venv is up to date"
  exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
echo "setup-peers: installing ${base[*]} ${peers[*]} into $venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${base[@]}" ${peers[@]+"${peers[@]}"}
"$venv/bin/python" -c "$check"
"$venv/bin/python" - <<'PY'
import importlib
for name in ("numpy", "onnx", "onnxruntime", "torch", "jax", "matplotlib"):
    try:
        print(f"setup-peers: {name} {importlib.import_module(name).__version__}")
    except ImportError:
        print(f"setup-peers: {name} not installed")
PY
echo "setup-peers: ready ($(du -sh "$venv" | cut -f1))"
