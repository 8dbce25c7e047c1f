"""bench/run: the memory-bound benchmark suite against its peers and STREAM.

Usage: bench/run [--quick] [--threads 1,2] [--out DIR] [options]

For each coverage pattern (bench/models.py, the ONNX form of
examples/patterns/), shape (small, medium, large), dtype (f32, bf16) and
thread count: autofuse fused and unfused plus STREAM triad/copy with
ordinary and non-temporal stores (one `autofuse bench` run per pattern and
dtype, all shapes), then the peers on the same ONNX file in a worker pinned
to the same cores (bench/peers.py): ONNX Runtime, torch eager,
torch.compile (default and dynamic=True), jax.jit. Each peer's outputs are
checked against autofuse's once per model before it is timed. Then compile
times (cold and warm, fresh processes) against torch.compile. Writes
results.md, results.json and results.png to DIR (default out/bench-<date>).
docs/benchmarks.md describes the method and the JSON.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import models  # noqa: E402
import report  # noqa: E402
from peers import GROUPS, PEERS  # noqa: E402

QUICK_PATTERNS = ["skip_layernorm", "softmax_mask", "swiglu", "rotary"]
QUICK_COMPILE = ["skip_layernorm", "swiglu"]
TIMEOUT_S = 1200


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="bench/run",
        description="Benchmarks autofuse against ONNX Runtime, torch eager, torch.compile, "
        "jax.jit and STREAM on the coverage patterns; writes results.md/.json/.png.",
    )
    ap.add_argument("--quick", action="store_true",
                    help=f"a subset in < 10 min: {', '.join(QUICK_PATTERNS)}; small and large "
                    "shapes; f32; compile times for "
                    f"{', '.join(QUICK_COMPILE)} and the BERT layer")
    ap.add_argument("--threads", help="comma-separated thread counts (default 1,2); each at "
                    "most the cores this process may use")
    ap.add_argument("--out", help="output folder (default out/bench-<date>)")
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "release", "autofuse"),
                    help="the autofuse binary (default build/release/autofuse)")
    ap.add_argument("--patterns", help="comma-separated subset of: " + ", ".join(models.SHAPES))
    ap.add_argument("--sizes", help="comma-separated subset of small,medium,large")
    ap.add_argument("--dtypes", help="comma-separated subset of f32,bf16")
    ap.add_argument("--peers", help="comma-separated subset of " + ",".join(PEERS))
    ap.add_argument("--no-peers", action="store_true", help="autofuse and STREAM rows only")
    ap.add_argument("--no-compile-time", action="store_true", help="skip the compile-time table")
    ap.add_argument("--min-time", type=float,
                    help="seconds of timed calls per runner and shape (default 0.5; quick 0.15)")
    args = ap.parse_args(argv)
    cores = len(os.sched_getaffinity(0))

    def split(text, allowed, default):
        if not text:
            return default
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in allowed]
        if bad:
            ap.error(f"unknown {', '.join(bad)} (allowed: {', '.join(map(str, allowed))})")
        return items

    default_threads = sorted({1, min(2, cores)})
    try:
        args.threads = [int(t) for t in args.threads.split(",")] if args.threads else default_threads
    except ValueError:
        ap.error("--threads takes comma-separated integers")
    if any(t < 1 or t > cores for t in args.threads):
        ap.error(f"--threads: each must be in 1..{cores} (the cores this process may use)")
    args.patterns = split(args.patterns, list(models.SHAPES),
                          QUICK_PATTERNS if args.quick else list(models.SHAPES))
    args.sizes = split(args.sizes, list(models.SIZES), ["small", "large"] if args.quick else list(models.SIZES))
    args.dtypes = split(args.dtypes, ["f32", "bf16"], ["f32"] if args.quick else ["f32", "bf16"])
    args.peers = [] if args.no_peers else split(args.peers, list(PEERS), list(PEERS))
    if args.min_time is None:
        args.min_time = 0.15 if args.quick else 0.5
    if not args.out:
        args.out = os.path.join(REPO, "out", "bench-" + datetime.date.today().isoformat())
    return args


def pinned(threads):
    cores = sorted(os.sched_getaffinity(0))[:threads]
    return lambda: os.sched_setaffinity(0, cores)


def machine_info():
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = 0.0
    try:
        with open("/proc/meminfo") as f:
            mem = int(next(line.split()[1] for line in f if line.startswith("MemTotal"))) / 2**20
    except (OSError, StopIteration):
        pass
    os_name = platform.platform()
    try:
        with open("/etc/os-release") as f:
            os_name = next(line.split("=", 1)[1].strip().strip('"') for line in f
                           if line.startswith("PRETTY_NAME")) + ", Linux " + platform.release()
    except (OSError, StopIteration):
        pass
    rev = "unknown"
    try:
        rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        rev += "+dirty" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        pass
    return {"cpu": cpu, "cores": len(os.sched_getaffinity(0)), "memory_gib": mem, "os": os_name,
            "revision": rev, "python": platform.python_version(),
            "load_before": os.getloadavg()[0]}


def run_json(cmd, env, threads=None, timeout=TIMEOUT_S):
    """Runs a command that prints JSON; returns (doc, wall seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=pinned(threads) if threads else None)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout), wall


def autofuse_outputs(args, env, model_path, model, dtype, shape, work):
    """autofuse's outputs on the check inputs (what every peer is checked
    against), saved as an .npz of f32 arrays out0..outN."""
    import numpy as np

    os.makedirs(work, exist_ok=True)
    inputs = models.make_inputs(model, models.parse_shape(shape))
    flags = []
    for name, value in inputs.items():
        if dtype == "bf16" and value.dtype.kind == "f":
            path = os.path.join(work, name + ".pb")
            with open(path, "wb") as f:
                f.write(models.bf16_tensor_proto(name, value).SerializeToString())
        else:
            path = os.path.join(work, name + ".npy")
            np.save(path, value)
        flags += ["--input", f"{name}={path}"]
    out_dir = os.path.join(work, "outputs")
    run_json([args.bin, "run", model_path, *flags, "--output-dir", out_dir, "--json"], env)
    outs = [np.load(os.path.join(out_dir, vi.name + ".npy")).astype(np.float32)
            for vi in model.graph.output]
    path = os.path.join(work, "expected.npz")
    np.savez(path, **{f"out{i}": o for i, o in enumerate(outs)})
    return path


class PeerWorker:
    """bench/peers.py in a subprocess pinned to `threads` cores, for the
    peers of one framework."""

    def __init__(self, threads, inductor_cache, peers):
        self.threads, self.inductor_cache, self.peers = threads, inductor_cache, peers
        cmd = [sys.executable, os.path.join(HERE, "peers.py"), "--threads", str(threads),
               "--peers", ",".join(peers), "--inductor-cache", inductor_cache]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     stderr=open(os.devnull, "w") if not os.environ.get("BENCH_VERBOSE") else None)
        self.versions = json.loads(self.proc.stdout.readline())["ready"]

    def case(self, req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the peer worker died")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)

    def kill(self):
        self.proc.kill()
        self.proc.wait()


class PeerWorkers:
    """One PeerWorker per framework (peers.GROUPS) with peers requested;
    case() runs a case on each in turn and merges the results."""

    def __init__(self, threads, inductor_cache, peers):
        self.args = (threads, inductor_cache)
        self.workers = [PeerWorker(threads, inductor_cache, [p for p in members if p in peers])
                        for members in GROUPS.values() if set(members) & set(peers)]
        self.versions = {k: v for w in self.workers for k, v in w.versions.items()}

    def case(self, req):
        merged = {"peers": {}, "check": {}}
        for i, w in enumerate(self.workers):
            try:
                res = w.case(dict(req, peers=[p for p in w.peers if p in req["peers"]]))
            except (RuntimeError, OSError, ValueError) as e:  # it crashed: a fresh one
                res = {"error": str(e)}
                w.kill()
                self.workers[i] = PeerWorker(*self.args, w.peers)
            if "error" in res:
                log(f"peer worker error ({', '.join(w.peers)}): {res['error']}")
                res = {"peers": {p: {"status": "n/a: worker error"} for p in w.peers}, "check": {}}
            merged["peers"].update(res["peers"])
            merged["check"].update(res["check"])
        return merged

    def close(self):
        for w in self.workers:
            w.close()


def bench_rows(args, env, threads, pattern, dtype, model_path):
    shapes = [models.SHAPES[pattern][models.SIZES.index(s)] for s in args.sizes]
    cmd = [args.bin, "bench", model_path, "--threads", str(threads), "--min-time", str(args.min_time),
           "--json"]
    for s in shapes:
        cmd += ["--shape", s]
    rows = [{"pattern": pattern, "dtype": dtype, "size": size, "shape": shape, "threads": threads,
             "peers": {}} for size, shape in zip(args.sizes, shapes)]
    try:
        doc, _ = run_json(cmd, env, threads)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        for r in rows:
            r["status"] = f"autofuse bench failed: {str(e)[:300]}"
        return rows, None
    for r, b in zip(rows, doc["results"]):
        r.update({
            "bytes": b["bytes"], "read_bytes": b["read_bytes"], "written_bytes": b["written_bytes"],
            "kernels": doc["kernels"], "unfused_kernels": doc["unfused_kernels"],
            "autofuse_ms": b["fused_ms"], "unfused_ms": b["unfused_ms"], "reps": b["reps"],
            "gbps": b["gbps"], "pct_of_stream": b["pct_of_stream_mix"],
            "pct_of_triad": b["pct_of_stream"], "stream_mix_gbps": b["stream_mix_gbps"],
            "stream_mix_kernel": b.get("stream_mix_kernel"),
            "bare_ms": b.get("bare_ms"), "overhead_us": b.get("overhead_us"),
        })
    b = doc["results"][0]
    stream = {"triad_gbps": b["stream_gbps"], "copy_gbps": b["stream_copy_gbps"],
              "triad_nt_gbps": b["stream_triad_nt_gbps"], "copy_nt_gbps": b["stream_copy_nt_gbps"],
              "read_gbps": b["stream_read_gbps"], "fill_gbps": b.get("stream_fill_gbps"),
              "fill_nt_gbps": b.get("stream_fill_nt_gbps"), "fma_gflops": b.get("fma_gflops"),
              "fma_gflops_min": b.get("fma_gflops_low")}
    return rows, stream


def compile_times(args, env, model_dir, threads):
    """Cold (empty cache) and warm (filled cache) compile per model, fresh
    processes: autofuse's `run` process wall time vs torch.compile's first
    call less a steady call (torch's import excluded)."""
    targets = [(p, os.path.join(model_dir, f"{p}_f32.onnx"), models.SHAPES[p][1])
               for p in (QUICK_COMPILE if args.quick else args.patterns)]
    targets.append(("bert_layer", models.bert_layer_model(model_dir), "batch=2,seq=128"))
    have_torch = "inductor" in args.peers
    out = []
    for name, path, shape in targets:
        row = {"model": name, "shape": shape}
        with tempfile.TemporaryDirectory(prefix="bench-af-cache-") as cache:
            e = dict(env, AUTOFUSE_CACHE_DIR=cache)
            try:
                for kind in ("cold", "warm"):
                    doc, wall = run_json([args.bin, "run", path, "--shape", shape, "--json"], e, threads)
                    row[f"autofuse_{kind}_s"] = wall
                    row[f"autofuse_{kind}_jit_s"] = doc.get("compile_seconds")
            except (RuntimeError, subprocess.TimeoutExpired) as err:
                row["autofuse_error"] = str(err)[:300]
        if have_torch:
            with tempfile.TemporaryDirectory(prefix="bench-inductor-") as cache:
                e = dict(env, TORCHINDUCTOR_CACHE_DIR=cache)
                cmd = [sys.executable, os.path.join(HERE, "torch_compile_time.py"), path, "--shape",
                       shape, "--threads", str(threads)]
                try:
                    for kind in ("cold", "warm"):
                        doc, _ = run_json(cmd, e)
                        row[f"inductor_{kind}_s"] = doc["compile_s"]
                except (RuntimeError, subprocess.TimeoutExpired) as err:
                    row["inductor_error"] = str(err)[:300]
        log(f"compile time {name}: " + ", ".join(f"{k}={v:.2f}" for k, v in row.items()
                                                    if isinstance(v, float)))
        out.append(row)
    return out


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"bench/run: no autofuse binary at {args.bin} (build it, or pass --bin)")
    os.makedirs(args.out, exist_ok=True)
    model_dir = os.path.join(args.out, "models")
    env = dict(os.environ)
    env.setdefault("AUTOFUSE_CACHE_DIR", os.path.join(args.out, "autofuse-cache"))
    inductor_cache = env.get("TORCHINDUCTOR_CACHE_DIR", os.path.join(args.out, "inductor-cache"))
    started = time.time()
    results = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": machine_info(),
               "versions": {}, "rows": [], "stream": {}, "checks": {}, "skipped": [],
               "config": {"quick": args.quick, "threads": args.threads, "patterns": args.patterns,
                          "sizes": args.sizes, "dtypes": args.dtypes, "peers": args.peers,
                          "min_time_s": args.min_time}}
    cases = []
    for pattern in args.patterns:
        for dtype in args.dtypes:
            if dtype == "bf16" and pattern in models.BF16_SKIPPED:
                results["skipped"].append({"what": f"{pattern} bf16", "why": models.BF16_SKIPPED[pattern]})
                continue
            cases.append((pattern, dtype, models.write_model(pattern, dtype, model_dir)))
    expected = {}  # model -> autofuse outputs on the check inputs
    for threads in args.threads:
        worker = PeerWorkers(threads, inductor_cache, args.peers) if args.peers else None
        if worker:
            results["versions"].update(worker.versions)
        for pattern, dtype, path in cases:
            key = f"{pattern}_{dtype}"
            log(f"{threads} thread(s): {key}")
            rows, stream = bench_rows(args, env, threads, pattern, dtype, path)
            if stream:
                best = results["stream"].setdefault(str(threads), {})
                # The best figure of the run; for fma_gflops_min the slowest probe (the
                # host's slow phases).
                for k, v in stream.items():
                    if v is not None:
                        pick = min if k.endswith("_min") else max
                        best[k] = pick(best[k], v) if k in best else v
            check_shape = models.SHAPES[pattern][0]
            if worker and key not in expected:
                try:
                    expected[key] = autofuse_outputs(args, env, path, models.build(pattern, dtype), dtype,
                                                     check_shape, os.path.join(args.out, "check", key))
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    expected[key] = None
                    results["checks"][key] = {p: f"autofuse run failed: {str(e)[:100]}" for p in args.peers}
            if worker and expected.get(key):
                req = {"model": path, "dtype": dtype, "shapes": [r["shape"] for r in rows],
                       "peers": args.peers, "min_time": args.min_time,
                       "check": {"shape": check_shape, "expected": expected[key]}}
                res = worker.case(req)
                checks = results["checks"].setdefault(key, {})
                for peer, pr in res["peers"].items():
                    status = pr.get("status")
                    if status:  # n/a or a mismatch (a string, as report.py shows it)
                        checks[peer] = status if status.startswith("n/a") else "wrong"
                    elif not isinstance(checks.get(peer), str):  # worst error ratio over threads
                        checks[peer] = max(res["check"].get(peer, 0.0), checks.get(peer, 0.0))
                    for r in rows:
                        r["peers"][peer] = pr.get(r["shape"], {"status": status or "n/a"})
            results["rows"] += rows
        if worker:
            worker.close()
    if not args.no_compile_time:
        results["compile_time"] = compile_times(args, env, model_dir, max(args.threads))
    results["summary"] = report.summarize([r for r in results["rows"] if r.get("autofuse_ms")], args.peers)
    results.update({k: results["summary"][k]
                    for k in ("geomean_speedup", "large_pct_of_stream", "small_overhead_us")})
    results["seconds"] = time.time() - started
    results["machine"]["load_after"] = os.getloadavg()[0]
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(report.markdown(results))
    try:
        report.plot(results, os.path.join(args.out, "results.png"))
    except ImportError:
        log("matplotlib not installed: no plot (bench/setup-peers.sh installs it)")
    log(f"done in {results['seconds']:.0f} s: {args.out}/results.md, results.json, results.png")
    shutil.rmtree(os.path.join(args.out, "check"), ignore_errors=True)


if __name__ == "__main__":
    main()
