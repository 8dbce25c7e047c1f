// `autofuse bench G --shape ... [--reps R] [--threads T] [--min-time S]
// [--json]`: times the fused and the unfused executables of a graph
// (interleaved repetitions, medians) and reports the bandwidth of the bytes
// that must move (graph inputs read once, outputs written once) against
// STREAM measured in the same run on the same thread count: triad (the
// classic figure) and the best STREAM kernel for the graph's read/write mix
// (copy reads 1 byte per byte written, triad 2), ordinary or non-temporal.
//
// Interleaving is by rounds: each round runs one executable kBlock times in a
// row, untimed first, then the other. Alternating single runs would time
// each one right after the other executable had filled the caches with its
// own (dirty) buffers, which measured the neighbour more than the kernel
// (LayerNorm [16384, 1024]: 4.2 ms alternating vs 3.35 ms in a row).
//
// The fused program's bare calls (Executable::bare_calls: its kernel
// functions called directly, every block on this thread, everything
// prepared) join the rounds as a third runner: bare_ms, and overhead_us =
// fused - bare (medians), the runtime's cost per call around the kernels.
// The bare calls write the fused run's outputs: with outputs of their own,
// placed elsewhere relative to the inputs' 4 KiB pages, they measured the
// placement (loads that alias an earlier store's address modulo 4 KiB wait
// for it): chain30 bf16 [64, 1024] 1.6-3.0 us "overhead" with the fused
// run's output 128 bytes past the input within a page and the bare calls'
// 448 bytes past it, 0.1-0.2 us on the same buffers (session 40).
// On more than one thread the fused run can beat the bare single-thread
// calls: the overhead is then negative, and reported as is.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autofuse/error.h"
#include "autofuse/ref/random.h"
#include "tools/commands.h"
#include "tools/graph_loading.h"
#include "tools/shape_bindings.h"
#include "tools/stream.h"

namespace autofuse::tools {

namespace {

struct BenchOptions {
  std::string path;
  std::vector<std::string> shapes;
  int reps = 0;             // 0: adaptive
  int threads = 0;          // 0: one per core
  double min_time = 1.0;    // adaptive: about this many seconds per shape
  double stream_mib = 128;  // per STREAM array: well beyond the L3 by default
  bool json = false;
};

// The STREAM figure for a kernel's read/write mix: the kernel whose share
// of written bytes is nearest (read only 0, triad 1/3, copy 1/2, fill 1),
// with the better of ordinary and non-temporal stores. Reductions, which
// write next to nothing (and any kernel reading more than 5 bytes per byte
// written), get the read-only kernel (STREAM2's SUM): triad's reads run
// beside its writes, a bandwidth a kernel without writes cannot use. The
// other end, kernels that mostly write (gathers from tables in the cache:
// bert_embeddings writes 7 bytes per byte it reads from memory), get
// STREAM2's FILL for the same reason: copy's figure counts its reads, which
// run beside its writes (one Ice Lake core: copy non-temporal 21 GB/s, of
// which 10.5 written; fill non-temporal 26 GB/s).
struct MixFigure {
  const char* kernel;  ///< "read", "triad", "copy" or "fill"
  double gbps;
};

MixFigure stream_for_mix(const StreamResult& s, double read, double written) {
  const double total = read + written;
  const double written_share = total > 0 ? written / total : 0.5;
  if (written_share < 1.0 / 6) return {"read", s.read_gbps};
  if (written_share < 5.0 / 12) return {"triad", std::max(s.triad_gbps, s.triad_nt_gbps)};
  if (written_share < 3.0 / 4) return {"copy", std::max(s.copy_gbps, s.copy_nt_gbps)};
  return {"fill", std::max(s.fill_gbps, s.fill_nt_gbps)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <typename Call>
double time_once(Call&& call) {
  auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(const BenchOptions& options) {
  std::shared_ptr<const Graph> graph = load_graph(options.path).graph;
  std::vector<sym::Binding> bindings = bindings_for_graph(*graph, options.shapes);
  if (options.threads < 0) throw UserError("--threads must be >= 0 (0: one per core)");
  if (options.min_time <= 0) throw UserError("--min-time must be > 0");
  if (!(options.stream_mib > 0)) throw UserError("--stream-mib must be > 0");
  const long stream_elements =
      std::max(1L, static_cast<long>(options.stream_mib * (1 << 20) / sizeof(double)));
  runtime::CompileOptions fused_options = compile_options(true);
  // With $AUTOFUSE_DUMP the unfused program dumps into a subfolder: in the
  // same folder its files would replace the fused program's.
  const char* dump = std::getenv("AUTOFUSE_DUMP");
  runtime::CompileOptions unfused_options = compile_options(
      false, dump != nullptr && *dump != '\0' ? std::string(dump) + "/unfused" : "");
  fused_options.threads = unfused_options.threads = options.threads;
  auto fused = runtime::Executable::build(graph, fused_options);
  auto unfused = runtime::Executable::build(graph, unfused_options);
  // STREAM is measured before and after the timings and the better figure
  // kept, so a noisy moment does not flatter the kernel's ratio.
  StreamResult stream = measure_stream(options.threads, stream_elements);
  nlohmann::json results = nlohmann::json::array();
  for (const sym::Binding& binding : bindings) {
    std::vector<HostTensor> inputs = random_inputs(*graph, binding, /*seed=*/1);
    std::vector<HostTensor> out_fused = fused->run(inputs);  // also the warm-up
    std::vector<HostTensor> out_unfused = unfused->run(inputs);
    std::unique_ptr<runtime::BareCalls> bare = fused->bare_calls(inputs, out_fused);
    auto run_fused = [&] { fused->run_into(inputs, out_fused); };
    auto run_unfused = [&] { unfused->run_into(inputs, out_unfused); };
    auto run_bare = [&] { bare->call(); };
    double read = 0, written = 0;
    for (const HostTensor& t : inputs)
      read += static_cast<double>(t.nbytes());
    for (const HostTensor& t : out_fused)
      written += static_cast<double>(t.nbytes());
    const double bytes = read + written;
    for (int i = 0; i < 3; ++i)
      time_once(run_fused), time_once(run_unfused), time_once(run_bare);
    // Adaptive: about min_time s in total, between 10 and 10000 timed runs each.
    int reps = options.reps;
    if (reps <= 0) {
      double all = time_once(run_fused) + time_once(run_unfused) + time_once(run_bare);
      reps = static_cast<int>(std::clamp(options.min_time / std::max(all, 1e-9), 10.0, 10000.0));
    }
    constexpr int kBlock = 5;
    std::vector<double> t_fused, t_unfused, t_bare;
    auto round = [&](auto& call, std::vector<double>& times) {
      time_once(call);  // settles caches and threads after the other one
      for (int i = 0; i < kBlock && static_cast<int>(times.size()) < reps; ++i)
        times.push_back(time_once(call));
    };
    while (static_cast<int>(t_fused.size()) < reps) {
      round(run_fused, t_fused);
      round(run_unfused, t_unfused);
      round(run_bare, t_bare);
    }
    double fused_s = median(t_fused), unfused_s = median(t_unfused), bare_s = median(t_bare);
    double gbps = bytes / fused_s / 1e9;
    nlohmann::json r = {{"shape", binding},
                        {"reps", reps},
                        {"bytes", bytes},
                        {"read_bytes", read},
                        {"written_bytes", written},
                        {"fused_ms", fused_s * 1e3},
                        {"unfused_ms", unfused_s * 1e3},
                        {"speedup", unfused_s / fused_s},
                        {"bare_ms", bare_s * 1e3},
                        {"overhead_us", (fused_s - bare_s) * 1e6},
                        {"gbps", gbps},
                        {"stream_gbps", stream.triad_gbps},
                        {"stream_copy_gbps", stream.copy_gbps},
                        {"pct_of_stream", 100.0 * gbps / stream.triad_gbps}};
    results.push_back(std::move(r));
  }
  const StreamResult after = measure_stream(options.threads, stream_elements);
  StreamResult best = stream.best(after);
  // The slower probe too: the cores' speed can change within a run.
  const double fma_low = std::min(stream.fma_gflops, after.fma_gflops);
  for (auto& r : results) {
    const double gbps = r["gbps"].get<double>();
    const MixFigure mix =
        stream_for_mix(best, r["read_bytes"].get<double>(), r["written_bytes"].get<double>());
    r["stream_gbps"] = best.triad_gbps;
    r["stream_copy_gbps"] = best.copy_gbps;
    r["stream_triad_nt_gbps"] = best.triad_nt_gbps;
    r["stream_copy_nt_gbps"] = best.copy_nt_gbps;
    r["stream_read_gbps"] = best.read_gbps;
    r["stream_fill_gbps"] = best.fill_gbps;
    r["stream_fill_nt_gbps"] = best.fill_nt_gbps;
    r["fma_gflops"] = best.fma_gflops;
    r["fma_gflops_low"] = fma_low;
    r["stream_mix_kernel"] = mix.kernel;
    r["stream_mix_gbps"] = mix.gbps;
    r["pct_of_stream"] = 100.0 * gbps / best.triad_gbps;
    r["pct_of_stream_mix"] = 100.0 * gbps / mix.gbps;
  }
  if (!options.json) {
    std::cout << fmt::format(
        "{}: STREAM on {} threads: triad {:.1f} GB/s (non-temporal {:.1f}), copy {:.1f} GB/s "
        "(non-temporal {:.1f}), read {:.1f} GB/s, fill {:.1f} GB/s (non-temporal {:.1f}); "
        "compute probe {:.1f} GFLOP/s; best of before and after\n",
        graph->name(), best.threads, best.triad_gbps, best.triad_nt_gbps, best.copy_gbps,
        best.copy_nt_gbps, best.read_gbps, best.fill_gbps, best.fill_nt_gbps, best.fma_gflops);
    for (size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      std::cout << fmt::format(
          "[{}]: fused {:.4f} ms, unfused {:.4f} ms, speedup {:.2f}x; bare kernel calls {:.4f} "
          "ms, runtime overhead {:.2f} us; {:.1f} GB/s = {:.0f}% of STREAM triad, {:.0f}% of the "
          "best STREAM for its read/write mix ({}; {} reps)\n",
          binding_to_string(bindings[i], graph->symbols()), r["fused_ms"].get<double>(),
          r["unfused_ms"].get<double>(), r["speedup"].get<double>(), r["bare_ms"].get<double>(),
          r["overhead_us"].get<double>(), r["gbps"].get<double>(), r["pct_of_stream"].get<double>(),
          r["pct_of_stream_mix"].get<double>(), r["stream_mix_kernel"].get<std::string>(),
          r["reps"].get<int>());
    }
  }
  if (options.json) {
    nlohmann::json doc = {{"graph", graph->name()},
                          {"threads", best.threads},
                          {"kernels", fused->report().kernels},
                          {"unfused_kernels", unfused->report().kernels},
                          {"results", results}};
    // The single-shape case also gets the fields at top level.
    if (results.size() == 1)
      for (auto& [key, value] : results[0].items())
        doc[key] = value;
    std::cout << doc.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

Runner add_bench_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "Time fused vs unfused against STREAM bandwidth");
  auto options = std::make_shared<BenchOptions>();
  cmd->add_option("graph", options->path, "graph file (.af or .onnx)")->required();
  cmd->add_option("--shape", options->shapes, "symbol values, e.g. N=16384,D=1024; repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--reps", options->reps, "interleaved repetitions (default: about --min-time)");
  cmd->add_option("--threads", options->threads,
                  "threads for kernels and STREAM (0: one per core)");
  cmd->add_option("--min-time", options->min_time,
                  "seconds per shape when --reps is not given (default 1)");
  cmd->add_option("--stream-mib", options->stream_mib,
                  "MiB per STREAM array (default 128; smaller than the L3 measures the cache)");
  cmd->add_flag("--json", options->json, "print JSON instead of text");
  return [cmd, options]() { return cmd->parsed() ? run(*options) : -1; };
}

}  // namespace autofuse::tools
