#include "fuzz/fuzz_check.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"

namespace autofuse::fuzz {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

runtime::CompileOptions compile_options(const CheckOptions& check) {
  runtime::CompileOptions o;
  o.fusion = fuse::FusionConfig::from_env();  // AUTOFUSE_FLAGS, as the CLI reads it
  o.fusion.enabled = o.fusion.enabled && check.fused;
  o.threads = check.threads;
  return o;
}

/// The first mismatch of one output (or a shape/dtype difference).
struct Diff {
  int64_t mismatches = 0;
  int64_t first = -1;
  double got = 0, want = 0, max_abs = 0;
  double worst_ratio = 0;  ///< |got - want| / tolerance (non-exact floats)
  std::string type_error;
  bool ok() const { return mismatches == 0 && type_error.empty(); }
};

Diff compare(const HostTensor& got, const HostTensor& want, Tolerance tol) {
  Diff d;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    d.type_error = fmt::format("got {}, want {}", got.type_string(), want.type_string());
    return d;
  }
  const bool exact = tol.atol == 0 && tol.rtol == 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_f64(i), w = want.get_f64(i);
    bool bad;
    if (std::isnan(g) || std::isnan(w)) {
      bad = std::isnan(g) != std::isnan(w);
    } else if (exact || std::isinf(g) || std::isinf(w)) {
      bad = g != w;
    } else {
      const double err = std::abs(g - w), bound = tol.atol + tol.rtol * std::abs(w);
      d.max_abs = std::max(d.max_abs, err);
      d.worst_ratio = std::max(d.worst_ratio, err / bound);
      bad = err > bound;
    }
    if (bad && d.mismatches++ == 0) {
      d.first = i;
      d.got = g;
      d.want = w;
    }
  }
  return d;
}

void tamper(std::vector<HostTensor>& outputs) {
  for (HostTensor& t : outputs) {
    if (t.numel() == 0) continue;
    const double v = t.get_f64(0);
    t.set_f64(0, is_bool(t.dtype()) ? (v == 0 ? 1 : 0) : (std::abs(v) + 1) * 1000);
    return;
  }
}

std::string binding_text(const Graph& graph, const sym::Binding& binding) {
  std::vector<std::string> items;
  for (const std::string& s : graph.symbols())
    items.push_back(fmt::format("{}={}", s, binding.at(s)));
  return fmt::format("{}", fmt::join(items, ","));
}

std::vector<int64_t> unflatten(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] == 0 ? 0 : i % shape[d];
    i = shape[d] == 0 ? 0 : i / shape[d];
  }
  return idx;
}

/// Compiles and runs `graph`, compares every output: the first failure as
/// text, or "" when all match.
std::string first_failure(const RandomGraph& rg, const sym::Binding& binding, uint64_t input_seed,
                          const CheckOptions& check) {
  try {
    auto exe = runtime::Executable::build(rg.graph, compile_options(check));
    std::vector<HostTensor> inputs = random_inputs(*rg.graph, binding, input_seed);
    std::vector<HostTensor> want = run_reference(*rg.graph, inputs, binding);
    std::vector<HostTensor> got = exe->run(inputs);
    if (check.tamper_for_test) tamper(got);
    for (size_t o = 0; o < want.size(); ++o) {
      const Diff d = compare(got[o], want[o], output_tolerance(rg.outputs[o], want[o].dtype()));
      if (!d.ok()) return fmt::format("output {}", o);
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// Where replay files go: $AUTOFUSE_FUZZ_DIR, else <tmp>/autofuse_fuzz.
std::filesystem::path replay_dir() {
  const char* dir = std::getenv("AUTOFUSE_FUZZ_DIR");
  std::filesystem::path p =
      dir ? std::filesystem::path(dir) : std::filesystem::temp_directory_path() / "autofuse_fuzz";
  std::filesystem::create_directories(p);
  return p;
}

sym::Binding restricted(const sym::Binding& binding, const Graph& graph) {
  sym::Binding out;
  for (const std::string& s : graph.symbols())
    out[s] = binding.at(s);
  return out;
}

/// The replay report: the lone subgraph when it fails by itself, else the
/// whole graph; its text, also written to a file, and the CLI command.
/// `subgraph` < 0 (a compile or run failure): the first that fails alone.
std::string replay(uint64_t seed, const GenOptions& gen, const RandomGraph& whole, int subgraph,
                   const sym::Binding& binding, uint64_t input_seed, const CheckOptions& check,
                   const std::string& what) {
  bool alone = false;
  RandomGraph one;
  for (int k = subgraph < 0 ? 0 : subgraph; k < (subgraph < 0 ? gen.subgraphs : subgraph + 1);
       ++k) {
    one = random_graph(seed, gen, k);
    alone = !first_failure(one, restricted(binding, *one.graph), input_seed, check).empty();
    if (alone) {
      subgraph = k;
      break;
    }
  }
  const sym::Binding one_binding = restricted(binding, *one.graph);
  const RandomGraph& shown = alone ? one : whole;
  const sym::Binding& shown_binding = alone ? one_binding : binding;
  const std::string text = print_graph(*shown.graph);
  const std::filesystem::path file =
      replay_dir() /
      (alone ? fmt::format("fuzz_{}_s{}.af", seed, subgraph) : fmt::format("fuzz_{}.af", seed));
  std::ofstream(file) << text;
  return fmt::format(
      "fuzz failure: seed {} subgraph {} ({}, threads {}): {}\n"
      "replay ({}): autofuse run {}{} --seed {} --check{}\n"
      "(--check's tolerance follows the output dtype; this test's follows the rounding on the "
      "way and the cancellation scale; the CLI uses one thread per core)\n{}",
      seed, subgraph >= 0 ? std::to_string(subgraph) : "?", check.fused ? "fused" : "unfused",
      check.threads, what, alone ? "the subgraph alone fails too" : "only the whole graph fails",
      file.string(),
      shown_binding.empty() ? "" : " --shape " + binding_text(*shown.graph, shown_binding),
      input_seed, check.fused ? "" : " --unfused", text);
}

}  // namespace

Tolerance output_tolerance(const OutputSpec& spec, DType dtype) {
  if (spec.exact || !is_float(dtype)) return {0, 0};
  switch (spec.rounding) {
    case DType::f16:
      return {1e-2 * spec.scale, 1e-2};
    case DType::bf16:
      return {6e-2 * spec.scale, 6e-2};
    default:
      return {1e-5 * spec.scale, 1e-4};
  }
}

std::string FuzzStats::summary() const {
  return fmt::format(
      "{} graphs, {} cases, {} outputs, {} elements, {} kernels; build {:.1f} s, runs {:.1f} s, "
      "reference {:.1f} s; worst error/tolerance {:.3f}",
      graphs, cases, outputs, elements, kernels, compile_seconds, run_seconds, ref_seconds,
      worst_ratio);
}

std::vector<std::string> check_graph(uint64_t seed, const GenOptions& gen, const RandomGraph& rg,
                                     const std::vector<sym::Binding>& bindings,
                                     const CheckOptions& check, FuzzStats& stats) {
  std::vector<std::string> failures;
  const int subgraphs = static_cast<int>(rg.base_shapes.size());
  ++stats.graphs;
  std::unique_ptr<runtime::Executable> exe;
  Clock::time_point start = Clock::now();
  try {
    exe = runtime::Executable::build(rg.graph, compile_options(check));
  } catch (const std::exception& e) {
    failures.push_back(replay(seed, gen, rg, -1, bindings.at(0), 0, check,
                              fmt::format("compile failed: {}", e.what())));
    return failures;
  }
  stats.compile_seconds += seconds_since(start);
  const int kernels = exe->report().kernels;
  stats.kernels += kernels;
  if (check.kernels_per_subgraph >= 0 && kernels != check.kernels_per_subgraph * subgraphs)
    failures.push_back(fmt::format("fuzz seed {}: {} kernels, want {} ({} per subgraph)\n{}\n{}",
                                   seed, kernels, check.kernels_per_subgraph * subgraphs,
                                   check.kernels_per_subgraph, print_graph(*rg.graph),
                                   fuse::print_fused_graph(exe->fused())));
  std::vector<bool> reported(static_cast<size_t>(gen.subgraphs), false);
  for (size_t b = 0; b < bindings.size(); ++b) {
    const sym::Binding& binding = bindings[b];
    const std::vector<HostTensor> inputs = random_inputs(*rg.graph, binding, b);
    start = Clock::now();
    std::vector<HostTensor> want;
    try {
      want = run_reference(*rg.graph, inputs, binding);
    } catch (const std::exception& e) {  // a generator bug: the graph must be valid
      failures.push_back(fmt::format("fuzz seed {}: reference failed under {}: {}\n{}", seed,
                                     binding_text(*rg.graph, binding), e.what(),
                                     print_graph(*rg.graph)));
      continue;
    }
    stats.ref_seconds += seconds_since(start);
    std::vector<HostTensor> got;
    start = Clock::now();
    try {
      got = exe->run(inputs);
      if (check.tamper_for_test) tamper(got);
    } catch (const std::exception& e) {
      failures.push_back(
          replay(seed, gen, rg, -1, binding, b, check, fmt::format("run failed: {}", e.what())));
      continue;
    }
    stats.run_seconds += seconds_since(start);
    stats.cases += subgraphs;
    for (size_t o = 0; o < want.size(); ++o) {
      const OutputSpec& spec = rg.outputs[o];
      const Diff d = compare(got[o], want[o], output_tolerance(spec, want[o].dtype()));
      ++stats.outputs;
      stats.elements += want[o].numel();
      stats.worst_ratio = std::max(stats.worst_ratio, d.worst_ratio);
      if (d.ok() || reported[static_cast<size_t>(spec.subgraph)]) continue;
      reported[static_cast<size_t>(spec.subgraph)] = true;
      const Value& value = rg.graph->value(rg.graph->outputs()[o]);
      const Tolerance tol = output_tolerance(spec, want[o].dtype());
      const std::string what =
          d.type_error.empty()
              ? fmt::format(
                    "output {} ({}, {}) under {}: {} of {} elements differ; first [{}] got {} want "
                    "{} (atol {:g} rtol {:g}{}; rounding {}, scale {:g})",
                    value.name, o, want[o].type_string(), binding_text(*rg.graph, binding),
                    d.mismatches, want[o].numel(),
                    fmt::join(unflatten(d.first, want[o].shape()), ", "), d.got, d.want, tol.atol,
                    tol.rtol, spec.exact ? ", exact" : "", dtype_name(spec.rounding), spec.scale)
              : fmt::format("output {} ({}) under {}: {}", value.name, o,
                            binding_text(*rg.graph, binding), d.type_error);
      failures.push_back(replay(seed, gen, rg, spec.subgraph, binding, b, check, what));
    }
  }
  return failures;
}

}  // namespace autofuse::fuzz
