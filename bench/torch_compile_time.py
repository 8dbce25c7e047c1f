"""One torch.compile (Inductor) compile-time measurement in a fresh process:
builds the torch function for an ONNX model (bench/onnx_interp.py), calls
the compiled function once (dynamo trace, Inductor codegen, C++ compile; or
cache loads when TORCHINDUCTOR_CACHE_DIR is warm) and reports that first
call's time less a steady-state call's, as JSON on stdout.

Usage: torch_compile_time.py MODEL.onnx --shape B=2,S=128 [--threads T]
bench/run points TORCHINDUCTOR_CACHE_DIR at an empty folder for the cold
figure and runs again on the filled folder for the warm one.
"""

import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--shape", required=True)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.threads])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import onnx
    import torch

    import models
    import onnx_interp

    if args.threads:
        torch.set_num_threads(args.threads)
    model = onnx.load(args.model)
    inputs = models.make_inputs(model, models.parse_shape(args.shape))
    tensors = [torch.from_numpy(v) for v in inputs.values()]
    interp = onnx_interp.Interpreter(model, onnx_interp.TorchOps(torch, torch.float32))

    def forward(*xs):
        return interp(*xs)

    fn = torch.compile(forward)
    with torch.no_grad():
        t0 = time.perf_counter()
        fn(*tensors)
        first = time.perf_counter() - t0
        steady = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn(*tensors)
            steady.append(time.perf_counter() - t0)
    print(json.dumps({"compile_s": first - min(steady), "first_call_s": first}))


if __name__ == "__main__":
    main()
