// The ONNX importer: checks the model (IR version, opsets, supported ops),
// declares inputs with symbolic dims, turns initializers into constants,
// converts the nodes in their (required) topological order through the
// converter table, and checks the declared types against what inference
// computed.
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include "autofuse/frontend/onnx_import.h"
#include "frontend/io/tensor_proto.h"
#include "frontend/onnx/import_state.h"
#include "frontend/onnx/opset_versions.h"

namespace autofuse::frontend {

using namespace onnx_import;  // NOLINT(google-build-using-namespace): the importer's own parts

namespace {

/// How many node names an error listing ops names per op type.
constexpr size_t kNodesPerListedOp = 3;

ConverterTable build_converter_table() {
  ConverterTable table;
  auto add = [&](void (*register_ops)(ConverterTable&), const char* file) {
    ConverterTable part;
    register_ops(part);
    for (const auto& [op, fn] : part)
      AF_CHECK(table.emplace(op, fn).second, "ONNX op {} is registered twice (again in {})", op,
               file);
  };
  add(register_elementwise_ops, "convert_elementwise.cpp");
  add(register_shape_ops, "convert_shape.cpp");
  add(register_reduce_ops, "convert_reduce.cpp");
  add(register_composite_ops, "convert_composite.cpp");
  add(register_library_ops, "convert_library.cpp");
  add(register_index_ops, "convert_index.cpp");
  add(register_loss_ops, "convert_loss.cpp");
  add(register_math_ops, "convert_math.cpp");
  add(register_quantize_ops, "convert_quantize.cpp");
  add(register_pool_ops, "convert_pool.cpp");
  add(register_conv_ops, "convert_conv.cpp");
  add(register_resize_ops, "convert_resize.cpp");
  add(register_einsum_ops, "convert_einsum.cpp");
  add(register_sample_ops, "convert_sample.cpp");
  return table;
}

/// Built once; immutable afterwards.
const ConverterTable& converter_table() {
  static const ConverterTable table = build_converter_table();
  return table;
}

SourceLocation file_location(const std::string& file) {
  SourceLocation loc;
  loc.file = file;
  return loc;
}

bool is_default_domain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

std::string sanitize_identifier(const std::string& text, const char* fallback) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  if (out.empty()) return fallback;
  if (out[0] >= '0' && out[0] <= '9') out = "_" + out;
  return out;
}

/// dim_param names -> symbols (sanitized, unique), and fresh symbols for
/// dims with neither a value nor a name.
class SymbolTable {
 public:
  sym::Expr param(const std::string& name) {
    auto it = by_param_.find(name);
    if (it != by_param_.end()) return sym::Expr::symbol(it->second);
    const std::string symbol = unique(sanitize_identifier(name, "dim"));
    by_param_.emplace(name, symbol);
    return sym::Expr::symbol(symbol);
  }
  sym::Expr fresh(const std::string& input, int dim) {
    return sym::Expr::symbol(unique(sanitize_identifier(fmt::format("{}_dim{}", input, dim), "d")));
  }
  std::optional<sym::Expr> lookup(const std::string& name) const {
    auto it = by_param_.find(name);
    if (it == by_param_.end()) return std::nullopt;
    return sym::Expr::symbol(it->second);
  }

 private:
  std::string unique(const std::string& base) {
    std::string name = base;
    for (int k = 2; used_.count(name); ++k)
      name = fmt::format("{}_{}", base, k);
    used_.insert(name);
    return name;
  }
  std::map<std::string, std::string> by_param_;
  std::set<std::string> used_;
};

/// "f32[batch, 3, ?]" for a declared type.
std::string declared_text(const onnx::TypeProto::Tensor& t) {
  const std::optional<DType> dtype = dtype_from_onnx(t.elem_type());
  std::string out = dtype ? std::string(dtype_name(*dtype)) : onnx_type_name(t.elem_type());
  if (!t.has_shape()) return out + "[?...]";
  out += "[";
  for (int i = 0; i < t.shape().dim_size(); ++i) {
    const auto& d = t.shape().dim(i);
    if (i > 0) out += ", ";
    out += d.has_dim_value() ? std::to_string(d.dim_value())
                             : (d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?");
  }
  return out + "]";
}

/// UserError when a declared type contradicts the actual one: another dtype,
/// rank, or a dim proven different. Unnamed/unknown declared dims match
/// anything; a declared name only constrains when it is an input symbol.
void check_declared(const onnx::ValueInfoProto& vi, DType dtype, const Shape& shape,
                    const std::string& what, const std::string& actual_what,
                    const SymbolTable& symbols, const sym::ShapeEnv& env,
                    const SourceLocation& where) {
  if (!vi.type().has_tensor_type()) return;
  const onnx::TypeProto::Tensor& t = vi.type().tensor_type();
  const TensorType actual{dtype, shape};
  auto mismatch = [&] {
    throw UserError(where, fmt::format("{} is declared {} but {} {}", what, declared_text(t),
                                       actual_what, actual.to_string()));
  };
  if (t.elem_type() != onnx::TensorProto::UNDEFINED) {
    const std::optional<DType> declared = dtype_from_onnx(t.elem_type());
    if (!declared || *declared != dtype) mismatch();
  }
  if (!t.has_shape()) return;
  if (t.shape().dim_size() != static_cast<int>(shape.size())) mismatch();
  for (int i = 0; i < t.shape().dim_size(); ++i) {
    const auto& d = t.shape().dim(i);
    const sym::Expr have = env.canonicalize(shape[i]);
    std::optional<sym::Expr> want;
    if (d.has_dim_value())
      want = sym::Expr(d.dim_value());
    else if (d.has_dim_param())
      want = symbols.lookup(d.dim_param());
    if (want && env.proven(have, sym::Rel::Ne, env.canonicalize(*want))) mismatch();
  }
}

/// "A (nodes: a, b), B (nodes: c and 2 more)".
std::string list_ops(const std::map<std::string, std::vector<std::string>>& nodes_by_op) {
  std::string out;
  for (const auto& [op, nodes] : nodes_by_op) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} (nodes: ", op);
    for (size_t i = 0; i < nodes.size() && i < kNodesPerListedOp; ++i)
      out += (i > 0 ? ", " : "") + nodes[i];
    if (nodes.size() > kNodesPerListedOp)
      out += fmt::format(" and {} more", nodes.size() - kNodesPerListedOp);
    out += ")";
  }
  return out;
}

/// Every node whose op no converter handles, listed by op type.
void check_supported_ops(const onnx::GraphProto& graph, const SourceLocation& where) {
  std::map<std::string, std::vector<std::string>> unsupported;
  const ConverterTable& table = converter_table();
  for (int k = 0; k < graph.node_size(); ++k) {
    const onnx::NodeProto& node = graph.node(k);
    std::string op = node.op_type();
    if (!is_default_domain(node.domain()))
      op = fmt::format("{}.{}", node.domain(), node.op_type());
    else if (table.count(op))
      continue;
    unsupported[op].push_back(NodeContextImpl::label(node, k));
  }
  if (unsupported.empty()) return;
  throw UnsupportedError(where, "unsupported ONNX ops: " + list_ops(unsupported));
}

/// The opset of the default domain. Other domains may be imported as long
/// as no node uses them (check_supported_ops rejects those nodes).
int64_t default_opset(const onnx::ModelProto& model, const std::string& source) {
  std::optional<int64_t> opset;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (!is_default_domain(id.domain())) continue;
    if (opset && *opset != id.version())
      throw UserError(file_location(source),
                      fmt::format("the default ONNX domain is imported twice, as opsets {} and {}",
                                  *opset, id.version()));
    opset = id.version();
  }
  if (!opset)
    throw UserError(fmt::format(
        "not a valid ONNX model: {} (it imports no opset of the default domain; truncated?)",
        source));
  if (*opset < 1 || *opset > kMaxOpset)
    throw UnsupportedError(
        file_location(source),
        fmt::format("opset {} of the default ONNX domain is not supported (autofuse "
                    "reads opsets {} to {})",
                    *opset, kMinOpset, kMaxOpset));
  return *opset;
}

/// A model of an opset before 13 means what opset 13 means when every op it
/// uses has the same version in both (Xor-7 is Xor at opset 13) or an older
/// version the reviewed table says means the same (Div-7); Squeeze-11 does
/// not. The versions come from libonnx's schema registry, which knows every
/// opset up to 13. UnsupportedError listing the ops that changed.
void check_old_opset_ops(const onnx::GraphProto& graph, int64_t opset,
                         const SourceLocation& where) {
  std::map<std::string, std::vector<std::string>> changed;
  for (int k = 0; k < graph.node_size(); ++k) {
    const onnx::NodeProto& node = graph.node(k);
    if (!is_default_domain(node.domain())) continue;
    const auto* then = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset));
    const auto* now = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(kMinOpset));
    if (then && now &&
        old_version_matches(node.op_type(), then->since_version(), now->since_version()))
      continue;
    const std::string op =
        then ? fmt::format("{}-{}", node.op_type(), then->since_version()) : node.op_type();
    changed[op].push_back(NodeContextImpl::label(node, k));
  }
  if (changed.empty()) return;
  throw UnsupportedError(
      where, fmt::format("the model's opset {} is older than {}, and these ops it uses have "
                         "changed since (autofuse reads opsets {} to {}, and older op versions "
                         "that mean the same): {}",
                         opset, kMinOpset, kMinOpset, kMaxOpset, list_ops(changed)));
}

/// Opset 22 gave some ops a new version; the converters implement those
/// whose new version only added types. UnsupportedError listing the others.
/// (libonnx's registry may predate opset 22: opset_versions.cpp holds the
/// list.)
void check_opset22_ops(const onnx::GraphProto& graph, const SourceLocation& where) {
  std::map<std::string, std::vector<std::string>> changed;
  for (int k = 0; k < graph.node_size(); ++k) {
    const onnx::NodeProto& node = graph.node(k);
    if (!is_default_domain(node.domain())) continue;
    if (std::optional<std::string> version = unreviewed_opset22_version(node.op_type()))
      changed[*version].push_back(NodeContextImpl::label(node, k));
  }
  if (changed.empty()) return;
  throw UnsupportedError(where, fmt::format("opset 22 changed these ops the model uses, and "
                                            "autofuse implements their opset-21 versions: {}",
                                            list_ops(changed)));
}

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string source, int64_t opset,
           const OnnxImportOptions& options)
      : graph_(model.graph()),
        options_(options),
        where_(file_location(source)),
        // An older model passed check_old_opset_ops: it means opset 13.
        state_(source, sanitize_identifier(graph_.name(), "main"), std::max(opset, kMinOpset)),
        opset_(opset) {}

  OnnxModel run() {
    OnnxModel out;
    out.opset = opset_;
    for (const onnx::ValueInfoProto& vi : graph_.value_info())
      value_info_.emplace(vi.name(), &vi);
    add_initializers();
    add_inputs(out.input_names);
    for (int k = 0; k < graph_.node_size(); ++k)
      convert_node(graph_.node(k), k);
    std::vector<Tensor> outputs = collect_outputs(out.output_names);
    out.graph = std::make_shared<const Graph>(std::move(state_.builder()).build(outputs));
    return out;
  }

 private:
  void add_initializers() {
    if (graph_.sparse_initializer_size() > 0)
      throw UnsupportedError(where_, fmt::format("sparse initializer '{}' is not supported",
                                                 graph_.sparse_initializer(0).values().name()));
    for (const onnx::TensorProto& init : graph_.initializer()) {
      HostTensor t;
      try {
        t = tensor_from_proto(init, where_.file);
      } catch (const UserError& e) {
        rethrow_at(e, where_, fmt::format("initializer '{}': {}", init.name(), e.message()));
      }
      OnnxValue v;
      v.dtype = t.dtype();
      v.shape.assign(t.shape().begin(), t.shape().end());
      v.constant = std::make_shared<const HostTensor>(std::move(t));
      try {
        state_.define(init.name(), std::move(v));
      } catch (const UserError& e) {
        rethrow_at(e, where_, e.message());
      }
    }
  }

  void add_inputs(std::vector<std::string>& names) {
    std::set<std::string> inputs;
    for (const onnx::ValueInfoProto& vi : graph_.input())
      inputs.insert(vi.name());
    for (const auto& [name, value] : options_.constant_inputs) {
      if (!inputs.count(name))
        throw UserError(where_,
                        fmt::format("constant input '{}' is not an input of the model", name));
      if (state_.find(name))
        throw UserError(where_, fmt::format("input '{}' has an initializer; it cannot also be "
                                            "given as a constant input",
                                            name));
    }
    for (const onnx::ValueInfoProto& vi : graph_.input()) {
      if (auto it = options_.constant_inputs.find(vi.name());
          it != options_.constant_inputs.end()) {
        OnnxValue v;
        v.dtype = it->second.dtype();
        v.shape.assign(it->second.shape().begin(), it->second.shape().end());
        check_declared(vi, v.dtype, v.shape, fmt::format("input '{}'", vi.name()),
                       "its constant value is", symbols_, state_.builder().graph().shape_env(),
                       where_);
        v.constant = std::make_shared<const HostTensor>(it->second);
        state_.define(vi.name(), std::move(v));
        continue;
      }
      if (const OnnxValue* init = state_.find(vi.name())) {
        // An input with an initializer is a constant here (its default).
        check_declared(vi, init->dtype, init->shape, fmt::format("input '{}'", vi.name()),
                       "its initializer is", symbols_, state_.builder().graph().shape_env(),
                       where_);
        continue;
      }
      const TensorType type = input_type(vi);
      OnnxValue v;
      v.dtype = type.dtype;
      v.shape = type.shape;
      v.tensor = state_.builder().input(state_.unique_name(vi.name()), type.dtype, type.shape);
      state_.define(vi.name(), std::move(v));
      names.push_back(vi.name());
    }
  }

  TensorType input_type(const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type())
      throw UnsupportedError(where_, fmt::format("input '{}' is not a tensor (sequence, map and "
                                                 "optional types are not supported)",
                                                 vi.name()));
    const onnx::TypeProto::Tensor& t = vi.type().tensor_type();
    const std::optional<DType> dtype = dtype_from_onnx(t.elem_type());
    if (!dtype)
      throw UnsupportedError(where_, fmt::format("input '{}' has unsupported ONNX dtype {}",
                                                 vi.name(), onnx_type_name(t.elem_type())));
    if (!t.has_shape())
      throw UnsupportedError(
          where_,
          fmt::format("input '{}' declares no shape; autofuse needs at least its rank", vi.name()));
    TensorType type{*dtype, {}};
    for (int i = 0; i < t.shape().dim_size(); ++i) {
      const auto& d = t.shape().dim(i);
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          throw UserError(where_, fmt::format("input '{}' dim {} is negative: {}", vi.name(), i,
                                              d.dim_value()));
        type.shape.emplace_back(d.dim_value());
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        type.shape.push_back(symbols_.param(d.dim_param()));
      } else {
        type.shape.push_back(symbols_.fresh(vi.name(), i));
      }
    }
    return type;
  }

  void convert_node(const onnx::NodeProto& node, int index) {
    NodeContextImpl ctx(state_, node, index);
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty()) continue;
      const OnnxValue* v = state_.find(node.input(i));
      if (!v)
        ctx.fail(
            fmt::format("input '{}' is not defined before this node (ONNX requires "
                        "topological order)",
                        node.input(i)));
    }
    const ConvertFn convert = converter_table().find(node.op_type())->second;
    try {
      convert(ctx);
    } catch (const UserError& e) {
      const SourceLocation& w = e.where();
      const SourceLocation here = ctx.location();
      if (w.file == here.file && w.node == here.node && w.op == here.op) throw;
      // A graph or shape error: name the ONNX node, keep the inner location.
      rethrow_at(e, here, w.to_string().empty() ? e.message() : std::string(e.what()));
    }
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty() || ctx.output_set(i)) continue;
      OnnxValue v;
      v.unavailable =
          fmt::format("output {} ('{}') of node '{}' ({}) is not supported", i, node.output(i),
                      NodeContextImpl::label(node, index), node.op_type());
      try {
        state_.define(node.output(i), std::move(v));
      } catch (const UserError& e) {
        ctx.fail(e.message());
      }
    }
    for (int i = 0; i < node.output_size(); ++i)
      check_value_info(node.output(i), ctx.location());
  }

  void check_value_info(const std::string& name, const SourceLocation& where) {
    auto it = value_info_.find(name);
    if (name.empty() || it == value_info_.end()) return;
    const OnnxValue* v = state_.find(name);
    if (!v || !v->unavailable.empty()) return;
    check_declared(*it->second, v->dtype, v->shape, fmt::format("value '{}'", name), "computes to",
                   symbols_, state_.builder().graph().shape_env(), where);
  }

  std::vector<Tensor> collect_outputs(std::vector<std::string>& names) {
    std::vector<Tensor> outputs;
    std::set<ValueId> seen;
    for (const onnx::ValueInfoProto& vi : graph_.output()) {
      OnnxValue* v = state_.find(vi.name());
      if (!v)
        throw UserError(where_, fmt::format("graph output '{}' is not defined by any node, input "
                                            "or initializer",
                                            vi.name()));
      if (!v->unavailable.empty())
        throw UnsupportedError(where_,
                               fmt::format("graph output '{}': {}", vi.name(), v->unavailable));
      check_declared(vi, v->dtype, v->shape, fmt::format("graph output '{}'", vi.name()),
                     "computes to", symbols_, state_.builder().graph().shape_env(), where_);
      Tensor t;
      try {
        t = state_.materialize(vi.name(), *v);
        // A graph output is listed once; a second output of the same value
        // (e.g. through Identity) gets its own copy.
        if (!seen.insert(t.id).second)
          t = state_.builder().reshape(t, t.shape(), state_.unique_name(vi.name()));
      } catch (const UserError& e) {
        rethrow_at(e, where_, fmt::format("graph output '{}': {}", vi.name(), e.what()));
      }
      seen.insert(t.id);
      outputs.push_back(t);
      names.push_back(vi.name());
    }
    return outputs;
  }

  const onnx::GraphProto& graph_;
  const OnnxImportOptions& options_;
  SourceLocation where_;
  ImportState state_;
  int64_t opset_;
  SymbolTable symbols_;
  std::map<std::string, const onnx::ValueInfoProto*> value_info_;
};

}  // namespace

OnnxModel import_onnx_bytes(std::string_view bytes, const std::string& source_name) {
  return import_onnx_bytes(bytes, source_name, OnnxImportOptions{});
}

OnnxModel import_onnx_bytes(std::string_view bytes, const std::string& source_name,
                            const OnnxImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw UnsupportedError(fmt::format(
        "{}: the model is larger than 2 GiB; models with external data are not supported",
        source_name));
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw UserError(
        fmt::format("not a valid ONNX model: {} (protobuf parsing failed)", source_name));
  if (model.ir_version() <= 0)
    throw UserError(fmt::format("not a valid ONNX model: {} (ir_version is missing)", source_name));
  if (model.ir_version() < 3)
    throw UnsupportedError(
        file_location(source_name),
        fmt::format("ONNX IR version {} is too old (autofuse reads IR 3 and later)",
                    model.ir_version()));
  if (!model.has_graph())
    throw UserError(
        fmt::format("not a valid ONNX model: {} (it has no graph; truncated?)", source_name));
  const int64_t opset = default_opset(model, source_name);
  check_supported_ops(model.graph(), file_location(source_name));
  if (opset < kMinOpset) check_old_opset_ops(model.graph(), opset, file_location(source_name));
  if (opset >= 22) check_opset22_ops(model.graph(), file_location(source_name));
  return Importer(model, source_name, opset, options).run();
}

OnnxModel import_onnx_file(const std::string& path) {
  return import_onnx_file(path, OnnxImportOptions{});
}

OnnxModel import_onnx_file(const std::string& path, const OnnxImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("cannot open ONNX model '{}'", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw UserError(fmt::format("cannot read ONNX model '{}'", path));
  const std::string bytes = buffer.str();
  return import_onnx_bytes(bytes, path, options);
}

std::vector<std::string> supported_onnx_ops() {
  std::vector<std::string> ops;
  for (const auto& [op, fn] : converter_table())
    ops.push_back(op);
  return ops;
}

}  // namespace autofuse::frontend
