"""Summaries, the markdown report and the plot of bench/run's results.

Pure functions of the results dict (see docs/benchmarks.md for its fields),
so tests/bench_report_test.py checks them without any peer installed.
"""

import math

PEER_LABELS = {
    "unfused": "unfused",
    "onnxruntime": "ORT",
    "eager": "torch eager",
    "inductor": "Inductor",
    "inductor_dynamic": "Inductor dyn",
    "xla": "XLA",
}
# The issue's targets, as ratios from the same run.
TARGETS = {"unfused": 3.0, "onnxruntime": 2.0, "inductor": 1.3, "xla": 1.5}
LARGE_PCT_TARGET = 90.0
# Small shapes: autofuse's time at most this much above the bare calls of
# its kernels (runtime overhead per call, docs/benchmarks.md).
SMALL_OVERHEAD_TARGET_US = 1.0
COMPILE_RATIO_TARGET = 1 / 3


def geomean(values):
    values = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def speedups(row):
    """peer -> peer time / autofuse time for the peers timed in this row."""
    ours = row.get("autofuse_ms")
    if not ours:
        return {}
    out = {}
    if row.get("unfused_ms"):
        out["unfused"] = row["unfused_ms"] / ours
    for peer, r in row.get("peers", {}).items():
        if isinstance(r, dict) and r.get("ms"):
            out[peer] = r["ms"] / ours
    return out


def summarize(rows, peers):
    """The headline numbers: geomean speedups (overall and by threads, size
    and dtype) and the large shapes' % of STREAM."""
    keys = ["unfused"] + list(peers)

    def gm(selected):
        return {k: geomean([speedups(r).get(k) for r in selected]) for k in keys}

    summary = {"geomean_speedup": gm(rows)}
    for field in ("threads", "size", "dtype"):
        groups = sorted({r[field] for r in rows}, key=str)
        summary[f"geomean_speedup_by_{field}"] = {
            str(g): gm([r for r in rows if r[field] == g]) for g in groups
        }
    large = [r for r in rows if r["size"] == "large" and r.get("pct_of_stream")]
    summary["large_pct_of_stream"] = geomean([r["pct_of_stream"] for r in large])
    summary["large_pct_of_stream_min"] = min((r["pct_of_stream"] for r in large), default=None)
    summary["large_pct_of_stream_by_threads"] = {
        str(t): geomean([r["pct_of_stream"] for r in large if r["threads"] == t])
        for t in sorted({r["threads"] for r in large})
    }
    small = [r for r in rows if r["size"] == "small" and r.get("autofuse_ms")]
    summary["small_median_us"] = (
        sorted(r["autofuse_ms"] * 1e3 for r in small)[len(small) // 2] if small else None
    )
    ceilings = in_cache_ceilings(rows)
    summary["large_compute_bound"] = sorted(
        {f"{c['pattern']} {c['dtype']}" for c in ceilings if c["compute_bound"]})
    overheads = [r["overhead_us"] for r in small_overhead_rows(rows)]
    summary["small_overhead_us"] = {
        "max": max(overheads) if overheads else None,
        "median": median(overheads),
        "rows": len(overheads),
        "target": SMALL_OVERHEAD_TARGET_US,
        "met": all(o <= SMALL_OVERHEAD_TARGET_US for o in overheads) if overheads else None,
    }
    return summary


def median(values):
    values = sorted(values)
    n = len(values)
    if not n:
        return None
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def small_overhead_rows(rows):
    """The small rows with a bare call time: autofuse's time less its
    kernels' bare calls is the runtime overhead per call."""
    return [r for r in rows if r["size"] == "small" and r.get("autofuse_ms")
            and r.get("overhead_us") is not None and r.get("bare_ms") is not None]


def in_cache_ceilings(rows):
    """Per pattern, dtype and thread count with a large and a medium row: the
    large row's % of STREAM, and the medium row's rate (its data fits the
    L2/L3, so memory is not what limits it) as % of the large row's STREAM
    figure. A pattern whose in-cache rate is itself below the target cannot
    reach it on large shapes however the memory traffic is scheduled: it is
    compute-bound on this machine (docs/benchmarks.md)."""
    by_key = {}
    for r in rows:
        if r.get("autofuse_ms") and r.get("gbps") and r["size"] in ("medium", "large"):
            by_key.setdefault((r["pattern"], r["dtype"], r["threads"]), {})[r["size"]] = r
    out = []
    for (pattern, dtype, threads), sizes in by_key.items():
        large, medium = sizes.get("large"), sizes.get("medium")
        if not large or not medium or not large.get("stream_mix_gbps"):
            continue
        ceiling = 100.0 * medium["gbps"] / large["stream_mix_gbps"]
        out.append({"pattern": pattern, "dtype": dtype, "threads": threads,
                    "large_pct": large.get("pct_of_stream"), "in_cache_pct": ceiling,
                    "compute_bound": ceiling < LARGE_PCT_TARGET})
    return out


def ceiling_lines(rows):
    ceilings = in_cache_ceilings(rows)
    if not ceilings:
        return []
    lines = [
        "| pattern | dtype | threads | large % STREAM | in-cache rate % | limited by |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for c in ceilings:
        what = "compute (in-cache rate below target)" if c["compute_bound"] else "memory schedule"
        lines.append(
            f"| {c['pattern']} | {c['dtype']} | {c['threads']} | "
            f"{fmt_num(c['large_pct'], '.0f', '%')} | {c['in_cache_pct']:.0f}% | {what} |"
        )
    return lines


def fmt_num(v, spec=".2f", suffix=""):
    return "n/a" if v is None else f"{v:{spec}}{suffix}"


def peer_cell(row, peer):
    r = row.get("peers", {}).get(peer)
    s = speedups(row).get(peer)
    if s is not None:
        return f"{s:.2f}x"
    if isinstance(r, dict) and r.get("status", "").startswith("mismatch"):
        return "wrong"
    return "n/a"


def main_table(rows, peers):
    cols = ["unfused"] + list(peers)
    head = (
        "| pattern | dtype | size | shape | MiB | ms | GB/s | % STREAM | "
        + " | ".join(f"vs {PEER_LABELS[c]}" for c in cols)
        + " |"
    )
    lines = [head, "|" + " --- |" * 4 + " ---: |" * (4 + len(cols))]
    for r in rows:
        if r.get("autofuse_ms") is None:
            cells = [r["pattern"], r["dtype"], r["size"], r["shape"], "", r.get("status", "error")]
            lines.append("| " + " | ".join(cells) + " |" + " |" * (2 + len(cols)))
            continue
        cells = [
            r["pattern"],
            r["dtype"],
            r["size"],
            r["shape"],
            f"{r['bytes'] / 2**20:.2f}",
            f"{r['autofuse_ms']:.4f}",
            f"{r['gbps']:.1f}",
            fmt_num(r.get("pct_of_stream"), ".0f", "%"),
        ] + [peer_cell(r, c) if c != "unfused" else fmt_num(speedups(r).get(c), ".2f", "x") for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def peer_times_table(rows, peers):
    lines = [
        "| pattern | dtype | size | threads | autofuse | unfused | "
        + " | ".join(PEER_LABELS[p] for p in peers)
        + " |",
        "|" + " --- |" * 4 + " ---: |" * (2 + len(peers)),
    ]
    for r in rows:
        cells = [r["pattern"], r["dtype"], r["size"], str(r["threads"])]
        cells += [fmt_num(r.get("autofuse_ms"), ".4f"), fmt_num(r.get("unfused_ms"), ".4f")]
        for p in peers:
            pr = r.get("peers", {}).get(p, {})
            cells.append(fmt_num(pr.get("ms") if isinstance(pr, dict) else None, ".4f"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def summary_lines(summary, peers):
    g = summary["geomean_speedup"]
    lines = ["| geomean speedup of autofuse vs | all rows | target | met |", "| --- | ---: | ---: | --- |"]
    for k in ["unfused"] + list(peers):
        target = TARGETS.get(k)
        met = "" if target is None or g.get(k) is None else ("yes" if g[k] >= target else "no")
        lines.append(
            f"| {PEER_LABELS[k]} | {fmt_num(g.get(k), '.2f', 'x')} | "
            f"{fmt_num(target, '.1f', 'x') if target else ''} | {met} |"
        )
    pct = summary.get("large_pct_of_stream")
    lines += [
        "",
        f"Large shapes: geomean {fmt_num(pct, '.0f', '%')} (min "
        f"{fmt_num(summary.get('large_pct_of_stream_min'), '.0f', '%')}) of the best STREAM "
        f"figure for the same read/write mix (target >= {LARGE_PCT_TARGET:.0f}% each).",
    ]
    lines += overhead_summary_line(summary)
    by = summary.get("geomean_speedup_by_size", {})
    if by:
        lines += ["", "| by size | " + " | ".join(PEER_LABELS[k] for k in ["unfused"] + list(peers)) + " |"]
        lines.append("| --- |" + " ---: |" * (1 + len(peers)))
        for size, gs in by.items():
            cells = [fmt_num(gs.get(k), ".2f", "x") for k in ["unfused"] + list(peers)]
            lines.append(f"| {size} | " + " | ".join(cells) + " |")
    return lines


def overhead_lines(rows):
    """The call overhead table of the small rows and its verdict line."""
    small = small_overhead_rows(rows)
    if not small:
        return []
    lines = [
        "| pattern | dtype | threads | autofuse us | bare us | overhead us | "
        f"<= {SMALL_OVERHEAD_TARGET_US:g} us |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in small:
        met = "yes" if r["overhead_us"] <= SMALL_OVERHEAD_TARGET_US else "no"
        lines.append(
            f"| {r['pattern']} | {r['dtype']} | {r['threads']} | {r['autofuse_ms'] * 1e3:.2f} | "
            f"{r['bare_ms'] * 1e3:.2f} | {r['overhead_us']:.2f} | {met} |"
        )
    return lines


def overhead_summary_line(summary):
    o = summary.get("small_overhead_us") or {}
    if not o.get("rows"):
        return []
    verdict = "met" if o["met"] else "not met"
    return [
        "",
        f"Small shapes' runtime overhead (autofuse time - bare kernel calls): max "
        f"{o['max']:.2f} us, median {o['median']:.2f} us over {o['rows']} rows "
        f"(target <= {o['target']:g} us each: {verdict}).",
    ]


def compile_lines(compile_rows):
    lines = [
        "| model | autofuse cold s | autofuse warm s | Inductor cold s | Inductor warm s | cold ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in compile_rows:
        ours, theirs = c.get("autofuse_cold_s"), c.get("inductor_cold_s")
        ratio = ours / theirs if ours and theirs else None
        lines.append(
            f"| {c['model']} | {fmt_num(ours, '.2f')} | {fmt_num(c.get('autofuse_warm_s'), '.3f')} | "
            f"{fmt_num(theirs, '.2f')} | {fmt_num(c.get('inductor_warm_s'), '.2f')} | "
            f"{fmt_num(ratio, '.2f')} |"
        )
    ratios = [
        c["autofuse_cold_s"] / c["inductor_cold_s"]
        for c in compile_rows
        if c.get("autofuse_cold_s") and c.get("inductor_cold_s")
    ]
    if ratios:
        gm = geomean(ratios)
        met = "met" if gm <= COMPILE_RATIO_TARGET else "not met"
        lines += ["", f"Cold compile, geomean autofuse / Inductor: {gm:.2f} (target <= 0.33: {met})."]
    return lines


def markdown(results):
    peers = results["config"]["peers"]
    m = results["machine"]
    out = [
        f"# autofuse benchmark ({results['date']})",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']:.0f} GiB; {m['os']}. "
        f"autofuse {m['revision']}. Peers: "
        + ", ".join(f"{k} {v}" for k, v in results["versions"].items())
        + ".",
        "",
    ]
    load = max(m.get("load_before", 0), m.get("load_after", 0))
    if load > 0.5 * m["cores"]:
        out += [
            f"**Busy machine** (1-minute load average {load:.1f} on {m['cores']} cores around "
            "the run): other processes shared the cores, so timings are noisy, and multi-thread "
            "peers that wait at OpenMP barriers (torch) can show milliseconds per call.",
            "",
        ]
    out += [
        "Speedup columns are peer time / autofuse time (> 1: autofuse is faster); % STREAM is "
        "the bandwidth of the bytes that must move (inputs read once, outputs written once) "
        "against the STREAM kernel with the nearest read/write mix (copy, triad or fill with the "
        "better of ordinary and non-temporal stores; read only for reductions) measured in the same "
        "`autofuse bench` run. `wrong`: the peer's "
        "output did not match ours; `n/a`: not installed or cannot run the model.",
        "",
        "## Summary",
        "",
    ]
    out += summary_lines(results["summary"], peers)
    for t in results["config"]["threads"]:
        s = results["stream"].get(str(t), {})
        rows = [r for r in results["rows"] if r["threads"] == t]
        out += [
            "",
            f"## {t} thread{'s' if t > 1 else ''}",
            "",
            f"STREAM (best of the run): triad {fmt_num(s.get('triad_gbps'), '.1f')} GB/s, "
            f"non-temporal {fmt_num(s.get('triad_nt_gbps'), '.1f')}; copy "
            f"{fmt_num(s.get('copy_gbps'), '.1f')} GB/s, non-temporal "
            f"{fmt_num(s.get('copy_nt_gbps'), '.1f')}; read {fmt_num(s.get('read_gbps'), '.1f')} GB/s; "
            f"fill {fmt_num(s.get('fill_gbps'), '.1f')} GB/s, non-temporal "
            f"{fmt_num(s.get('fill_nt_gbps'), '.1f')}. Compute probe (FMA chains, before and after "
            f"each `autofuse bench` process's timings): {fmt_num(s.get('fma_gflops_min'), '.0f')} to "
            f"{fmt_num(s.get('fma_gflops'), '.0f')} GFLOP/s over the run (how far the cores' "
            f"speed moved).",
            "",
        ]
        out += main_table(rows, peers)
    out += ["", "## Times (ms, medians)", ""]
    out += peer_times_table(results["rows"], peers)
    ceilings = ceiling_lines(results["rows"])
    if ceilings:
        out += ["", "## Large shapes against the in-cache rate", "",
                "in-cache rate % = the medium shape's GB/s (its data fits the L2/L3) as % of the "
                "large shape's STREAM figure: a pattern below the target there is compute-bound "
                "on this machine, and its large shape cannot reach the target by moving memory "
                "better.", ""]
        out += ceilings
    overhead = overhead_lines(results["rows"])
    if overhead:
        out += ["", "## Call overhead (small shapes, medians)", "",
                "autofuse us = `Executable::run_into`; bare us = the same kernel functions called "
                "directly, every block on one thread, everything prepared; overhead = the "
                "difference (negative when the threads beat one thread).", ""]
        out += overhead
    if results.get("compile_time"):
        out += ["", "## Compile time (fresh process each)", ""]
        out += compile_lines(results["compile_time"])
    out += ["", "## Checks (each peer against autofuse, once per model)", ""]
    out += ["| model | " + " | ".join(PEER_LABELS[p] for p in peers) + " |"]
    out += ["| --- |" + " --- |" * len(peers)]
    for model, checks in results["checks"].items():
        cells = []
        for p in peers:
            c = checks.get(p)
            if isinstance(c, str):  # the full reason is in results.json
                cells.append(c if len(c) <= 60 else c[:57] + "...")
            elif c is None:  # not run (e.g. --peers without it)
                cells.append("n/a")
            else:
                cells.append("ok" if c <= 1 else "wrong")
        out.append(f"| {model} | " + " | ".join(cells) + " |")
    if results.get("skipped"):
        out += ["", "Skipped: " + "; ".join(f"{s['what']} ({s['why']})" for s in results["skipped"]) + "."]
    return "\n".join(out) + "\n"


def plot(results, path):
    """Two panels per pattern: geomean speedup vs each peer (log scale) and
    the large shapes' % of STREAM per thread count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = results["rows"]
    peers = ["unfused"] + results["config"]["peers"]
    patterns = list(dict.fromkeys(r["pattern"] for r in rows))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, 1.1 * len(patterns)), 9))
    width = 0.8 / len(peers)
    for i, peer in enumerate(peers):
        vals = [geomean([speedups(r).get(peer) for r in rows if r["pattern"] == p]) for p in patterns]
        xs = [j + (i - len(peers) / 2 + 0.5) * width for j in range(len(patterns))]
        ax1.bar(xs, [v or 0 for v in vals], width, label=PEER_LABELS[peer])
    ax1.axhline(1.0, color="black", linewidth=0.8)
    ax1.set_yscale("log")
    ax1.set_ylabel("speedup of autofuse (geomean)")
    ax1.set_xticks(range(len(patterns)), patterns, rotation=30, ha="right")
    ax1.legend(fontsize=8, ncol=3)
    threads = results["config"]["threads"]
    width = 0.8 / max(1, len(threads))
    for i, t in enumerate(threads):
        vals = [
            geomean([r.get("pct_of_stream") for r in rows if r["pattern"] == p and r["size"] == "large" and r["threads"] == t])
            for p in patterns
        ]
        xs = [j + (i - len(threads) / 2 + 0.5) * width for j in range(len(patterns))]
        ax2.bar(xs, [v or 0 for v in vals], width, label=f"{t} thread(s)")
    ax2.axhline(LARGE_PCT_TARGET, color="red", linewidth=0.8, linestyle="--", label="target 90%")
    ax2.set_ylabel("large shapes: % of STREAM (same mix)")
    ax2.set_xticks(range(len(patterns)), patterns, rotation=30, ha="right")
    ax2.legend(fontsize=8)
    fig.suptitle(f"autofuse vs peers, {results['machine']['cpu']} ({results['date']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
