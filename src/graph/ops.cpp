// The op table, generated from the AUTOFUSE_OPS X-macro. Arity is a property
// of the op class, so it is derived here rather than repeated per op.
#include "autofuse/graph/ops.h"

#include <type_traits>

#include "autofuse/error.h"

namespace autofuse {

namespace {

struct Arity {
  int min_inputs;
  int max_inputs;  // -1: variadic
};

constexpr Arity arity_of(OpClass op_class) {
  switch (op_class) {
    case OpClass::Unary:
    case OpClass::Cast:
    case OpClass::BroadcastTo:
    case OpClass::Reduce:
    case OpClass::Transpose:
    case OpClass::Reshape:
    case OpClass::Slice:
    case OpClass::Split:
      return {1, 1};
    case OpClass::Binary:
    case OpClass::Gather:
    case OpClass::MatMul:
      return {2, 2};
    case OpClass::Where:
      return {3, 3};
    case OpClass::Conv:
      return {2, 3};
    case OpClass::Concat:
      return {1, -1};
    case OpClass::Constant:
    case OpClass::Iota:
      return {0, 0};
  }
  return {0, 0};
}

constexpr OpInfo make_info(OpKind kind, std::string_view name, OpClass op_class, DTypeRule rule,
                           AttrKind attrs) {
  const Arity arity = arity_of(op_class);
  return OpInfo{kind, name, op_class, rule, attrs, arity.min_inputs, arity.max_inputs};
}

constexpr OpInfo kOpTable[] = {
#define AUTOFUSE_OP_INFO(id, text, cls, rule, attrs) \
  make_info(OpKind::id, text, OpClass::cls, DTypeRule::rule, AttrKind::attrs),
    AUTOFUSE_OPS(AUTOFUSE_OP_INFO)
#undef AUTOFUSE_OP_INFO
};
constexpr size_t kNumOps = sizeof(kOpTable) / sizeof(kOpTable[0]);

// The Attrs variant lists its alternatives in AttrKind order; attr_kind_of
// relies on that.
template <typename T, size_t I = 0>
constexpr size_t attrs_index() {
  if constexpr (std::is_same_v<T, std::variant_alternative_t<I, Attrs>>) {
    return I;
  } else {
    return attrs_index<T, I + 1>();
  }
}
static_assert(attrs_index<NoAttrs>() == static_cast<size_t>(AttrKind::None));
static_assert(attrs_index<CastAttrs>() == static_cast<size_t>(AttrKind::Cast));
static_assert(attrs_index<ShapeAttrs>() == static_cast<size_t>(AttrKind::Shape));
static_assert(attrs_index<ReduceAttrs>() == static_cast<size_t>(AttrKind::Reduce));
static_assert(attrs_index<TransposeAttrs>() == static_cast<size_t>(AttrKind::Transpose));
static_assert(attrs_index<SliceAttrs>() == static_cast<size_t>(AttrKind::Slice));
static_assert(attrs_index<AxisAttrs>() == static_cast<size_t>(AttrKind::Axis));
static_assert(attrs_index<SplitAttrs>() == static_cast<size_t>(AttrKind::Split));
static_assert(attrs_index<ConstantAttrs>() == static_cast<size_t>(AttrKind::Constant));
static_assert(attrs_index<IotaAttrs>() == static_cast<size_t>(AttrKind::Iota));
static_assert(attrs_index<ConvAttrs>() == static_cast<size_t>(AttrKind::Conv));

}  // namespace

const OpInfo& op_info(OpKind kind) {
  const auto index = static_cast<size_t>(kind);
  AF_CHECK(index < kNumOps, "invalid OpKind {}", index);
  return kOpTable[index];
}

std::optional<OpKind> op_from_name(std::string_view name) {
  for (const OpInfo& info : kOpTable)
    if (info.name == name) return info.kind;
  return std::nullopt;
}

std::vector<OpKind> all_ops() {
  std::vector<OpKind> ops;
  ops.reserve(kNumOps);
  for (const OpInfo& info : kOpTable)
    ops.push_back(info.kind);
  return ops;
}

AttrKind attr_kind_of(const Attrs& attrs) {
  AF_CHECK(!attrs.valueless_by_exception(), "valueless Attrs");
  return static_cast<AttrKind>(attrs.index());
}

}  // namespace autofuse
