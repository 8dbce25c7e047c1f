#include "tools/node_test.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autofuse/error.h"
#include "autofuse/frontend/onnx_import.h"
#include "autofuse/runtime/executable.h"
#include "frontend/io/tensor_proto.h"
#include "tools/compare.h"
#include "tools/graph_loading.h"

namespace autofuse::tools {

namespace fs = std::filesystem;

namespace {

// The ONNX backend test runner's defaults (onnx/backend/test/runner).
constexpr Tolerance kFloatTolerance{/*atol=*/1e-7, /*rtol=*/1e-3};

// A data set as TensorProtos: inputs by model input name, outputs in order.
struct DataSet {
  std::string name;  // test_data_set_N
  std::map<std::string, onnx::TensorProto> inputs;
  std::vector<onnx::TensorProto> outputs;
};

// input_3.pb -> 3; files of other names -> nullopt.
std::optional<int> pb_index(const fs::path& file, std::string_view prefix) {
  std::string name = file.filename().string();
  if (!name.starts_with(prefix) || !name.ends_with(".pb")) return std::nullopt;
  std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
  if (digits.empty() || digits.size() > 6 ||
      !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::stoi(digits);
}

// The input_N.pb or output_N.pb files of a data set, parsed, by N (which
// must run 0..k-1).
std::vector<onnx::TensorProto> read_protos(const fs::path& set_dir, std::string_view prefix) {
  std::vector<std::pair<int, fs::path>> files;
  for (const auto& entry : fs::directory_iterator(set_dir))
    if (auto i = pb_index(entry.path(), prefix)) files.emplace_back(*i, entry.path());
  std::sort(files.begin(), files.end());
  std::vector<onnx::TensorProto> protos;
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].first != static_cast<int>(i))
      throw UserError(fmt::format("{}: {}{}.pb is missing", set_dir.string(), prefix, i));
    protos.push_back(frontend::read_tensor_proto_file(files[i].second.string()));
  }
  return protos;
}

// The model's real inputs (graph inputs that are not initializers), in order.
std::vector<const onnx::ValueInfoProto*> model_inputs(const onnx::ModelProto& model) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer())
    initializers.insert(t.name());
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const onnx::ValueInfoProto& vi : model.graph().input())
    if (!initializers.count(vi.name())) inputs.push_back(&vi);
  return inputs;
}

std::vector<DataSet> read_data_sets(const fs::path& test_dir, const onnx::ModelProto& model) {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(test_dir))
    if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_"))
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<const onnx::ValueInfoProto*> inputs = model_inputs(model);
  std::vector<DataSet> sets;
  for (const fs::path& dir : dirs) {
    DataSet set;
    set.name = dir.filename().string();
    std::vector<onnx::TensorProto> protos = read_protos(dir, "input_");
    if (protos.size() != inputs.size())
      throw UserError(fmt::format("{} has {} input file(s), the model {} input(s)", set.name,
                                  protos.size(), inputs.size()));
    // By position, as the ONNX runner feeds them (the names inside the
    // files need not match the model's).
    for (size_t i = 0; i < protos.size(); ++i)
      set.inputs[inputs[i]->name()] = std::move(protos[i]);
    set.outputs = read_protos(dir, "output_");
    sets.push_back(std::move(set));
  }
  return sets;
}

// ONNX test data stores bfloat16 tensors as UINT16 bit patterns (NumPy has
// no bfloat16); where a bf16 tensor is expected, read them as such.
HostTensor to_tensor(const onnx::TensorProto& proto, DType want, const std::string& source) {
  if (want == DType::bf16 && proto.data_type() == onnx::TensorProto::UINT16) {
    onnx::TensorProto bf16 = proto;
    bf16.set_data_type(onnx::TensorProto::BFLOAT16);
    return frontend::tensor_from_proto(bf16, source);
  }
  return frontend::tensor_from_proto(proto, source);
}

// Inputs that may be frozen: tensors of rank <= 1 (axes, shapes, pads,
// repeats, Resize's scales and roi, Range's bounds, ...). Only those an
// import error names are frozen: the importer names an input only when it
// needs its values at compile time.
bool freezable(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type()) return false;
  const auto& tt = vi.type().tensor_type();
  return tt.has_shape() && tt.shape().dim_size() <= 1;
}

// The freezable inputs not frozen yet; only those an import error quotes by
// name unless `all`.
std::vector<std::string> inputs_to_freeze(const onnx::ModelProto& model, const std::string& error,
                                          const std::set<std::string>& frozen, bool all) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto* vi : model_inputs(model))
    if (!frozen.count(vi->name()) && freezable(*vi) &&
        (all || error.find("'" + vi->name() + "'") != std::string::npos))
      names.push_back(vi->name());
  return names;
}

// The model with the `frozen` inputs turned into initializers of the data
// set's values, serialized.
std::string frozen_model_bytes(const onnx::ModelProto& model, const DataSet& set,
                               const std::set<std::string>& frozen) {
  onnx::ModelProto copy = model;
  auto* inputs = copy.mutable_graph()->mutable_input();
  inputs->erase(
      std::remove_if(inputs->begin(), inputs->end(),
                     [&](const onnx::ValueInfoProto& vi) { return frozen.count(vi.name()) > 0; }),
      inputs->end());
  for (const std::string& name : frozen) {
    onnx::TensorProto* init = copy.mutable_graph()->add_initializer();
    *init = set.inputs.at(name);
    init->set_name(name);
  }
  std::string bytes;
  AF_CHECK(copy.SerializeToString(&bytes), "cannot serialize a model with frozen inputs");
  return bytes;
}

std::string index_string(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

// Runs one data set; returns an empty string on success, else what differs.
std::string run_data_set(runtime::Executable& exe, const LoadedGraph& loaded, const DataSet& set) {
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < loaded.input_names.size(); ++i) {
    const std::string& name = loaded.input_names[i];
    auto it = set.inputs.find(name);
    if (it == set.inputs.end())
      return fmt::format("{}: no data for model input '{}'", set.name, name);
    DType want = loaded.graph->value(loaded.graph->inputs()[i]).type.dtype;
    inputs.push_back(to_tensor(it->second, want, fmt::format("{}/input '{}'", set.name, name)));
  }
  std::vector<HostTensor> outputs = exe.run(inputs);
  if (outputs.size() != set.outputs.size())
    return fmt::format("the model gives {} output(s), {} expects {}", outputs.size(), set.name,
                       set.outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HostTensor& got = outputs[i];
    const std::string& name = loaded.output_names[i];
    HostTensor want =
        to_tensor(set.outputs[i], got.dtype(), fmt::format("{}/output_{}.pb", set.name, i));
    if (got.dtype() != want.dtype() || got.shape() != want.shape())
      return fmt::format("{}: output '{}' is {}, expected {}", set.name, name, got.type_string(),
                         want.type_string());
    Comparison c;
    if (got.dtype() == DType::bf16 && set.outputs[i].data_type() == onnx::TensorProto::UINT16) {
      // The ONNX runner compares bf16 outputs as these uint16 bit patterns
      // (with its rtol), which accepts the one-ulp differences between its
      // data, made by truncation, and round-to-nearest-even casts. Same here.
      HostTensor got_bits(DType::f64, got.shape()), want_bits(DType::f64, want.shape());
      for (int64_t k = 0; k < got.numel(); ++k) {
        got_bits.set_f64(k, got.data_as<uint16_t>()[k]);
        want_bits.set_f64(k, want.data_as<uint16_t>()[k]);
      }
      c = compare(got_bits, want_bits, kFloatTolerance);
    } else {
      c = compare(got, want, is_float(want.dtype()) ? kFloatTolerance : Tolerance{});
    }
    if (!c.ok())
      return fmt::format(
          "{}: output '{}' {}: {} of {} element(s) differ; first at {}: got {}, expected {} "
          "(max abs err {:.3g}, max rel err {:.3g})",
          set.name, name, want.type_string(), c.mismatches, want.numel(),
          index_string(want.shape(), c.first_mismatch), got.get_f64(c.first_mismatch),
          want.get_f64(c.first_mismatch), c.max_abs_err, c.max_rel_err);
  }
  return {};
}

LoadedGraph import_model(const std::string& bytes, const std::string& source) {
  frontend::OnnxModel model = frontend::import_onnx_bytes(bytes, source);
  LoadedGraph loaded;
  loaded.graph = std::move(model.graph);
  loaded.input_names = std::move(model.input_names);
  loaded.output_names = std::move(model.output_names);
  loaded.from_onnx = true;
  return loaded;
}

/// Node tests whose expected outputs contradict their operator's doc (the
/// ONNX reference implementation that generated them has a known bug): a
/// mismatch there is reported as a skip with the reason, a match as a pass.
std::optional<std::string_view> expected_data_erratum(const std::string& test) {
  static constexpr std::string_view kWraps =
      "the expected data wraps results beyond int8 where the QLinearMatMul doc saturates, as "
      "autofuse and ONNX Runtime do (onnx/onnx#6169)";
  static const std::map<std::string, std::string_view, std::less<>> kErrata = {
      {"test_qlinearmatmul_2D_int8_float16", kWraps},
      {"test_qlinearmatmul_2D_int8_float32", kWraps},
      {"test_qlinearmatmul_3D_int8_float16", kWraps},
      {"test_qlinearmatmul_3D_int8_float32", kWraps},
  };
  const auto it = kErrata.find(test);
  if (it == kErrata.end()) return std::nullopt;
  return it->second;
}

}  // namespace

void run_node_test(const fs::path& test_dir, const onnx::ModelProto& model,
                   const std::string& model_bytes, NodeTestResult& result) {
  const std::string source = "model.onnx";  // the report names the test
  std::vector<DataSet> sets = read_data_sets(test_dir, model);
  if (sets.empty()) {
    result.status = TestStatus::failed;
    result.detail = "no test_data_set_* folder";
    return;
  }
  // Import, freezing the inputs the importer's errors quote by name; when an
  // error quotes none (the value it needs is computed from inputs) and is not
  // an UnsupportedError, all freezable inputs at once, as a last try. An
  // UnsupportedError that quotes no input to freeze is the importer's
  // explicit "autofuse does not do this": a skip. Any other rejection of a
  // conformance model is our bug: a failure.
  struct ImportError {
    std::string message;
    bool unsupported = false;
  };
  std::set<std::string> frozen;
  std::string bytes = model_bytes;
  LoadedGraph loaded;
  // The error, and what was frozen, before the last try.
  std::optional<std::pair<ImportError, std::set<std::string>>> before_last_try;
  while (true) {
    std::optional<ImportError> error;
    try {
      loaded = import_model(bytes, source);
      break;
    } catch (const UnsupportedError& e) {
      error = ImportError{e.what(), true};
    } catch (const UserError& e) {
      error = ImportError{e.what(), false};
    }
    std::vector<std::string> more = inputs_to_freeze(model, error->message, frozen, false);
    if (more.empty() && !before_last_try && !error->unsupported) {
      more = inputs_to_freeze(model, error->message, frozen, true);
      if (!more.empty()) before_last_try.emplace(*error, frozen);
    }
    if (more.empty()) {
      // A last try that ended in another rejection did not help: report the
      // error from before it. One that reached a decision did.
      if (before_last_try && !error->unsupported) {
        error = before_last_try->first;
        frozen = before_last_try->second;
      }
      result.status = error->unsupported ? TestStatus::skipped : TestStatus::failed;
      result.detail = fmt::format("import: {}", error->message);
      result.frozen_inputs.assign(frozen.begin(), frozen.end());
      return;
    }
    frozen.insert(more.begin(), more.end());
    bytes = frozen_model_bytes(model, sets[0], frozen);
  }
  result.frozen_inputs.assign(frozen.begin(), frozen.end());
  std::unique_ptr<runtime::Executable> exe =
      runtime::Executable::build(loaded.graph, compile_options(true));
  for (size_t i = 0; i < sets.size(); ++i) {
    if (!frozen.empty() && i > 0) {
      // Frozen values may differ between data sets: a model per set (the JIT
      // cache makes identical kernels free).
      std::string next = frozen_model_bytes(model, sets[i], frozen);
      if (next != bytes) {
        bytes = std::move(next);
        loaded = import_model(bytes, source);
        exe = runtime::Executable::build(loaded.graph, compile_options(true));
      }
    }
    std::string problem = run_data_set(*exe, loaded, sets[i]);
    ++result.data_sets;
    if (!problem.empty()) {
      const std::optional<std::string_view> erratum =
          expected_data_erratum(test_dir.filename().string());
      result.status = erratum ? TestStatus::skipped : TestStatus::failed;
      result.detail = erratum ? fmt::format("{} ({})", *erratum, problem) : std::move(problem);
      return;
    }
  }
  result.status = TestStatus::passed;
}

}  // namespace autofuse::tools
