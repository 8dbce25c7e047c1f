// `autofuse run G --ref [--shape N=4,D=768]... [--seed S] [--json]`: runs the
// graph on seeded random inputs, once per shape binding, and prints a
// per-output summary (shape, checksums).
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "tools/commands.h"
#include "tools/shape_bindings.h"

namespace autofuse::tools {

namespace {

struct RunOptions {
  std::string path;
  std::vector<std::string> shapes;
  uint64_t seed = 0;
  bool use_ref = false;
  bool json = false;
};

nlohmann::json output_json(const std::string& name, const HostTensor& t) {
  Checksum c = checksum(t);
  return {{"name", name},         {"dtype", std::string(dtype_name(t.dtype()))},
          {"shape", t.shape()},   {"sum", c.sum},
          {"abs_sum", c.abs_sum}, {"hash", fmt::format("{:016x}", c.hash)}};
}

int run(const RunOptions& options) {
  if (!options.use_ref)
    throw UserError("only the reference interpreter can run graphs in this build: pass --ref");
  Graph graph = parse_graph_file(options.path);
  std::vector<sym::Binding> bindings = bindings_for_graph(graph, options.shapes);
  std::vector<std::string> order = graph.symbols();

  nlohmann::json runs = nlohmann::json::array();
  if (!options.json)
    std::cout << fmt::format("graph {}: {} run(s) on the reference interpreter, seed {}\n",
                             graph.name(), bindings.size(), options.seed);
  for (const sym::Binding& binding : bindings) {
    graph.shape_env().check(binding);
    std::vector<HostTensor> inputs = random_inputs(graph, binding, options.seed);
    std::vector<HostTensor> outputs = run_reference(graph, inputs, binding);
    nlohmann::json run_json = {{"shape", binding}, {"outputs", nlohmann::json::array()}};
    if (!options.json) std::cout << fmt::format("run [{}]\n", binding_to_string(binding, order));
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string& name = graph.value(graph.outputs()[i]).name;
      nlohmann::json out = output_json(name, outputs[i]);
      if (!options.json)
        std::cout << fmt::format("  {}: {}  sum={:.9g}  abs_sum={:.9g}  hash={}\n", name,
                                 outputs[i].type_string(), out["sum"].get<double>(),
                                 out["abs_sum"].get<double>(), out["hash"].get<std::string>());
      run_json["outputs"].push_back(std::move(out));
    }
    runs.push_back(std::move(run_json));
  }
  if (options.json) {
    nlohmann::json doc = {{"graph", graph.name()},
                          {"executor", "reference"},
                          {"seed", options.seed},
                          {"runs", std::move(runs)}};
    std::cout << doc.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

Runner add_run_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("run", "Run a graph on seeded random inputs");
  auto options = std::make_shared<RunOptions>();
  cmd->add_option("graph", options->path, "graph file (.af)")->required();
  cmd->add_option("--shape", options->shapes,
                  "symbol values, e.g. N=4,D=768; repeat for several runs")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--seed", options->seed, "seed of the random inputs")->default_val(0);
  cmd->add_flag("--ref", options->use_ref, "run on the reference interpreter");
  cmd->add_flag("--json", options->json, "print JSON instead of text");
  return [cmd, options]() { return cmd->parsed() ? run(*options) : -1; };
}

}  // namespace autofuse::tools
