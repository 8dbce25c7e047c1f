"""Imports a BERT encoder layer and a GPT-2 block (tests/python/transformer_models.py)
with the autofuse CLI, checks their partition (kernel and library-op counts), and
compares `autofuse run` with onnxruntime over several (batch, seq) bindings.

Every model must compile exactly once over all bindings: the runs share one
fresh AUTOFUSE_CACHE_DIR, and `run --json` reports per process how many modules
the JIT compiled ("compiles") and how many it loaded from the cache
("cache_hits"). The first binding compiles, every later one must be a cache
hit, i.e. the generated code does not depend on the sizes.

Tolerance: |autofuse - onnxruntime| <= ATOL + RTOL * |onnxruntime| per element.
Both compute in f32 but sum in different orders (oneDNN vs MLAS matmuls over
K = 64 and 256, softmax and LayerNorm reductions; autofuse's kernels use
vectorized partial sums and its own erf/tanh/exp), so results differ by a few
ulps per op, compounding over ~10 dependent ops to ~1e-6 relative on O(1)
values; ATOL 1e-4 / RTOL 1e-3 leaves two orders of margin yet catches any real
error (a wrong mask, a wrong head split or a missing bias is off by >1e-2).

Usage: transformer_blocks.py PATH/TO/autofuse [--keep DIR] [--bindings 1x1,2x7]
Exit status 0 when everything matches, 1 otherwise (each failure is printed).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformer_models  # noqa: E402

ATOL = 1e-4
RTOL = 1e-3
DEFAULT_BINDINGS = [(1, 1), (2, 7), (3, 16), (1, 33), (2, 128)]
CLI_TIMEOUT_S = 300

# The partition `autofuse fuse --json` reports, per model: Kernel regions
# (generated code) and Library regions by op. Views (reshapes) and constants
# are not counted. A change here is a change in fusion: update the table in
# docs/transformer-blocks.md with it.
EXPECTED_PARTITION = {
    # Kernels: Q/K/V bias add + head transpose (3: move_views moves the
    # [b, s, 768] -> [b, s, 12, 64] reshape onto the Gemm output and the bias,
    # where it is a view), mask + scale + softmax (1), attention-output bias +
    # residual + LayerNorm (1), FFN bias + GELU (1), FFN-output bias + residual
    # + LayerNorm (1). The library transpose is the context's
    # [b, 12, s, 64] -> [b, s, 12, 64] (movement only, before a Gemm).
    "bert_layer_erf": {"kernels": 7, "library": {"matmul": 8, "transpose": 1}},
    "bert_layer_gelu_op": {"kernels": 7, "library": {"matmul": 8, "transpose": 1}},
    # Kernels: ln_1 (1), c_attn bias + split + head transpose (3, one per
    # q/k/v: the split's slices read the Gemm output as views), scale +
    # causal where + softmax with the causal mask's slice of the tril buffer
    # (1: iota + a chain of two gathers, one view of the buffer), c_proj
    # bias + residual + ln_2 (1), c_fc bias + gelu_new (1), mlp c_proj bias
    # + residual (1). The Conv1D's [b*s, n] -> [b, s, n] reshapes move onto
    # the Gemm outputs (views).
    "gpt2_block": {
        "kernels": 8,
        "library": {"matmul": 6, "transpose": 1},
    },
    # As gpt2_block; the Range-built mask fuses into the kernels around it.
    "gpt2_block_range_mask": {
        "kernels": 9,
        "library": {"matmul": 6, "transpose": 1},
    },
}


def run_cli(cli, args, env):
    proc = subprocess.run(
        [cli, *args], capture_output=True, text=True, env=env, timeout=CLI_TIMEOUT_S
    )
    if proc.returncode != 0:
        shown = " ".join(os.path.basename(a) if os.path.isabs(a) else a for a in args)
        detail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-20:])
        raise RuntimeError(f"`autofuse {shown}` exited {proc.returncode}: {detail}")
    return json.loads(proc.stdout)


def partition_counts(fuse_doc):
    library = Counter()
    for region in fuse_doc["regions"]:
        if region["kind"] == "library":
            library.update(region["ops"])
    return {"kernels": fuse_doc["kernels"], "library": dict(sorted(library.items()))}


def compare(got, want):
    """(ok, max_abs, max_rel, worst, where): worst = max of err / (ATOL + RTOL |want|),
    at index `where`."""
    inf = float("inf")
    if got.shape != want.shape or got.dtype != want.dtype:
        return False, inf, inf, inf, None
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    if not np.isfinite(got64).all():
        first = np.unravel_index(np.argmin(np.isfinite(got64)), got.shape)
        return False, inf, inf, inf, tuple(int(i) for i in first)
    err = np.abs(got64 - want64)
    nonzero = want64 != 0
    max_rel = float((err[nonzero] / np.abs(want64[nonzero])).max()) if nonzero.any() else 0.0
    ratio = err / (ATOL + RTOL * np.abs(want64))
    where = np.unravel_index(np.argmax(ratio), got.shape)
    worst = float(ratio[where])
    return worst <= 1.0, float(err.max()), max_rel, worst, tuple(int(i) for i in where)


def check_model(name, cli, work, env, bindings):
    """(failure messages, empty when the model passes; the number of compiles)."""
    build, make_inputs = transformer_models.MODELS[name]
    model = build()
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    failures = []

    counts = partition_counts(run_cli(cli, ["fuse", path, "--json"], env))
    expected = EXPECTED_PARTITION[name]
    print(f"{name}: {counts['kernels']} kernels, library ops {counts['library']}")
    if counts != expected:
        failures.append(f"{name}: partition {counts}, expected {expected}")

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    output_names = [o.name for o in model.graph.output]
    compiles = cache_hits = 0
    for index, (batch, seq) in enumerate(bindings):
        tag = f"{name} batch={batch} seq={seq}"
        rng = np.random.default_rng(1000 * index + seq)
        inputs = make_inputs(batch, seq, rng)
        run_dir = os.path.join(work, f"{name}_b{batch}_s{seq}")
        os.makedirs(run_dir, exist_ok=True)
        input_args = []
        for input_name, value in inputs.items():
            file = os.path.join(run_dir, input_name + ".npy")
            np.save(file, value)
            input_args += ["--input", f"{input_name}={file}"]
        wanted = dict(zip(output_names, session.run(output_names, inputs)))

        start = time.monotonic()
        try:
            doc = run_cli(cli, ["run", path, *input_args, "--output-dir", run_dir, "--json"], env)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            failures.append(f"{tag}: {e}")
            continue
        seconds = time.monotonic() - start
        compiles += doc["compiles"]
        cache_hits += doc["cache_hits"]
        if doc["kernels"] != counts["kernels"]:
            failures.append(f"{tag}: run compiled {doc['kernels']} kernels, fuse reported "
                            f"{counts['kernels']}")
        for output_name, want in wanted.items():
            got = np.load(os.path.join(run_dir, output_name + ".npy"))
            ok, max_abs, max_rel, worst, where = compare(got, want)
            print(f"  {tag:<34} {output_name}: max_abs={max_abs:.2e} max_rel={max_rel:.2e} "
                  f"err/tol={worst:.3f} compiles={doc['compiles']} "
                  f"cache_hits={doc['cache_hits']} ({seconds:.2f} s) {'ok' if ok else 'MISMATCH'}")
            if not ok:
                failures.append(f"{tag}: output {output_name} {got.dtype}{list(got.shape)} "
                                f"vs onnxruntime {want.dtype}{list(want.shape)}: "
                                f"max_abs={max_abs:.3e} max_rel={max_rel:.3e}, worst at {where} "
                                f"(atol {ATOL}, rtol {RTOL})")
    runs = len(bindings)
    print(f"  {name}: {compiles} compile(s), {cache_hits} cache hit(s) over {runs} bindings")
    if compiles != 1 or cache_hits != runs - 1:
        failures.append(f"{name}: {compiles} compiles and {cache_hits} cache hits over {runs} "
                        f"bindings; expected 1 compile and {runs - 1} hits")
    return failures, compiles


def parse_bindings(text):
    out = []
    for item in text.split(","):
        batch, seq = item.lower().split("x")
        out.append((int(batch), int(seq)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cli", help="path to the autofuse executable")
    parser.add_argument("--keep", help="write models, inputs and outputs here (kept)")
    parser.add_argument("--bindings", type=parse_bindings, default=DEFAULT_BINDINGS,
                        help="BATCHxSEQ,... (default 1x1,2x7,3x16,1x33,2x128)")
    parser.add_argument("--models", nargs="*", default=list(transformer_models.MODELS))
    args = parser.parse_args()

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="af-blocks-") as tmp:
        work = args.keep or os.path.join(tmp, "work")
        os.makedirs(work, exist_ok=True)
        # One fresh cache for every run: the first binding of each model must compile.
        cache = os.path.join(tmp, "cache")
        env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache)
        failures, total_compiles = [], 0
        for name in args.models:
            model_failures, compiles = check_model(name, args.cli, work, env, args.bindings)
            failures += model_failures
            total_compiles += compiles
        listing = os.listdir(cache) if os.path.isdir(cache) else []
        modules = [f for f in listing if f.endswith(".so")]
        print(f"cache {cache}: {len(modules)} module(s) for {len(args.models)} model(s)")
        if len(modules) != total_compiles:
            failures.append(f"the cache holds {len(modules)} modules after {total_compiles} "
                            "compiles")
    print(f"wall time {time.monotonic() - start:.1f} s")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("all outputs match onnxruntime")
    return 0


if __name__ == "__main__":
    sys.exit(main())
