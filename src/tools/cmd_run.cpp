// `autofuse run G [--shape N=4,D=768]... [--seed S] [--input NAME=FILE]...
//  [--output-dir D] [--ref | --check] [--json]`: compiles the graph (.af or
// .onnx) once (or, with --ref, uses the reference interpreter) and runs it
// once per shape binding on seeded random inputs, or once on the tensors
// given with --input (symbols bound from their shapes), and prints a
// per-output summary. --check compares every output with the reference;
// --output-dir writes the outputs as .npy files.
#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "tools/commands.h"
#include "tools/compare.h"
#include "tools/graph_loading.h"
#include "tools/shape_bindings.h"
#include "tools/tensor_args.h"

namespace autofuse::tools {

namespace {

struct RunOptions {
  std::string path;
  std::vector<std::string> shapes;
  std::vector<std::string> inputs;  // NAME=FILE
  std::string output_dir;
  uint64_t seed = 0;
  bool use_ref = false;
  bool check = false;
  bool unfused = false;
  bool json = false;
  int compile_jobs = 0;  // 0: one per hardware thread
};

nlohmann::json output_json(const std::string& name, const HostTensor& t) {
  Checksum c = checksum(t);
  return {{"name", name},         {"dtype", std::string(dtype_name(t.dtype()))},
          {"shape", t.shape()},   {"sum", c.sum},
          {"abs_sum", c.abs_sum}, {"hash", fmt::format("{:016x}", c.hash)}};
}

int run(const RunOptions& options) {
  if (options.use_ref && (options.check || options.unfused))
    throw UserError("--ref runs only the reference interpreter; it excludes --check and --unfused");
  LoadedGraph loaded = load_graph(options.path);
  std::shared_ptr<const Graph> graph = loaded.graph;
  std::vector<std::string> order = graph->symbols();
  // Real inputs: one run, symbols bound from their shapes (and --shape, if
  // given, checked against them). Otherwise one run per --shape on random data.
  std::vector<sym::Binding> bindings;
  std::vector<HostTensor> given_inputs;
  if (!options.inputs.empty()) {
    if (options.shapes.size() > 1)
      throw UserError("--input gives one set of inputs; give at most one --shape with it");
    sym::Binding given;
    if (!options.shapes.empty()) {
      given = parse_shape_binding(options.shapes[0]);
      for (const auto& [name, value] : given)
        if (std::find(order.begin(), order.end(), name) == order.end())
          throw UserError(fmt::format("--shape '{}': graph '{}' has no symbol {}",
                                      options.shapes[0], graph->name(), name));
    }
    given_inputs = read_input_args(loaded, options.inputs);
    bindings.push_back(bind_input_shapes(loaded, given_inputs, given));
  } else {
    bindings = bindings_for_graph(*graph, options.shapes);
  }
  if (!options.output_dir.empty() && bindings.size() > 1)
    throw UserError("--output-dir writes the outputs of one run; give at most one --shape with it");

  nlohmann::json doc = {{"graph", graph->name()},
                        {"executor", options.use_ref ? "reference" : "compiled"},
                        {"seed", options.seed}};
  std::unique_ptr<runtime::Executable> exe;
  if (!options.use_ref) {
    if (options.compile_jobs < 0)
      throw UserError("--compile-jobs must be >= 0 (0: one per hardware thread)");
    runtime::CompileOptions compile = compile_options(!options.unfused);
    compile.compiler.jobs = options.compile_jobs;
    exe = runtime::Executable::build(graph, compile);
    const runtime::CompileReport& report = exe->report();
    doc["kernels"] = report.kernels;
    doc["launches"] = report.launches;
    doc["compiles"] = report.jit.compiles;
    doc["cache_hits"] = report.jit.cache_hits;
    doc["compile_seconds"] = report.jit.compile_seconds;
    doc["compile_units"] = report.jit.units;
    if (!options.json)
      std::cout << fmt::format(
          "graph {}: {} kernel(s){}{}; {} compile(s){} ({:.3f} s), {} cache hit(s)\n",
          graph->name(), report.kernels,
          report.launches != report.kernels ? fmt::format(" in {} launch(es)", report.launches)
                                            : std::string(),
          options.unfused ? " (unfused)" : "", report.jit.compiles,
          report.jit.units > 1 ? fmt::format(" of {} units in parallel", report.jit.units)
                               : std::string(),
          report.jit.compile_seconds, report.jit.cache_hits);
  } else if (!options.json) {
    std::cout << fmt::format("graph {}: reference interpreter\n", graph->name());
  }

  bool all_ok = true;
  nlohmann::json runs = nlohmann::json::array();
  for (const sym::Binding& binding : bindings) {
    std::vector<HostTensor> inputs;
    if (given_inputs.empty()) {
      graph->shape_env().check(binding);
      inputs = random_inputs(*graph, binding, options.seed);
    } else {
      inputs = std::move(given_inputs);
    }
    std::vector<HostTensor> outputs =
        exe ? exe->run(inputs) : run_reference(*graph, inputs, binding);
    nlohmann::json run_json = {{"shape", binding}, {"outputs", nlohmann::json::array()}};
    if (!options.json) std::cout << fmt::format("run [{}]\n", binding_to_string(binding, order));
    std::vector<HostTensor> expected;
    if (options.check) expected = run_reference(*graph, inputs, binding);
    double run_abs = 0, run_rel = 0;
    bool run_ok = true;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string& name = loaded.output_names[i];
      nlohmann::json out = output_json(name, outputs[i]);
      std::string verdict;
      if (options.check) {
        const Tolerance tolerance = tolerance_for_output(*graph, graph->outputs().at(i));
        Comparison c = compare(outputs[i], expected[i], tolerance);
        out["atol"] = tolerance.atol;
        out["rtol"] = tolerance.rtol;
        out["max_abs_err"] = c.max_abs_err;
        out["max_rel_err"] = c.max_rel_err;
        out["ok"] = c.ok();
        run_abs = std::max(run_abs, c.max_abs_err);
        run_rel = std::max(run_rel, c.max_rel_err);
        run_ok = run_ok && c.ok();
        verdict =
            fmt::format("  max_abs_err={:.3g} max_rel_err={:.3g} {}", c.max_abs_err, c.max_rel_err,
                        c.ok() ? "ok"
                               : fmt::format("MISMATCH ({} elements, first at {})", c.mismatches,
                                             c.first_mismatch));
      }
      if (!options.json)
        std::cout << fmt::format("  {}: {}  sum={:.9g}  abs_sum={:.9g}  hash={}{}\n", name,
                                 outputs[i].type_string(), out["sum"].get<double>(),
                                 out["abs_sum"].get<double>(), out["hash"].get<std::string>(),
                                 verdict);
      run_json["outputs"].push_back(std::move(out));
    }
    if (!options.output_dir.empty()) {
      for (const std::string& note :
           write_output_files(options.output_dir, loaded.output_names, outputs))
        std::cerr << "note: " << note << "\n";
      run_json["output_dir"] = options.output_dir;
      if (!options.json)
        std::cout << fmt::format("  wrote {} output(s) to {}\n", outputs.size(),
                                 options.output_dir);
    }
    if (options.check) {
      run_json["ok"] = run_ok;
      run_json["max_abs_err"] = run_abs;
      run_json["max_rel_err"] = run_rel;
    }
    all_ok = all_ok && run_ok;
    runs.push_back(std::move(run_json));
  }
  if (options.check) doc["ok"] = all_ok;
  doc["runs"] = std::move(runs);
  if (options.json)
    std::cout << doc.dump(2) << "\n";
  else if (options.check)
    std::cout << (all_ok ? "check: ok\n" : "check: FAILED\n");
  return all_ok ? 0 : 3;
}

}  // namespace

Runner add_run_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("run", "Compile a graph once and run it on random or given inputs");
  auto options = std::make_shared<RunOptions>();
  cmd->add_option("graph", options->path, "graph file (.af or .onnx)")->required();
  cmd->add_option("--shape", options->shapes,
                  "symbol values, e.g. N=4,D=768; repeat for several runs")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--input", options->inputs,
                  "NAME=FILE: an input's values from a .npy or ONNX TensorProto .pb file "
                  "(NAME: the model's input name); repeat for every input")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--output-dir", options->output_dir,
                  "write each output as DIR/<output name>.npy");
  cmd->add_option("--seed", options->seed, "seed of the random inputs")->default_val(0);
  cmd->add_flag("--ref", options->use_ref, "run on the reference interpreter instead");
  cmd->add_flag("--check", options->check,
                "compare every output with the reference interpreter (exit code 3 on mismatch)");
  cmd->add_flag("--unfused", options->unfused, "one kernel per op (fusion disabled)");
  cmd->add_flag("--json", options->json, "print JSON instead of text");
  cmd->add_option("--compile-jobs", options->compile_jobs,
                  "compiler processes at once for a module of several kernels "
                  "(0: one per hardware thread; 1: the module as one translation unit)")
      ->default_val(0);
  return [cmd, options]() { return cmd->parsed() ? run(*options) : -1; };
}

}  // namespace autofuse::tools
