// `autofuse bench G --shape ... [--reps R] [--json]`: times the fused and the
// unfused executables of a graph (interleaved repetitions, medians) and
// reports the bandwidth of the bytes that must move (graph inputs read once,
// outputs written once) against STREAM measured in the same run.
//
// Interleaving is by rounds: each round runs one executable kBlock times in a
// row, untimed first, then the other. Alternating single runs would time
// each one right after the other executable had filled the caches with its
// own (dirty) buffers, which measured the neighbour more than the kernel
// (LayerNorm [16384, 1024]: 4.2 ms alternating vs 3.35 ms in a row).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
  int reps = 0;  // 0: adaptive
  bool json = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double time_once(runtime::Executable& exe, const std::vector<HostTensor>& inputs,
                 std::vector<HostTensor>& outputs) {
  auto start = std::chrono::steady_clock::now();
  exe.run_into(inputs, outputs);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(const BenchOptions& options) {
  std::shared_ptr<const Graph> graph = load_graph(options.path).graph;
  std::vector<sym::Binding> bindings = bindings_for_graph(*graph, options.shapes);
  auto fused = runtime::Executable::build(graph, compile_options(true));
  auto unfused = runtime::Executable::build(graph, compile_options(false));
  // STREAM is measured before and after the timings and the better figure
  // kept, so a noisy moment does not flatter the kernel's ratio.
  StreamResult stream = measure_stream();
  nlohmann::json results = nlohmann::json::array();
  for (const sym::Binding& binding : bindings) {
    std::vector<HostTensor> inputs = random_inputs(*graph, binding, /*seed=*/1);
    std::vector<HostTensor> out_fused = fused->run(inputs);  // also the warm-up
    std::vector<HostTensor> out_unfused = unfused->run(inputs);
    double bytes = 0;
    for (const HostTensor& t : inputs)
      bytes += static_cast<double>(t.nbytes());
    for (const HostTensor& t : out_fused)
      bytes += static_cast<double>(t.nbytes());
    for (int i = 0; i < 3; ++i)
      time_once(*fused, inputs, out_fused), time_once(*unfused, inputs, out_unfused);
    // Adaptive: about 1 s in total, between 10 and 10000 timed runs each.
    int reps = options.reps;
    if (reps <= 0) {
      double pair = time_once(*fused, inputs, out_fused) + time_once(*unfused, inputs, out_unfused);
      reps = static_cast<int>(std::clamp(1.0 / std::max(pair, 1e-9), 10.0, 10000.0));
    }
    constexpr int kBlock = 5;
    std::vector<double> t_fused, t_unfused;
    auto round = [&](runtime::Executable& exe, std::vector<HostTensor>& out,
                     std::vector<double>& times) {
      time_once(exe, inputs, out);  // settles caches and threads after the other one
      for (int i = 0; i < kBlock && static_cast<int>(times.size()) < reps; ++i)
        times.push_back(time_once(exe, inputs, out));
    };
    while (static_cast<int>(t_fused.size()) < reps) {
      round(*fused, out_fused, t_fused);
      round(*unfused, out_unfused, t_unfused);
    }
    double fused_s = median(t_fused), unfused_s = median(t_unfused);
    double gbps = bytes / fused_s / 1e9;
    nlohmann::json r = {{"shape", binding},
                        {"reps", reps},
                        {"bytes", bytes},
                        {"fused_ms", fused_s * 1e3},
                        {"unfused_ms", unfused_s * 1e3},
                        {"speedup", unfused_s / fused_s},
                        {"gbps", gbps},
                        {"stream_gbps", stream.triad_gbps},
                        {"stream_copy_gbps", stream.copy_gbps},
                        {"pct_of_stream", 100.0 * gbps / stream.triad_gbps}};
    results.push_back(std::move(r));
  }
  StreamResult after = measure_stream();
  for (auto& r : results) {
    double best = std::max(r["stream_gbps"].get<double>(), after.triad_gbps);
    r["stream_gbps"] = best;
    r["stream_copy_gbps"] = std::max(r["stream_copy_gbps"].get<double>(), after.copy_gbps);
    r["pct_of_stream"] = 100.0 * r["gbps"].get<double>() / best;
  }
  if (!options.json) {
    std::cout << fmt::format(
        "{}: STREAM triad {:.1f} GB/s before, {:.1f} GB/s after (best is used)\n", graph->name(),
        stream.triad_gbps, after.triad_gbps);
    for (size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      std::cout << fmt::format(
          "[{}]: fused {:.4f} ms, unfused {:.4f} ms, speedup {:.2f}x; {:.1f} GB/s = {:.0f}% of "
          "STREAM triad ({} reps)\n",
          binding_to_string(bindings[i], graph->symbols()), r["fused_ms"].get<double>(),
          r["unfused_ms"].get<double>(), r["speedup"].get<double>(), r["gbps"].get<double>(),
          r["pct_of_stream"].get<double>(), r["reps"].get<int>());
    }
  }
  if (options.json) {
    nlohmann::json doc = {{"graph", graph->name()},
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
  cmd->add_option("--reps", options->reps, "interleaved repetitions (default: about 1 s)");
  cmd->add_flag("--json", options->json, "print JSON instead of text");
  return [cmd, options]() { return cmd->parsed() ? run(*options) : -1; };
}

}  // namespace autofuse::tools
