// `autofuse conformance [DIR] [--op TYPE]... [--filter TEXT] [--json]
// [--verbose]`: runs the ONNX backend node tests of the op types autofuse
// imports (see tools/conformance.h) and prints a table by op type, the skip
// reasons and failures, and the closing line `N passed, M failed, K skipped`.
// Exit code 3 when a test failed (like `run --check`), else 0.
#include <chrono>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "autofuse/error.h"
#include "tools/commands.h"
#include "tools/conformance.h"

namespace autofuse::tools {

namespace {

struct ConformanceArgs {
  std::string dir;
  std::vector<std::string> ops;
  std::string filter;
  bool json = false;
  bool verbose = false;
  int jobs = 0;
};

struct Counts {
  int passed = 0, failed = 0, skipped = 0;
  void add(TestStatus s) {
    passed += s == TestStatus::passed;
    failed += s == TestStatus::failed;
    skipped += s == TestStatus::skipped;
  }
  int claimed() const { return passed + failed + skipped; }
};

void print_text_report(const std::string& dir, const std::vector<NodeTestResult>& results,
                       bool verbose, double seconds) {
  std::map<std::string, Counts> by_op;
  Counts total;
  int not_claimed = 0;
  for (const NodeTestResult& r : results) {
    if (r.status == TestStatus::not_claimed) {
      ++not_claimed;
      continue;
    }
    by_op[r.op].add(r.status);
    total.add(r.status);
  }
  std::cout << fmt::format("ONNX node tests in {}: {} claimed, {} not claimed\n", dir,
                           total.claimed(), not_claimed);
  size_t width = 5;
  for (const auto& [op, c] : by_op)
    width = std::max(width, op.size());
  auto row = [&](const std::string& op, const Counts& c) {
    std::cout << fmt::format("{:<{}}  {:>6}  {:>6}  {:>7}\n", op, width, c.passed, c.failed,
                             c.skipped);
  };
  std::cout << fmt::format("{:<{}}  {:>6}  {:>6}  {:>7}\n", "op", width, "passed", "failed",
                           "skipped");
  for (const auto& [op, c] : by_op)
    row(op, c);
  row("total", total);
  for (TestStatus status : {TestStatus::skipped, TestStatus::failed}) {
    bool header = false;
    for (const NodeTestResult& r : results) {
      if (r.status != status) continue;
      if (!header) std::cout << fmt::format("\n{}:\n", status_name(status));
      header = true;
      std::cout << fmt::format("  {} ({}): {}\n", r.name, r.op, r.detail);
    }
  }
  std::vector<std::string> frozen;
  for (const NodeTestResult& r : results)
    if (!r.frozen_inputs.empty() && r.status != TestStatus::not_claimed)
      frozen.push_back(fmt::format("{} ({})", r.name, fmt::join(r.frozen_inputs, ", ")));
  if (!frozen.empty()) {
    std::cout << fmt::format(
        "\n{} test(s) ran with inputs frozen to their data set's values (axes, shapes, pads, "
        "sizes, ... that autofuse needs at compile time){}\n",
        frozen.size(), verbose ? ":" : "; --verbose lists them");
    if (verbose)
      for (const std::string& f : frozen)
        std::cout << "  " << f << "\n";
  }
  if (verbose && not_claimed > 0) {
    std::cout << "\nnot claimed (op types autofuse does not import):\n";
    for (const NodeTestResult& r : results)
      if (r.status == TestStatus::not_claimed)
        std::cout << fmt::format("  {}: {}\n", r.name, r.detail);
  }
  if (total.claimed() > 0)
    std::cout << fmt::format(
        "\npass rate {:.1f}% of {} claimed tests, {:.1f}% of the {} not skipped ({:.1f} s)\n",
        100.0 * total.passed / total.claimed(), total.claimed(),
        total.passed + total.failed ? 100.0 * total.passed / (total.passed + total.failed) : 0.0,
        total.passed + total.failed, seconds);
  std::cout << fmt::format("{} passed, {} failed, {} skipped\n", total.passed, total.failed,
                           total.skipped);
}

nlohmann::json json_report(const std::string& dir, const std::vector<NodeTestResult>& results,
                           double seconds) {
  Counts total;
  int not_claimed = 0;
  nlohmann::json ops = nlohmann::json::object(), tests = nlohmann::json::array();
  std::map<std::string, Counts> by_op;
  for (const NodeTestResult& r : results) {
    tests.push_back({{"name", r.name},
                     {"op", r.op},
                     {"status", status_name(r.status)},
                     {"detail", r.detail},
                     {"data_sets", r.data_sets},
                     {"frozen_inputs", r.frozen_inputs},
                     {"seconds", r.seconds}});
    if (r.status == TestStatus::not_claimed) {
      ++not_claimed;
      continue;
    }
    by_op[r.op].add(r.status);
    total.add(r.status);
  }
  for (const auto& [op, c] : by_op)
    ops[op] = {{"passed", c.passed}, {"failed", c.failed}, {"skipped", c.skipped}};
  return {{"dir", dir},
          {"passed", total.passed},
          {"failed", total.failed},
          {"skipped", total.skipped},
          {"not_claimed", not_claimed},
          {"pass_rate", total.claimed() ? static_cast<double>(total.passed) / total.claimed() : 0},
          {"seconds", seconds},
          {"ops", ops},
          {"tests", tests}};
}

int run(const ConformanceArgs& args) {
  ConformanceOptions options;
  options.dir = args.dir.empty() ? default_node_test_dir() : args.dir;
  options.ops = args.ops;
  options.filter = args.filter;
  if (args.jobs < 0) throw UserError("--jobs must be >= 0 (0: one per hardware thread)");
  options.jobs = args.jobs;
  auto start = std::chrono::steady_clock::now();
  std::vector<NodeTestResult> results = run_node_tests(options, [&](const NodeTestResult& r) {
    if (!args.verbose || args.json || r.status == TestStatus::not_claimed) return;
    std::string frozen = r.frozen_inputs.empty()
                             ? std::string()
                             : fmt::format(", frozen: {}", fmt::join(r.frozen_inputs, ", "));
    std::cout << fmt::format("{:<7} {} ({}, {} data set(s){}, {:.2f} s)\n", status_name(r.status),
                             r.name, r.op, r.data_sets, frozen, r.seconds)
              << std::flush;
  });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json doc = json_report(options.dir, results, seconds);
  if (args.json) {
    std::cout << doc.dump(2) << "\n";
    // The closing line for people reading a log; stdout stays pure JSON.
    std::cerr << fmt::format("{} passed, {} failed, {} skipped\n", doc["passed"].get<int>(),
                             doc["failed"].get<int>(), doc["skipped"].get<int>());
  } else {
    print_text_report(options.dir, results, args.verbose, seconds);
  }
  return doc["failed"].get<int>() > 0 ? 3 : 0;
}

}  // namespace

Runner add_conformance_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "conformance", "Run the ONNX backend node tests of the op types autofuse imports");
  auto args = std::make_shared<ConformanceArgs>();
  cmd->add_option("dir", args->dir,
                  "folder of node tests (default: the onnx package's backend/test/data/node in "
                  ".venv, or $AUTOFUSE_ONNX_NODE_TESTS)");
  cmd->add_option("--op", args->ops, "only the tests of this ONNX op type; repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--filter", args->filter, "only the tests whose name contains this text");
  cmd->add_flag("--json", args->json, "print JSON instead of text");
  cmd->add_flag("--verbose", args->verbose,
                "print each test as it finishes and list the tests not claimed");
  cmd->add_option("--jobs", args->jobs,
                  "tests compiled and run at once (0: one per hardware thread)")
      ->default_val(0);
  return [cmd, args]() { return cmd->parsed() ? run(*args) : -1; };
}

}  // namespace autofuse::tools
