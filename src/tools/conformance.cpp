#include "tools/conformance.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include "autofuse/error.h"
#include "autofuse/frontend/onnx_import.h"
#include "frontend/io/tensor_proto.h"
#include "tools/node_test.h"

namespace autofuse::tools {

namespace fs = std::filesystem;

namespace {

constexpr const char* kVenvNodeTests = "lib/{}/site-packages/onnx/backend/test/data/node";

// `.venv/lib/python3*/site-packages/onnx/backend/test/data/node` under `root`.
std::optional<fs::path> venv_node_tests(const fs::path& root) {
  std::error_code ec;
  fs::path lib = root / ".venv" / "lib";
  if (!fs::is_directory(lib, ec)) return std::nullopt;
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(lib, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("python3")) continue;
    fs::path candidate = root / ".venv" / fmt::format(kVenvNodeTests, name);
    if (fs::is_directory(candidate, ec)) found.push_back(candidate);
  }
  if (found.empty()) return std::nullopt;
  std::sort(found.begin(), found.end());
  return found.back();
}

// The op types a graph's nodes use, subgraphs (If/Loop/Scan bodies)
// included. Ops of other domains are named "domain:Op", which no importer
// table holds.
void collect_op_types(const onnx::GraphProto& graph, std::set<std::string>& ops) {
  for (const onnx::NodeProto& node : graph.node()) {
    bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    ops.insert(default_domain ? node.op_type() : node.domain() + ":" + node.op_type());
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) collect_op_types(attr.g(), ops);
      for (const onnx::GraphProto& g : attr.graphs())
        collect_op_types(g, ops);
    }
  }
}

// The distinct op types of the top-level graph only (for naming a test's op).
std::set<std::string> top_level_ops(const onnx::ModelProto& model) {
  std::set<std::string> ops;
  for (const onnx::NodeProto& node : model.graph().node())
    ops.insert(node.op_type());
  return ops;
}

// What a test is counted under: its op type when its model has one; for a
// `<twin>_expanded...` test (the function body of the twin's op) the twin's
// op; otherwise the op types joined with '+'.
class OpNamer {
 public:
  explicit OpNamer(fs::path dir) : dir_(std::move(dir)) {}

  std::string name_for(const std::string& test, const std::set<std::string>& ops) {
    if (ops.size() == 1) return *ops.begin();
    if (size_t pos = test.find("_expanded"); pos != std::string::npos) {
      std::set<std::string> twin = twin_ops(test.substr(0, pos));
      if (twin.size() == 1) return *twin.begin();
    }
    return fmt::format("{}", fmt::join(ops, "+"));
  }

 private:
  std::set<std::string> twin_ops(const std::string& twin) {
    auto it = cache_.find(twin);
    if (it != cache_.end()) return it->second;
    std::set<std::string> ops;
    onnx::ModelProto model;
    std::string path = (dir_ / twin / "model.onnx").string();
    std::error_code ec;
    if (fs::exists(path, ec)) {
      try {
        if (model.ParseFromString(frontend::read_binary_file(path, "ONNX model")))
          ops = top_level_ops(model);
      } catch (const UserError&) {
        // An unreadable twin only means the expanded test keeps its own name.
      }
    }
    return cache_[twin] = ops;
  }

  fs::path dir_;
  std::map<std::string, std::set<std::string>> cache_;
};

}  // namespace

const char* status_name(TestStatus status) {
  switch (status) {
    case TestStatus::passed:
      return "passed";
    case TestStatus::failed:
      return "failed";
    case TestStatus::skipped:
      return "skipped";
    case TestStatus::not_claimed:
      return "not claimed";
  }
  return "?";
}

std::string default_node_test_dir() {
  if (const char* env = std::getenv("AUTOFUSE_ONNX_NODE_TESTS"); env && *env) {
    std::error_code ec;
    if (!fs::is_directory(env, ec))
      throw UserError(fmt::format(
          "AUTOFUSE_ONNX_NODE_TESTS={} is not a folder (it should hold the ONNX node tests, "
          "e.g. .venv/lib/python3.X/site-packages/onnx/backend/test/data/node)",
          env));
    return env;
  }
  std::vector<fs::path> roots;
  std::error_code ec;
  for (fs::path p = fs::current_path(ec); !ec && !p.empty(); p = p.parent_path()) {
    roots.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (fs::path p = exe.parent_path(); !p.empty(); p = p.parent_path()) {
      roots.push_back(p);
      if (p == p.parent_path()) break;
    }
  for (const fs::path& root : roots)
    if (auto dir = venv_node_tests(root)) return dir->string();
  throw UserError(
      "the ONNX node tests were not found: run scripts/setup-python.sh in the repository root "
      "(it installs the onnx Python package into .venv), give the folder as `autofuse "
      "conformance DIR`, or set AUTOFUSE_ONNX_NODE_TESTS");
}

std::vector<NodeTestResult> run_node_tests(
    const ConformanceOptions& options,
    const std::function<void(const NodeTestResult&)>& on_result) {
  std::error_code ec;
  if (!fs::is_directory(options.dir, ec))
    throw UserError(fmt::format("{}: not a folder of ONNX node tests", options.dir));
  const std::vector<std::string> supported = frontend::supported_onnx_ops();
  const std::set<std::string> supported_set(supported.begin(), supported.end());
  for (const std::string& op : options.ops)
    if (!supported_set.count(op))
      throw UserError(fmt::format("--op {}: not an ONNX op type autofuse imports (it imports {})",
                                  op, fmt::join(supported, ", ")));

  std::vector<fs::path> tests;
  for (const auto& entry : fs::directory_iterator(options.dir))
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx", ec))
      tests.push_back(entry.path());
  std::sort(tests.begin(), tests.end());
  if (tests.empty())
    throw UserError(fmt::format("{}: no node tests (folders with a model.onnx) here", options.dir));

  // Serially: parse, name and claim each test (cheap). Then the claimed ones
  // compile and run on `jobs` threads (each build is its own compile), and
  // `on_result` sees every result in name order, as soon as those before it
  // are done.
  struct Pending {
    NodeTestResult result;
    fs::path dir;
    onnx::ModelProto model;
    std::string bytes;
    bool run = false;
  };
  OpNamer namer(options.dir);
  std::vector<Pending> pending;
  for (const fs::path& test_dir : tests) {
    Pending p;
    p.dir = test_dir;
    NodeTestResult& result = p.result;
    result.name = test_dir.filename().string();
    if (!options.filter.empty() && result.name.find(options.filter) == std::string::npos) continue;
    auto start = std::chrono::steady_clock::now();
    p.bytes = frontend::read_binary_file((test_dir / "model.onnx").string(), "ONNX model");
    if (!p.model.ParseFromString(p.bytes)) {
      // No op types to count it under; a broken suite is worth a failure.
      if (!options.ops.empty()) continue;
      result.op = "?";
      result.status = TestStatus::failed;
      result.detail = "model.onnx is not a valid ONNX model (protobuf parsing failed)";
    } else {
      std::set<std::string> ops;
      collect_op_types(p.model.graph(), ops);
      result.op = namer.name_for(result.name, top_level_ops(p.model));
      if (!options.ops.empty() &&
          std::find(options.ops.begin(), options.ops.end(), result.op) == options.ops.end())
        continue;
      std::vector<std::string> missing;
      for (const std::string& op : ops)
        if (!supported_set.count(op)) missing.push_back(op);
      if (!missing.empty()) {
        result.status = TestStatus::not_claimed;
        result.detail = fmt::format("uses {}", fmt::join(missing, ", "));
      } else {
        p.run = true;
      }
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    pending.push_back(std::move(p));
  }

  std::mutex mutex;  // guards done, reported and the calls of on_result
  std::vector<char> done(pending.size(), 0);
  size_t reported = 0;
  const auto finish = [&](size_t i) {
    std::lock_guard<std::mutex> lock(mutex);
    done[i] = 1;
    for (; reported < pending.size() && done[reported]; ++reported)
      if (on_result) on_result(pending[reported].result);
  };
  std::atomic<size_t> next{0};
  std::exception_ptr error;  // what is not an std::exception stops the run
  const auto worker = [&] {
    for (size_t i = next++; i < pending.size(); i = next++) {
      Pending& p = pending[i];
      if (p.run) {
        const auto start = std::chrono::steady_clock::now();
        try {
          run_node_test(p.dir, p.model, p.bytes, p.result);
        } catch (const std::exception& e) {
          // Compile or run errors of any kind (user or internal) are
          // failures of a test we claim; the run goes on.
          p.result.status = TestStatus::failed;
          p.result.detail = e.what();
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!error) error = std::current_exception();
          next = pending.size();
          return;
        }
        p.result.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      finish(i);
    }
  };
  const int jobs = options.jobs > 0
                       ? options.jobs
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (int t = 1; t < std::min<int>(jobs, static_cast<int>(pending.size())); ++t)
    threads.emplace_back(worker);
  worker();  // this thread is one of them
  for (std::thread& t : threads)
    t.join();
  if (error) std::rethrow_exception(error);
  std::vector<NodeTestResult> results;
  for (Pending& p : pending)
    results.push_back(std::move(p.result));
  return results;
}

}  // namespace autofuse::tools
