#include "graph/text_attrs.h"

#include <cmath>
#include <limits>
#include <map>

namespace autofuse::text {
namespace {

bool is_keyword(std::string_view name) {
  return name == "true" || name == "false" || name == "end" || name == "inf" || name == "nan";
}

// Converts the literals of one statement, reporting errors at the offending
// literal.
class Converter {
 public:
  Converter(const std::string& file, std::string_view op) : file_(file), op_(op) {}

  [[noreturn]] void fail(const Literal& lit, std::string_view attr,
                         std::string_view expected) const {
    std::string found = lit.kind == Literal::Kind::List ? "a list" : shown(lit.text);
    throw UserError(
        text_location(file_, lit.line, lit.column),
        fmt::format("attribute '{}' of {} expects {} but found {}", attr, op_, expected, found));
  }

  int64_t to_int(const Literal& lit, std::string_view attr, std::string_view expected) const {
    if (lit.kind == Literal::Kind::Int) return lit.int_value;
    if (lit.kind == Literal::Kind::Expr) {
      if (auto value = lit.expr.as_const()) return *value;
    }
    fail(lit, attr, expected);
  }

  bool to_bool(const Literal& lit, std::string_view attr) const {
    if (lit.kind == Literal::Kind::Ident && (lit.text == "true" || lit.text == "false")) {
      return lit.text == "true";
    }
    fail(lit, attr, "true or false");
  }

  DType to_dtype(const Literal& lit, std::string_view attr) const {
    if (lit.kind == Literal::Kind::Ident) {
      if (auto dtype = dtype_from_name(lit.text)) return *dtype;
      if (!is_keyword(lit.text)) {
        throw UserError(text_location(file_, lit.line, lit.column),
                        fmt::format("unknown dtype '{}'", lit.text));
      }
    }
    fail(lit, attr, "a dtype");
  }

  sym::Expr to_dim(const Literal& lit, std::string_view attr, std::string_view expected) const {
    switch (lit.kind) {
      case Literal::Kind::Int:
        return sym::Expr(lit.int_value);
      case Literal::Kind::Ident:
        // No keyword means anything as a dim, so every identifier is a symbol.
        return sym::Expr::symbol(lit.text);
      case Literal::Kind::Float:
        // A symbol may even be named `inf` or `nan`.
        if (lit.text == "inf" || lit.text == "nan") return sym::Expr::symbol(lit.text);
        break;
      case Literal::Kind::Expr:
        return lit.expr;
      default:
        break;
    }
    fail(lit, attr, expected);
  }

  double to_double(const Literal& lit, std::string_view attr, std::string_view expected) const {
    switch (lit.kind) {
      case Literal::Kind::Int:
        // `-0` is the float -0.0 (the printer writes it that way).
        if (lit.int_value == 0 && lit.negative) return -0.0;
        return static_cast<double>(lit.int_value);
      case Literal::Kind::Float:
        return lit.float_value;
      case Literal::Kind::Ident:
        if (lit.text == "true") return 1.0;
        if (lit.text == "false") return 0.0;
        break;
      case Literal::Kind::Expr:
        if (auto value = lit.expr.as_const()) return static_cast<double>(*value);
        break;
      default:
        break;
    }
    fail(lit, attr, expected);
  }

  const std::vector<Literal>& to_list(const Literal& lit, std::string_view attr,
                                      std::string_view expected) const {
    if (lit.kind != Literal::Kind::List) fail(lit, attr, expected);
    return lit.items;
  }

  std::vector<int64_t> to_int_list(const Literal& lit, std::string_view attr,
                                   bool allow_end = false) const {
    std::string_view expected = allow_end ? "a list of integers or 'end'" : "a list of integers";
    std::vector<int64_t> out;
    for (const Literal& item : to_list(lit, attr, expected)) {
      if (allow_end && item.kind == Literal::Kind::Ident && item.text == "end") {
        out.push_back(kSliceEnd);
      } else {
        out.push_back(to_int(item, attr, expected));
      }
    }
    return out;
  }

  Shape to_dim_list(const Literal& lit, std::string_view attr) const {
    constexpr std::string_view kExpected = "a list of dim expressions";
    Shape out;
    for (const Literal& item : to_list(lit, attr, kExpected)) {
      out.push_back(to_dim(item, attr, kExpected));
    }
    return out;
  }

  // A constant's value: one number (splat) or a flat list of numbers.
  std::vector<double> to_values(const Literal& lit, std::string_view attr) const {
    constexpr std::string_view kExpected = "a number or a list of numbers";
    if (lit.kind != Literal::Kind::List) return {to_double(lit, attr, kExpected)};
    std::vector<double> out;
    out.reserve(lit.items.size());
    for (const Literal& item : lit.items)
      out.push_back(to_double(item, attr, kExpected));
    return out;
  }

 private:
  static std::string shown(const std::string& text) {
    constexpr size_t kMaxShown = 40;
    if (text.size() > kMaxShown) return fmt::format("'{}...'", text.substr(0, kMaxShown));
    return fmt::format("'{}'", text);
  }

  const std::string& file_;
  std::string_view op_;
};

}  // namespace

std::vector<AttrSpec> attr_specs(AttrKind kind) {
  switch (kind) {
    case AttrKind::None:
      return {};
    case AttrKind::Cast:
      return {{"to", true}, {"saturate", false}};
    case AttrKind::Shape:
      return {{"shape", true}};
    case AttrKind::Reduce:
      return {{"axes", true}, {"keepdims", false}};
    case AttrKind::Transpose:
      return {{"perm", true}};
    case AttrKind::Slice:
      return {{"axes", true}, {"starts", true}, {"ends", true}, {"steps", false}};
    case AttrKind::Axis:
      return {{"axis", true}};
    case AttrKind::Split:
      return {{"axis", true}, {"sizes", true}};
    case AttrKind::Constant:
      return {{"dtype", true}, {"shape", false}, {"value", true}};
    case AttrKind::Iota:
      return {{"dtype", false}, {"shape", true}, {"axis", true}};
    case AttrKind::Conv:
      return {{"strides", false}, {"dilations", false}, {"pads", false}, {"group", false}};
  }
  AF_CHECK(false, "unhandled attribute kind {}", static_cast<int>(kind));
  return {};
}

Attrs convert_attrs(OpKind op, const std::vector<NamedAttr>& attrs, const std::string& file,
                    const SourceLocation& op_where) {
  const OpInfo& info = op_info(op);
  std::vector<AttrSpec> specs = attr_specs(info.attr_kind);

  // Names first: unknown and duplicate attributes, then missing required ones.
  std::map<std::string_view, const Literal*> given;
  for (const NamedAttr& attr : attrs) {
    SourceLocation where = text_location(file, attr.line, attr.column);
    bool known = false;
    for (const AttrSpec& spec : specs)
      known = known || spec.name == attr.name;
    if (!known) {
      if (specs.empty()) {
        throw UserError(where, fmt::format("unknown attribute '{}': {} takes no attributes",
                                           attr.name, info.name));
      }
      std::string names;
      for (const AttrSpec& spec : specs)
        names += (names.empty() ? "" : ", ") + std::string(spec.name);
      throw UserError(where, fmt::format("unknown attribute '{}' for {} (it takes {})", attr.name,
                                         info.name, names));
    }
    if (!given.emplace(attr.name, &attr.value).second) {
      throw UserError(where, fmt::format("duplicate attribute '{}'", attr.name));
    }
  }
  for (const AttrSpec& spec : specs) {
    if (spec.required && !given.contains(spec.name)) {
      throw UserError(op_where,
                      fmt::format("missing required attribute '{}' for {}", spec.name, info.name));
    }
  }
  auto get = [&](std::string_view name) -> const Literal* {
    auto it = given.find(name);
    return it == given.end() ? nullptr : it->second;
  };

  Converter c(file, info.name);
  switch (info.attr_kind) {
    case AttrKind::None:
      return NoAttrs{};
    case AttrKind::Cast: {
      CastAttrs out{c.to_dtype(*get("to"), "to")};
      if (const Literal* saturate = get("saturate"))
        out.saturate = c.to_bool(*saturate, "saturate");
      return out;
    }
    case AttrKind::Shape:
      return ShapeAttrs{c.to_dim_list(*get("shape"), "shape")};
    case AttrKind::Reduce: {
      ReduceAttrs out;
      out.axes = c.to_int_list(*get("axes"), "axes");
      if (const Literal* keepdims = get("keepdims"))
        out.keepdims = c.to_bool(*keepdims, "keepdims");
      return out;
    }
    case AttrKind::Transpose:
      return TransposeAttrs{c.to_int_list(*get("perm"), "perm")};
    case AttrKind::Slice: {
      SliceAttrs out;
      out.axes = c.to_int_list(*get("axes"), "axes");
      out.starts = c.to_int_list(*get("starts"), "starts");
      out.ends = c.to_int_list(*get("ends"), "ends", /*allow_end=*/true);
      if (const Literal* steps = get("steps")) {
        out.steps = c.to_int_list(*steps, "steps");
      } else {
        out.steps.assign(out.axes.size(), 1);
      }
      return out;
    }
    case AttrKind::Axis:
      return AxisAttrs{c.to_int(*get("axis"), "axis", "an integer")};
    case AttrKind::Split: {
      SplitAttrs out;
      out.axis = c.to_int(*get("axis"), "axis", "an integer");
      out.sizes = c.to_dim_list(*get("sizes"), "sizes");
      return out;
    }
    case AttrKind::Constant: {
      ConstantAttrs out;
      out.dtype = c.to_dtype(*get("dtype"), "dtype");
      if (const Literal* shape = get("shape")) out.shape = c.to_int_list(*shape, "shape");
      out.values = c.to_values(*get("value"), "value");
      return out;
    }
    case AttrKind::Iota: {
      IotaAttrs out;
      if (const Literal* dtype = get("dtype")) out.dtype = c.to_dtype(*dtype, "dtype");
      out.shape = c.to_dim_list(*get("shape"), "shape");
      out.axis = c.to_int(*get("axis"), "axis", "an integer");
      return out;
    }
    case AttrKind::Conv: {
      ConvAttrs out;
      if (const Literal* strides = get("strides")) out.strides = c.to_int_list(*strides, "strides");
      if (const Literal* dilations = get("dilations"))
        out.dilations = c.to_int_list(*dilations, "dilations");
      if (const Literal* pads = get("pads")) out.pads = c.to_int_list(*pads, "pads");
      if (const Literal* group = get("group")) out.group = c.to_int(*group, "group", "an integer");
      return out;
    }
  }
  AF_CHECK(false, "unhandled attribute kind {}", static_cast<int>(info.attr_kind));
  return NoAttrs{};
}

}  // namespace autofuse::text
