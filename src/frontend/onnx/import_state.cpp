// The importer's value table and the NodeContext converters read nodes
// through.
#include "frontend/onnx/import_state.h"

#include <fmt/format.h>

#include "frontend/io/tensor_proto.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

/// Integer constants longer than this stay tensors only: known values are
/// meant for shape-sized lists, not data.
constexpr int64_t kMaxKnownElements = 4096;

std::string sanitize(std::string_view hint) {
  std::string out;
  for (char c : hint) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "v_" + out;
  // GraphBuilder names unnamed values v0, v1, ...; a name reserved here but
  // not yet used must never be one of those.
  if (out.size() > 1 && out[0] == 'v' &&
      out.find_first_not_of("0123456789", 1) == std::string::npos)
    out += "_";
  return out;
}

}  // namespace

ImportState::ImportState(std::string source, const std::string& graph_name, int64_t opset)
    : source_(std::move(source)), opset_(opset), builder_(graph_name) {}

std::string ImportState::unique_name(std::string_view hint) {
  const std::string base = sanitize(hint);
  std::string name = base;
  for (int k = 2; used_names_.count(name) || builder_.graph().find_value(name); ++k)
    name = fmt::format("{}_{}", base, k);
  used_names_.insert(name);
  return name;
}

OnnxValue* ImportState::find(const std::string& name) {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

OnnxValue& ImportState::define(const std::string& name, OnnxValue value) {
  auto [it, inserted] = values_.emplace(name, std::move(value));
  if (!inserted)
    throw UserError(
        fmt::format("value '{}' is defined twice (ONNX graphs assign each name once)", name));
  return it->second;
}

std::optional<std::vector<sym::Expr>> ImportState::known_ints(const OnnxValue& value) {
  if (value.known) return value.known;
  if (!value.constant || is_float(value.dtype) || value.constant->rank() > 1 ||
      value.constant->numel() > kMaxKnownElements)
    return std::nullopt;
  std::vector<sym::Expr> out;
  for (int64_t i = 0; i < value.constant->numel(); ++i)
    out.emplace_back(value.constant->get_i64(i));
  return out;
}

std::optional<HostTensor> ImportState::constant_of(const OnnxValue& value) {
  if (value.constant) return *value.constant;
  if (!value.known) return std::nullopt;
  const std::vector<sym::Expr>& elems = *value.known;
  std::vector<int64_t> shape;
  if (!value.shape.empty()) shape.push_back(static_cast<int64_t>(elems.size()));
  HostTensor out(value.dtype, shape);
  for (size_t i = 0; i < elems.size(); ++i) {
    const std::optional<int64_t> c = elems[i].as_const();
    if (!c) return std::nullopt;
    out.set_i64(static_cast<int64_t>(i), *c);
  }
  return out;
}

Tensor ImportState::materialize(const std::string& name, OnnxValue& value) {
  if (value.tensor) return *value.tensor;
  AF_CHECK(value.constant || value.known, "value '{}' has no contents", name);
  std::optional<HostTensor> contents = constant_of(value);
  if (!contents) {
    value.tensor = materialize_known(name, value);
    return *value.tensor;
  }
  ConstantAttrs attrs{contents->dtype(), contents->shape(), {}};
  const int64_t n = contents->numel();
  bool splat = n > 1;
  for (int64_t i = 0; i < n; ++i) {
    const double v = contents->get_f64(i);
    attrs.values.push_back(v);
    // Bitwise-equal comparison would treat NaN payloads as different; any
    // NaN splat is fine.
    if (i > 0 && !(v == attrs.values[0] || (v != v && attrs.values[0] != attrs.values[0])))
      splat = false;
  }
  if (!is_float(attrs.dtype))
    for (int64_t i = 0; i < n; ++i) {
      // Integers beyond 2^53 do not survive the trip through a double.
      const int64_t v = contents->get_i64(i);
      if (v > (int64_t{1} << 53) || v < -(int64_t{1} << 53))
        throw UserError(fmt::format(
            "constant '{}' holds {}, which is beyond what a graph constant can hold (|v| <= 2^53)",
            name, v));
    }
  if (splat) attrs.values.resize(1);
  value.tensor = builder_.constant(std::move(attrs), unique_name(name));
  return *value.tensor;
}

Tensor ImportState::materialize_known(const std::string& name, const OnnxValue& value) {
  // A symbolic size used as data stays symbolic (no specialization to a
  // hint); see size_tensor.
  const std::vector<sym::Expr>& elems = *value.known;
  std::vector<Tensor> parts;
  for (const sym::Expr& e : elems) {
    if (!e.is_const() && (sym::value_range(e).lo < 0 || !is_integer(value.dtype)))
      throw UserError(
          fmt::format("the value {} of '{}' is computed from symbolic sizes and used as tensor "
                      "data; autofuse can only do that for non-negative integers",
                      e.to_string(), name));
    Tensor part = size_tensor(builder_, e, value.dtype);
    if (!value.shape.empty()) part = builder_.reshape(part, {1});
    parts.push_back(part);
  }
  if (value.shape.empty()) {
    AF_CHECK(parts.size() == 1, "scalar known value '{}' has {} elements", name, parts.size());
    return parts[0];
  }
  if (parts.empty())
    return builder_.constant(ConstantAttrs{value.dtype, {0}, {}}, unique_name(name));
  if (parts.size() == 1) return parts[0];
  return builder_.concat(parts, 0, unique_name(name));
}

void rethrow_at(const UserError& e, SourceLocation where, std::string message) {
  if (dynamic_cast<const UnsupportedError*>(&e))
    throw UnsupportedError(std::move(where), std::move(message));
  throw UserError(std::move(where), std::move(message));
}

// ---- NodeContextImpl --------------------------------------------------------

NodeContextImpl::NodeContextImpl(ImportState& state, const onnx::NodeProto& node, int index)
    : state_(state), node_(node), index_(index) {}

std::string NodeContextImpl::label(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? fmt::format("#{}", index) : node.name();
}

SourceLocation NodeContextImpl::location() const {
  SourceLocation loc;
  loc.file = state_.source();
  loc.node = label(node_, index_);
  loc.op = node_.op_type();
  return loc;
}

void NodeContextImpl::fail(const std::string& reason) const {
  throw UserError(location(), reason);
}

void NodeContextImpl::unsupported(const std::string& reason) const {
  throw UnsupportedError(location(), reason);
}

bool NodeContextImpl::has_input(int i) const {
  return i >= 0 && i < node_.input_size() && !node_.input(i).empty();
}

const OnnxValue& NodeContextImpl::value(int i) const {
  if (!has_input(i)) fail(fmt::format("input {} is required but not given", i));
  const OnnxValue* v = state_.find(node_.input(i));
  // The importer checked every input before calling the converter.
  AF_CHECK(v != nullptr, "input '{}' of node {} is undefined", node_.input(i), index_);
  // A node output no converter produces: the op does, autofuse does not.
  if (!v->unavailable.empty()) unsupported(v->unavailable);
  return *v;
}

Tensor NodeContextImpl::input(int i) {
  value(i);  // the checks
  OnnxValue* v = state_.find(node_.input(i));
  try {
    return state_.materialize(node_.input(i), *v);
  } catch (const UserError& e) {
    rethrow_at(e, location(), fmt::format("input {}: {}", i, e.message()));
  }
}

DType NodeContextImpl::input_dtype(int i) const {
  return value(i).dtype;
}

Shape NodeContextImpl::input_shape(int i) const {
  return value(i).shape;
}

std::optional<std::vector<sym::Expr>> NodeContextImpl::known_ints(int i) const {
  if (!has_input(i)) return std::nullopt;
  return ImportState::known_ints(value(i));
}

std::optional<HostTensor> NodeContextImpl::constant(int i) const {
  if (!has_input(i)) return std::nullopt;
  return ImportState::constant_of(value(i));
}

const onnx::AttributeProto* NodeContextImpl::find_attr(std::string_view name,
                                                       int expected_type) const {
  for (const onnx::AttributeProto& a : node_.attribute()) {
    if (a.name() != name) continue;
    if (a.type() != expected_type && a.type() != onnx::AttributeProto::UNDEFINED)
      fail(fmt::format("attribute '{}' has type {}, expected {}", name,
                       onnx::AttributeProto_AttributeType_Name(a.type()),
                       onnx::AttributeProto_AttributeType_Name(
                           static_cast<onnx::AttributeProto_AttributeType>(expected_type))));
    return &a;
  }
  return nullptr;
}

bool NodeContextImpl::has_attr(std::string_view name) const {
  for (const onnx::AttributeProto& a : node_.attribute())
    if (a.name() == name) return true;
  return false;
}

int64_t NodeContextImpl::attr_int(std::string_view name, std::optional<int64_t> def) const {
  if (const auto* a = find_attr(name, onnx::AttributeProto::INT)) return a->i();
  if (!def) fail(fmt::format("attribute '{}' is required", name));
  return *def;
}

float NodeContextImpl::attr_float(std::string_view name, std::optional<float> def) const {
  if (const auto* a = find_attr(name, onnx::AttributeProto::FLOAT)) return a->f();
  if (!def) fail(fmt::format("attribute '{}' is required", name));
  return *def;
}

std::vector<int64_t> NodeContextImpl::attr_ints(std::string_view name,
                                                std::optional<std::vector<int64_t>> def) const {
  if (const auto* a = find_attr(name, onnx::AttributeProto::INTS))
    return {a->ints().begin(), a->ints().end()};
  if (!def) fail(fmt::format("attribute '{}' is required", name));
  return *def;
}

std::vector<float> NodeContextImpl::attr_floats(std::string_view name,
                                                std::optional<std::vector<float>> def) const {
  if (const auto* a = find_attr(name, onnx::AttributeProto::FLOATS))
    return {a->floats().begin(), a->floats().end()};
  if (!def) fail(fmt::format("attribute '{}' is required", name));
  return *def;
}

std::string NodeContextImpl::attr_string(std::string_view name,
                                         std::optional<std::string> def) const {
  if (const auto* a = find_attr(name, onnx::AttributeProto::STRING)) return a->s();
  if (!def) fail(fmt::format("attribute '{}' is required", name));
  return *def;
}

HostTensor NodeContextImpl::attr_tensor(std::string_view name) const {
  const auto* a = find_attr(name, onnx::AttributeProto::TENSOR);
  if (!a) fail(fmt::format("attribute '{}' is required", name));
  try {
    return tensor_from_proto(a->t(), state_.source());
  } catch (const UserError& e) {
    rethrow_at(e, location(), fmt::format("attribute '{}': {}", name, e.message()));
  }
}

bool NodeContextImpl::has_output(int i) const {
  return i >= 0 && i < node_.output_size() && !node_.output(i).empty();
}

void NodeContextImpl::define_output(int i, OnnxValue value) {
  AF_CHECK(!set_.count(i), "output {} of node {} set twice", i, index_);
  try {
    state_.define(node_.output(i), std::move(value));
  } catch (const UserError& e) {
    fail(e.message());
  }
  set_.insert(i);
}

void NodeContextImpl::set_output(int i, Tensor t) {
  if (!has_output(i)) return;
  define_output(i, OnnxValue{t.dtype(), t.shape(), t, std::nullopt, nullptr, ""});
}

void NodeContextImpl::set_known_output(int i, std::vector<sym::Expr> values, DType dtype,
                                       bool scalar) {
  if (!has_output(i)) return;
  AF_CHECK(!scalar || values.size() == 1, "scalar known value with {} elements", values.size());
  AF_CHECK(!is_float(dtype), "known values are integers, got {}", dtype_name(dtype));
  const sym::ShapeEnv& env = builder().graph().shape_env();
  for (sym::Expr& e : values)
    e = env.canonicalize(e);
  Shape shape;
  if (!scalar) shape.emplace_back(static_cast<int64_t>(values.size()));
  define_output(i,
                OnnxValue{dtype, std::move(shape), std::nullopt, std::move(values), nullptr, ""});
}

void NodeContextImpl::set_constant_output(int i, HostTensor value) {
  if (!has_output(i)) return;
  Shape shape(value.shape().begin(), value.shape().end());
  const DType dtype = value.dtype();
  define_output(i, OnnxValue{dtype, std::move(shape), std::nullopt, std::nullopt,
                             std::make_shared<const HostTensor>(std::move(value)), ""});
}

void NodeContextImpl::forward_input(int out, int in) {
  if (!has_output(out)) return;
  define_output(out, value(in));
}

std::string NodeContextImpl::fresh_name(std::string_view hint) {
  return state_.unique_name(hint.empty() ? std::string_view("t") : hint);
}

}  // namespace autofuse::frontend::onnx_import
