"""The peers' side of bench/run: a worker process pinned to T cores that
runs the benchmark models with one framework's peers -- ONNX Runtime;
PyTorch eager and torch.compile (Inductor; default and dynamic=True); or
jax.jit (XLA CPU) -- checks each peer's outputs against autofuse's once
per model, and times them.

Protocol: bench/run starts `python peers.py --threads T --peers P,...`,
writes one JSON case per line to its stdin and reads one JSON result per
line from its stdout (see Worker.case for the fields). The first line it
prints says which frameworks imported ({"ready": {name: version}}).

One worker per framework (GROUPS): their thread pools must not share a
process. ONNX Runtime's spinning intra-op threads next to torch's OpenMP
team made torch eager's 2-thread skip_layernorm [1, 64, 768] 36.6 ms
instead of 0.020 ms (each OpenMP barrier waited for a core).

Threads: the process pins itself to its first T allowed cores before any
framework is imported (so jax/XLA, oneDNN and OpenMP size their pools to T)
and also sets torch.set_num_threads(T) and ORT's intra_op_num_threads = T.

Timing: for each shape, every peer runs 3 warm-up calls, then rounds that
visit the peers in turn (one untimed call, then a block of timed calls
each), until min_time seconds per peer have passed; the median call time
is reported. Outputs are synchronized (jax block_until_ready) inside each
timed call. ORT runs through IO binding into preallocated outputs (as
autofuse's bench path does); torch and jax allocate outputs per call as
their users' code does.
"""

import argparse
import json
import os
import statistics
import sys
import time
import traceback

PEERS = ("onnxruntime", "eager", "inductor", "inductor_dynamic", "xla")
# framework -> its peers: one worker process each (see above).
GROUPS = {"onnxruntime": ("onnxruntime",), "torch": ("eager", "inductor", "inductor_dynamic"),
          "jax": ("xla",)}
# |peer - autofuse| <= ATOL + RTOL * |autofuse| elementwise. bf16: eager
# torch rounds to bf16 after every op (30 roundings in chain30: 0.04 off
# on values ~2), the others compute in f32 inside; a wrong program (a wrong
# constant, mask or axis) is off by O(1).
TOLERANCE = {"f32": (1e-4, 1e-3), "bf16": (8e-2, 5e-2)}


def pin(threads):
    allowed = sorted(os.sched_getaffinity(0))
    if threads > len(allowed):
        raise SystemExit(f"peers: --threads {threads} but only {len(allowed)} cores allowed")
    os.sched_setaffinity(0, allowed[:threads])
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)


def import_peers(threads, peers):
    """Imports the frameworks `peers` need; returns {name: version}."""
    found = {}
    wanted = {g for g, members in GROUPS.items() if set(members) & set(peers)}
    if "onnxruntime" in wanted:
        try:
            import onnxruntime

            found["onnxruntime"] = onnxruntime.__version__
        except ImportError:
            pass
    if "torch" in wanted:
        try:
            import torch

            torch.set_num_threads(threads)
            found["torch"] = torch.__version__
        except ImportError:
            pass
    if "jax" in wanted:
        try:
            import jax

            jax.config.update("jax_platforms", "cpu")
            found["jax"] = jax.__version__
        except ImportError:
            pass
    return found


def short_reason(e):
    """A one-line reason a peer cannot run a model (the whole is in the log)."""
    import re

    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    m = re.search(r"Could not find an implementation for (\S+)", str(e))
    if m:
        return f"n/a: ORT has no CPU kernel for {m.group(1)} in this dtype"
    return f"n/a: {type(e).__name__}: {text[:150]}"


def to_f32(x):
    import numpy as np

    if hasattr(x, "detach"):  # torch
        return x.detach().float().numpy()
    return np.asarray(x).astype(np.float32)


def check(outputs, expected, dtype):
    """Max of |got - want| / (atol + rtol |want|) over outputs: <= 1 passes."""
    import numpy as np

    atol, rtol = TOLERANCE[dtype]
    worst = 0.0
    for got, want in zip(outputs, expected):
        got = to_f32(got)
        if got.shape != want.shape:
            return float("inf")
        ratio = np.abs(got - want) / (atol + rtol * np.abs(want))
        if ratio.size:
            worst = max(worst, float(np.nanmax(np.where(np.isnan(got), np.inf, ratio))))
    return worst


class Worker:
    def __init__(self, threads, found, inductor_cache):
        self.threads = threads
        self.found = found
        self.functions = {}  # (model path, peer) -> callable reused across shapes
        if inductor_cache:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = inductor_cache

    # --- runners: make(peer, model, dtype, inputs) -> zero-arg callable --------

    def ort_runner(self, path, model, inputs):
        import numpy as np
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        feeds = {k: np.ascontiguousarray(v) for k, v in inputs.items()}
        first = sess.run(None, feeds)
        binding = sess.io_binding()
        for name, value in feeds.items():
            binding.bind_cpu_input(name, value)
        out_values = []
        for meta, ref in zip(sess.get_outputs(), first):
            value = ort.OrtValue.ortvalue_from_numpy(np.empty_like(ref))
            binding.bind_ortvalue_output(meta.name, value)
            out_values.append(value)

        def call():
            sess.run_with_iobinding(binding)
            return [v.numpy() for v in out_values]

        return call

    def torch_runner(self, peer, path, model, dtype, inputs, shape_key):
        import torch
        import onnx_interp

        tdtype = torch.bfloat16 if dtype == "bf16" else torch.float32
        args = [
            torch.from_numpy(v).to(tdtype) if v.dtype.kind == "f" else torch.from_numpy(v)
            for v in inputs.values()
        ]
        key = (path, peer) if peer != "inductor" else (path, peer, shape_key)
        fn = self.functions.get(key)
        if fn is None:
            interp = onnx_interp.Interpreter(model, onnx_interp.TorchOps(torch, tdtype))
            # A fresh code object per compiled function: dynamo caches by code
            # object, and the default mode must compile for this shape alone
            # rather than reuse (or turn dynamic) another shape's entry.
            # (Unique name and file too: dynamo's profile of dynamic dims is
            # keyed by them.)
            name = f"bench_fn_{len(self.functions)}"
            ns = {"interp": interp}
            src = f"def {name}(*args):\n    return interp(*args)\n"
            exec(compile(src, f"<{name}>", "exec"), ns)
            if peer == "eager":
                fn = ns[name]
            elif peer == "inductor":
                fn = torch.compile(ns[name])
            else:
                fn = torch.compile(ns[name], dynamic=True)
            self.functions[key] = fn

        def call():
            with torch.no_grad():
                return fn(*args)

        return call

    def jax_runner(self, path, model, dtype, inputs):
        import jax
        import jax.numpy as jnp
        import onnx_interp

        jdtype = jnp.bfloat16 if dtype == "bf16" else jnp.float32
        args = [
            jax.device_put(jnp.asarray(v, dtype=jdtype) if v.dtype.kind == "f" else jnp.asarray(v))
            for v in inputs.values()
        ]
        fn = self.functions.get((path, "xla"))
        if fn is None:
            interp = onnx_interp.Interpreter(model, onnx_interp.JaxOps(jnp, jax, jdtype))
            fn = self.functions[(path, "xla")] = jax.jit(interp)

        def call():
            return jax.block_until_ready(fn(*args))

        return call

    def make(self, peer, path, model, dtype, inputs, shape_key):
        if peer == "onnxruntime":
            if "onnxruntime" not in self.found:
                raise LookupError("onnxruntime not installed")
            return self.ort_runner(path, model, inputs)
        if peer in ("eager", "inductor", "inductor_dynamic"):
            if "torch" not in self.found:
                raise LookupError("torch not installed")
            return self.torch_runner(peer, path, model, dtype, inputs, shape_key)
        if "jax" not in self.found:
            raise LookupError("jax not installed")
        return self.jax_runner(path, model, dtype, inputs)

    # --- one case ----------------------------------------------------------------

    def case(self, req):
        """req: model (path), dtype, shapes [str], peers [str], min_time (s),
        check: {"shape": str, "expected": path of an .npz of autofuse's
        outputs (f32) in output order} or null. Returns per peer and shape
        {"ms", "first_call_s", "reps"} or {"status": why not timed}, and per
        peer the check's error ratio."""
        import numpy as np
        import onnx

        model = onnx.load(req["model"])
        dtype = req["dtype"]
        res = {"peers": {}, "check": {}}
        # The check: once per model, at the check shape, before any timing.
        chk = req.get("check")
        expected = None
        if chk:
            with np.load(chk["expected"]) as z:
                expected = [z[f"out{i}"] for i in range(len(z.files))]
        for peer in req["peers"]:
            res["peers"][peer] = {}
            if not chk:
                continue
            try:
                inputs = self.inputs(model, chk["shape"], dtype)
                call = self.make(peer, req["model"], model, dtype, inputs, chk["shape"])
                err = check(call(), expected, dtype)
                res["check"][peer] = err
                if not err <= 1.0:
                    res["peers"][peer]["status"] = f"mismatch (error ratio {err:.3g} > 1)"
            except Exception as e:  # a peer that cannot run the model is n/a
                traceback.print_exc()
                res["peers"][peer]["status"] = short_reason(e)
        live = [p for p in req["peers"] if "status" not in res["peers"][p]]
        for shape in req["shapes"]:
            inputs = self.inputs(model, shape, dtype)
            runners, first = {}, {}
            for peer in live:
                try:
                    t0 = time.perf_counter()
                    call = self.make(peer, req["model"], model, dtype, inputs, shape)
                    call()
                    first[peer] = time.perf_counter() - t0
                    runners[peer] = call
                except Exception as e:
                    traceback.print_exc()
                    res["peers"][peer][shape] = {"status": short_reason(e)}
            times = self.time_interleaved(runners, req["min_time"])
            for peer, samples in times.items():
                res["peers"][peer][shape] = {
                    "ms": 1e3 * statistics.median(samples),
                    "reps": len(samples),
                    "first_call_s": first[peer],
                }
        return res

    def inputs(self, model, shape, dtype):
        import models

        inputs = models.make_inputs(model, models.parse_shape(shape))
        if dtype == "bf16":
            inputs = {
                k: models.round_to_bf16(v) if v.dtype.kind == "f" else v for k, v in inputs.items()
            }
        return inputs

    @staticmethod
    def time_interleaved(runners, min_time):
        if not runners:
            return {}
        per_call = {}
        for peer, call in runners.items():
            for _ in range(2):
                call()
            t0 = time.perf_counter()
            call()
            per_call[peer] = max(time.perf_counter() - t0, 1e-7)
        block = {p: int(min(50, max(1, 0.02 / t))) for p, t in per_call.items()}
        samples = {p: [] for p in runners}
        spent = {p: 0.0 for p in runners}
        rounds = 0
        while rounds < 1000 and (rounds < 3 or min(spent.values()) < min_time):
            for peer, call in runners.items():
                call()  # settles caches after the previous peer
                for _ in range(block[peer]):
                    t0 = time.perf_counter()
                    call()
                    dt = time.perf_counter() - t0
                    samples[peer].append(dt)
                    spent[peer] += dt
            rounds += 1
        return samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--peers", required=True, help="comma-separated peers of one framework")
    ap.add_argument("--inductor-cache", default="")
    args = ap.parse_args()
    pin(args.threads)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    found = import_peers(args.threads, args.peers.split(","))
    worker = Worker(args.threads, found, args.inductor_cache)
    out = sys.stdout
    sys.stdout = sys.stderr  # frameworks' prints must not corrupt the protocol
    print(json.dumps({"ready": found}), file=out, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = worker.case(json.loads(line))
        except Exception:
            result = {"error": traceback.format_exc()[-2000:]}
        print(json.dumps(result), file=out, flush=True)


if __name__ == "__main__":
    main()
