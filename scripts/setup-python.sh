#!/usr/bin/env bash
# Creates the git-ignored Python virtual environment .venv (repository root)
# with the packages the ONNX tests use: onnx 1.17.0 (its backend node tests
# are the conformance suite of `autofuse conformance`), numpy and
# onnxruntime (reference outputs for the model tests). Idempotent: when
# .venv already has these packages, pip is not called at all.
# Needs python3 with venv (Debian: python3-venv, see scripts/setup-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=("onnx==1.17.0" "numpy" "onnxruntime")
stamp=.venv/.autofuse-requirements
check='import onnx, numpy, onnxruntime; assert onnx.__version__ == "1.17.0", onnx.__version__'
if [ -x .venv/bin/python ] && [ "$(cat "$stamp" 2>/dev/null)" = "${requirements[*]}" ] &&
  .venv/bin/python -c "$check" 2>/dev/null; then
  echo "setup-python: .venv is up to date"
  exit 0
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
echo "setup-python: installing ${requirements[*]} into .venv"
.venv/bin/python -m pip install --quiet --disable-pip-version-check "${requirements[@]}"
.venv/bin/python -c "$check"
echo "${requirements[*]}" >"$stamp"
node_tests=$(.venv/bin/python -c 'import os, onnx; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"))')
echo "setup-python: ready; ONNX node tests in $node_tests"
