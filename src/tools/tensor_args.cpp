#include "tools/tensor_args.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autofuse/error.h"
#include "autofuse/frontend/tensor_io.h"
#include "autofuse/ref/interpreter.h"

namespace autofuse::tools {

namespace {

const TensorType& input_type(const LoadedGraph& loaded, size_t i) {
  return loaded.graph->value(loaded.graph->inputs()[i]).type;
}

// Which input an argument names: the longest prefix before an '=' that is
// an input name (ONNX names may themselves contain '=').
std::pair<size_t, std::string> split_input_arg(const LoadedGraph& loaded, const std::string& arg) {
  std::optional<std::pair<size_t, std::string>> match;
  for (size_t eq = arg.find('='); eq != std::string::npos; eq = arg.find('=', eq + 1)) {
    auto it = std::find(loaded.input_names.begin(), loaded.input_names.end(), arg.substr(0, eq));
    if (it != loaded.input_names.end())
      match = {static_cast<size_t>(it - loaded.input_names.begin()), arg.substr(eq + 1)};
  }
  if (match) return *match;
  if (arg.find('=') == std::string::npos)
    throw UserError(fmt::format("--input '{}': expected NAME=FILE", arg));
  throw UserError(fmt::format("--input '{}': the model has no input '{}' (its inputs: {})", arg,
                              arg.substr(0, arg.find('=')), fmt::join(loaded.input_names, ", ")));
}

// Dtype, rank and constant dims: what the declared type fixes by itself.
void check_declared_type(const LoadedGraph& loaded, size_t i, const HostTensor& t,
                         const std::string& file) {
  const TensorType& type = input_type(loaded, i);
  auto mismatch = [&](const std::string& what) {
    return UserError(fmt::format("--input {} ({}): {}; expected {}, got {}", loaded.input_names[i],
                                 file, what, type.to_string(), t.type_string()));
  };
  if (t.dtype() != type.dtype) throw mismatch("wrong dtype");
  if (t.rank() != type.rank()) throw mismatch("wrong rank");
  for (int d = 0; d < type.rank(); ++d)
    if (auto c = type.shape[d].as_const(); c && *c != t.shape()[d])
      throw mismatch(fmt::format("dim {} must be {}", d, *c));
}

}  // namespace

std::vector<HostTensor> read_input_args(const LoadedGraph& loaded,
                                        const std::vector<std::string>& args) {
  const size_t n = loaded.input_names.size();
  std::vector<std::optional<HostTensor>> by_index(n);
  for (const std::string& arg : args) {
    auto [index, file] = split_input_arg(loaded, arg);
    if (by_index[index])
      throw UserError(fmt::format("--input {} is given more than once", loaded.input_names[index]));
    if (file.empty()) throw UserError(fmt::format("--input '{}': no file after '='", arg));
    HostTensor t = frontend::read_tensor_file(file);
    check_declared_type(loaded, index, t, file);
    by_index[index] = std::move(t);
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < n; ++i)
    if (!by_index[i])
      missing.push_back(
          fmt::format("{}: {}", loaded.input_names[i], input_type(loaded, i).to_string()));
  if (!missing.empty())
    throw UserError(fmt::format("with --input every model input must be given; missing {}",
                                fmt::join(missing, ", ")));
  std::vector<HostTensor> inputs;
  for (auto& t : by_index)
    inputs.push_back(std::move(*t));
  return inputs;
}

sym::Binding bind_input_shapes(const LoadedGraph& loaded, const std::vector<HostTensor>& inputs,
                               const sym::Binding& given) {
  AF_CHECK(inputs.size() == loaded.input_names.size(), "{} inputs for {} names", inputs.size(),
           loaded.input_names.size());
  sym::Binding binding = given;
  std::map<std::string, std::string> source;  // symbol -> what bound it
  for (const auto& [name, value] : given)
    source[name] = "--shape";
  // Lone-symbol dims bind first (in input order), so that composite dims can
  // then be evaluated and checked.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& type = input_type(loaded, i);
    for (int d = 0; d < type.rank(); ++d) {
      if (!type.shape[d].is_symbol()) continue;
      const std::string& symbol = type.shape[d].symbol_name();
      int64_t actual = inputs[i].shape()[d];
      auto [it, fresh] = binding.emplace(symbol, actual);
      if (fresh) {
        source[symbol] = "input " + loaded.input_names[i];
      } else if (it->second != actual) {
        throw UserError(
            fmt::format("--input {}: dim {} is {} = {} (from {}), got {}; expected {}, got {}",
                        loaded.input_names[i], d, symbol, it->second, source[symbol], actual,
                        type.to_string(), inputs[i].type_string()));
      }
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& type = input_type(loaded, i);
    for (int d = 0; d < type.rank(); ++d) {
      std::optional<int64_t> want = sym::try_evaluate(type.shape[d], binding);
      if (want && *want != inputs[i].shape()[d])
        throw UserError(fmt::format("--input {}: dim {} is {} = {}, got {}; expected {}, got {}",
                                    loaded.input_names[i], d, type.shape[d].to_string(), *want,
                                    inputs[i].shape()[d], type.to_string(),
                                    inputs[i].type_string()));
    }
  }
  // Guards and anything the loops above cannot decide.
  return bind_symbols(*loaded.graph, inputs, binding);
}

std::string file_name_for(const std::string& tensor_name) {
  std::string name = tensor_name;
  std::replace(name.begin(), name.end(), '/', '_');
  std::replace(name.begin(), name.end(), '\0', '_');
  if (name.empty() || name == "." || name == "..") name = "_" + name;
  return name;
}

std::vector<std::string> write_output_files(const std::string& dir,
                                            const std::vector<std::string>& output_names,
                                            const std::vector<HostTensor>& outputs) {
  AF_CHECK(output_names.size() == outputs.size(), "{} names for {} outputs", output_names.size(),
           outputs.size());
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw UserError(
        fmt::format("--output-dir {}: cannot create the folder: {}", dir, ec.message()));
  std::set<std::string> used;
  std::vector<std::string> notes;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string file = file_name_for(output_names[i]) + ".npy";
    if (!used.insert(file).second)
      throw UserError(fmt::format(
          "--output-dir: outputs '{}' and another output map to the same file name '{}'",
          output_names[i], file));
    std::string path = (std::filesystem::path(dir) / file).string();
    if (outputs[i].dtype() == DType::bf16) {
      HostTensor wide(DType::f32, outputs[i].shape());
      for (int64_t k = 0; k < wide.numel(); ++k)
        wide.set_f64(k, outputs[i].get_f64(k));  // exact: bf16 is a truncated f32
      frontend::write_npy(path, wide);
      notes.push_back(fmt::format("output {} is bf16; {} holds it as f32 (exact; .npy has no bf16)",
                                  output_names[i], path));
    } else {
      frontend::write_npy(path, outputs[i]);
    }
  }
  return notes;
}

}  // namespace autofuse::tools
