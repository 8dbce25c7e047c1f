// Canonical printer of the `.af` text format: every statement carries its
// inferred type and every attribute (defaults included) in the order of
// text_attrs.cpp's attr_specs(), so the text is explicit and
// print(parse(print(g))) == print(g).
#include <string>
#include <variant>

#include "autofuse/graph/text.h"
#include "graph/text_attrs.h"

namespace autofuse {
namespace {

template <typename T, typename F>
std::string join(const std::vector<T>& items, F&& format_item) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += format_item(items[i]);
  }
  return out;
}

std::string format_dims(const Shape& shape) {
  return "[" + join(shape, [](const sym::Expr& dim) { return dim.to_string(); }) + "]";
}

std::string format_ints(const std::vector<int64_t>& ints) {
  return "[" + join(ints, [](int64_t v) { return fmt::format("{}", v); }) + "]";
}

// Slice ends: kSliceEnd reads `end` (elsewhere it would just be a number).
std::string format_ends(const std::vector<int64_t>& ints) {
  return "[" + join(ints, [](int64_t v) { return v == kSliceEnd ? "end" : fmt::format("{}", v); }) +
         "]";
}

std::string format_type(const TensorType& type) {
  return std::string(dtype_name(type.dtype)) + format_dims(type.shape);
}

// fmt's "{}" gives the shortest text that reads back as the same double
// (and `inf`, `-inf`, `nan`, which the parser accepts).
std::string format_double(double v) {
  return fmt::format("{}", v);
}

std::string format_bool(bool v) {
  return v ? "true" : "false";
}

// The attribute assignments of a node, e.g. `axes=[1], keepdims=true`.
std::vector<std::string> format_attrs(const Attrs& attrs) {
  struct Visitor {
    std::vector<std::string> operator()(const NoAttrs&) const { return {}; }
    std::vector<std::string> operator()(const CastAttrs& a) const {
      // saturate=true is the default: written only when false.
      if (!a.saturate) return {fmt::format("to={}", dtype_name(a.to)), "saturate=false"};
      return {fmt::format("to={}", dtype_name(a.to))};
    }
    std::vector<std::string> operator()(const ShapeAttrs& a) const {
      return {"shape=" + format_dims(a.shape)};
    }
    std::vector<std::string> operator()(const ReduceAttrs& a) const {
      return {"axes=" + format_ints(a.axes), "keepdims=" + format_bool(a.keepdims)};
    }
    std::vector<std::string> operator()(const TransposeAttrs& a) const {
      return {"perm=" + format_ints(a.perm)};
    }
    std::vector<std::string> operator()(const SliceAttrs& a) const {
      return {"axes=" + format_ints(a.axes), "starts=" + format_ints(a.starts),
              "ends=" + format_ends(a.ends), "steps=" + format_ints(a.steps)};
    }
    std::vector<std::string> operator()(const AxisAttrs& a) const {
      return {fmt::format("axis={}", a.axis)};
    }
    std::vector<std::string> operator()(const SplitAttrs& a) const {
      return {fmt::format("axis={}", a.axis), "sizes=" + format_dims(a.sizes)};
    }
    std::vector<std::string> operator()(const ConstantAttrs& a) const {
      std::string value =
          a.values.size() == 1
              ? format_double(a.values[0])
              : "[" + join(a.values, [](double v) { return format_double(v); }) + "]";
      return {fmt::format("dtype={}", dtype_name(a.dtype)), "shape=" + format_ints(a.shape),
              "value=" + value};
    }
    std::vector<std::string> operator()(const IotaAttrs& a) const {
      return {fmt::format("dtype={}", dtype_name(a.dtype)), "shape=" + format_dims(a.shape),
              fmt::format("axis={}", a.axis)};
    }
    std::vector<std::string> operator()(const ConvAttrs& a) const {
      return {"strides=" + format_ints(a.strides), "dilations=" + format_ints(a.dilations),
              "pads=" + format_ints(a.pads), fmt::format("group={}", a.group)};
    }
  };
  return std::visit(Visitor{}, attrs);
}

// Guard reasons are free text; keep each guard on its comment line.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

std::string print_graph(const Graph& graph) {
  std::string out = fmt::format("graph {}(", graph.name());
  out += join(graph.inputs(), [&](ValueId id) {
    const Value& v = graph.value(id);
    return v.name + ": " + format_type(v.type);
  });
  out += ") {\n";
  for (const Node& node : graph.nodes()) {
    out += "  ";
    out += join(node.outputs, [&](ValueId id) {
      const Value& v = graph.value(id);
      return v.name + ": " + format_type(v.type);
    });
    std::vector<std::string> args;
    for (ValueId id : node.inputs)
      args.push_back(graph.value(id).name);
    for (std::string& attr : format_attrs(node.attrs))
      args.push_back(std::move(attr));
    out += fmt::format(" = {}({})\n", op_name(node.op),
                       join(args, [](const std::string& s) { return s; }));
  }
  out += "  return " + join(graph.outputs(), [&](ValueId id) { return graph.value(id).name; });
  out += "\n}\n";
  for (const sym::Guard& guard : graph.shape_env().guards()) {
    out += "# guard: " + one_line(guard.condition_text());
    if (!guard.reason.empty()) out += "  (" + one_line(guard.reason) + ")";
    out += "\n";
  }
  return out;
}

}  // namespace autofuse
