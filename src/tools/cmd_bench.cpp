// `autofuse bench G --shape ... [--reps R] [--json]`: times the fused and the
// unfused executables of a graph (interleaved repetitions, medians) and
// reports the bandwidth of the bytes that must move (graph inputs read once,
// outputs written once) against STREAM measured in the same run.
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
  std::shared_ptr<const Graph> graph = load_graph(options.path);
  std::vector<sym::Binding> bindings = bindings_for_graph(*graph, options.shapes);
  auto fused = runtime::Executable::build(graph, compile_options(true));
  auto unfused = runtime::Executable::build(graph, compile_options(false));
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
    // Adaptive: about 1 s in total, between 10 and 10000 interleaved pairs.
    int reps = options.reps;
    if (reps <= 0) {
      double pair = time_once(*fused, inputs, out_fused) + time_once(*unfused, inputs, out_unfused);
      reps = static_cast<int>(std::clamp(1.0 / std::max(pair, 1e-9), 10.0, 10000.0));
    }
    std::vector<double> t_fused, t_unfused;
    for (int r = 0; r < reps; ++r) {
      t_fused.push_back(time_once(*fused, inputs, out_fused));
      t_unfused.push_back(time_once(*unfused, inputs, out_unfused));
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
    if (!options.json)
      std::cout << fmt::format(
          "{} [{}]: fused {:.4f} ms, unfused {:.4f} ms, speedup {:.2f}x; {:.1f} GB/s = {:.0f}% of "
          "STREAM triad {:.1f} GB/s ({} reps)\n",
          graph->name(), binding_to_string(binding, graph->symbols()), fused_s * 1e3,
          unfused_s * 1e3, unfused_s / fused_s, gbps, 100.0 * gbps / stream.triad_gbps,
          stream.triad_gbps, reps);
    results.push_back(std::move(r));
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
  cmd->add_option("graph", options->path, "graph file (.af)")->required();
  cmd->add_option("--shape", options->shapes, "symbol values, e.g. N=16384,D=1024; repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--reps", options->reps, "interleaved repetitions (default: about 1 s)");
  cmd->add_flag("--json", options->json, "print JSON instead of text");
  return [cmd, options]() { return cmd->parsed() ? run(*options) : -1; };
}

}  // namespace autofuse::tools
