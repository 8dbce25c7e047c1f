// Evaluation under a binding, substitution and symbol collection.
#include <algorithm>

#include "sym/internal.h"

namespace autofuse::sym {

namespace {

/// Why an evaluation failed; the first failure wins.
struct EvalFailure {
  std::string message;
};

std::optional<int64_t> eval(const Expr& e, const Binding& binding, EvalFailure* failure);

/// Sums and products are evaluated in 128 bits: the expanded canonical form
/// can have int64-overflowing terms that cancel (N*M*K - N*M*(K - 1)), and
/// only the value has to fit.
std::optional<__int128> eval_wide(const Expr& e, const Binding& binding, EvalFailure* failure) {
  if (e.kind() != Kind::Add && e.kind() != Kind::Mul) return eval(e, binding, failure);
  bool is_add = e.kind() == Kind::Add;
  __int128 acc = is_add ? 0 : 1;
  for (const Expr& op : e.operands()) {
    auto v = eval_wide(op, binding, failure);
    if (!v) return std::nullopt;
    bool overflow =
        is_add ? __builtin_add_overflow(acc, *v, &acc) : __builtin_mul_overflow(acc, *v, &acc);
    if (overflow) {
      if (failure != nullptr && failure->message.empty()) {
        failure->message = fmt::format("integer overflow evaluating '{}'", e.to_string());
      }
      return std::nullopt;
    }
  }
  return acc;
}

std::optional<int64_t> eval(const Expr& e, const Binding& binding, EvalFailure* failure) {
  auto fail = [&](std::string message) -> std::optional<int64_t> {
    if (failure != nullptr && failure->message.empty()) failure->message = std::move(message);
    return std::nullopt;
  };
  switch (e.kind()) {
    case Kind::Const:
      return *e.as_const();
    case Kind::Symbol: {
      auto it = binding.find(e.symbol_name());
      if (it == binding.end())
        return fail(fmt::format("symbol '{}' has no value", e.symbol_name()));
      return it->second;
    }
    case Kind::Add:
    case Kind::Mul: {
      auto v = eval_wide(e, binding, failure);
      if (!v) return std::nullopt;
      if (*v < INT64_MIN || *v > INT64_MAX) {
        return fail(fmt::format("integer overflow evaluating '{}'", e.to_string()));
      }
      return static_cast<int64_t>(*v);
    }
    case Kind::FloorDiv:
    case Kind::CeilDiv:
    case Kind::Mod:
    case Kind::Min:
    case Kind::Max: {
      auto a = eval(e.operands()[0], binding, failure);
      if (!a) return std::nullopt;
      auto b = eval(e.operands()[1], binding, failure);
      if (!b) return std::nullopt;
      if (e.kind() == Kind::Min) return std::min(*a, *b);
      if (e.kind() == Kind::Max) return std::max(*a, *b);
      if (*b == 0) return fail(fmt::format("division by zero evaluating '{}'", e.to_string()));
      std::optional<int64_t> r = e.kind() == Kind::FloorDiv  ? detail::floor_div(*a, *b)
                                 : e.kind() == Kind::CeilDiv ? detail::ceil_div(*a, *b)
                                                             : detail::floor_mod(*a, *b);
      if (!r) return fail(fmt::format("integer overflow evaluating '{}'", e.to_string()));
      return r;
    }
  }
  return fail("unknown expression kind");
}

}  // namespace

int64_t evaluate(const Expr& e, const Binding& binding) {
  EvalFailure failure;
  auto v = eval(e, binding, &failure);
  if (!v) throw UserError(failure.message);
  return *v;
}

std::optional<int64_t> try_evaluate(const Expr& e, const Binding& binding) {
  return eval(e, binding, nullptr);
}

Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements) {
  switch (e.kind()) {
    case Kind::Const:
      return e;
    case Kind::Symbol: {
      auto it = replacements.find(e.symbol_name());
      return it == replacements.end() ? e : it->second;
    }
    default:
      break;
  }
  std::vector<Expr> ops;
  ops.reserve(e.operands().size());
  bool changed = false;
  for (const Expr& op : e.operands()) {
    ops.push_back(substitute(op, replacements));
    changed = changed || ops.back().node() != op.node();
  }
  if (!changed) return e;
  switch (e.kind()) {
    case Kind::Add: {
      Expr acc = 0;
      for (const Expr& op : ops)
        acc = acc + op;
      return acc;
    }
    case Kind::Mul: {
      Expr acc = 1;
      for (const Expr& op : ops)
        acc = acc * op;
      return acc;
    }
    case Kind::FloorDiv:
      return floordiv(ops[0], ops[1]);
    case Kind::CeilDiv:
      return ceildiv(ops[0], ops[1]);
    case Kind::Mod:
      return mod(ops[0], ops[1]);
    case Kind::Min:
      return min(ops[0], ops[1]);
    case Kind::Max:
      return max(ops[0], ops[1]);
    default:
      break;
  }
  AF_CHECK(false, "substitute: unexpected kind {}", kind_name(e.kind()));
  return e;
}

void collect_symbols(const Expr& e, std::set<std::string>& out) {
  if (e.is_symbol()) {
    out.insert(e.symbol_name());
    return;
  }
  for (const Expr& op : e.operands())
    collect_symbols(op, out);
}

}  // namespace autofuse::sym
