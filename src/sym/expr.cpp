// Expr handles: node construction, hashing, the total order, accessors.
#include <algorithm>
#include <cctype>

#include "sym/internal.h"

namespace autofuse::sym {

std::string_view kind_name(Kind kind) {
  switch (kind) {
#define AUTOFUSE_SYM_NAME(name) \
  case Kind::name:              \
    return #name;
    AUTOFUSE_SYM_KINDS(AUTOFUSE_SYM_NAME)
#undef AUTOFUSE_SYM_NAME
  }
  return "?";
}

namespace detail {
namespace {

size_t mix(size_t h, size_t v) {
  // splitmix64-style finalizer over the running hash.
  uint64_t x = static_cast<uint64_t>(h) ^
               (static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ULL + (static_cast<uint64_t>(h) << 6) +
                (static_cast<uint64_t>(h) >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<size_t>(x);
}

}  // namespace

Expr make_const(int64_t value) {
  auto node = std::make_shared<ExprNode>();
  node->kind = Kind::Const;
  node->value = value;
  node->hash = mix(static_cast<size_t>(Kind::Const), static_cast<size_t>(value));
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

Expr make_symbol(std::string name) {
  auto node = std::make_shared<ExprNode>();
  node->kind = Kind::Symbol;
  node->hash = mix(static_cast<size_t>(Kind::Symbol), std::hash<std::string>{}(name));
  node->name = std::move(name);
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

Expr make_node(Kind kind, std::vector<Expr> operands) {
  AF_CHECK(kind != Kind::Const && kind != Kind::Symbol, "make_node({}) needs operands",
           kind_name(kind));
  auto node = std::make_shared<ExprNode>();
  node->kind = kind;
  size_t h = mix(0x5eed, static_cast<size_t>(kind));
  for (const Expr& op : operands)
    h = mix(h, op.hash());
  node->hash = h;
  node->operands = std::move(operands);
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

}  // namespace detail

namespace {

bool is_reserved_name(std::string_view name) {
  return name == "floordiv" || name == "ceildiv" || name == "mod" || name == "min" || name == "max";
}

bool is_identifier(std::string_view name) {
  if (name.empty()) return false;
  auto is_start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto is_cont = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (!is_start(name[0])) return false;
  return std::all_of(name.begin() + 1, name.end(), is_cont);
}

}  // namespace

Expr::Expr() : Expr(int64_t{0}) {}

Expr::Expr(int64_t value) : node_(detail::make_const(value).node_) {}

Expr Expr::symbol(const std::string& name) {
  if (!is_identifier(name) || is_reserved_name(name)) {
    throw UserError(
        fmt::format("invalid size symbol name '{}': expected a C identifier other than "
                    "floordiv, ceildiv, mod, min, max",
                    name));
  }
  return detail::make_symbol(name);
}

Kind Expr::kind() const {
  return node_->kind;
}

std::optional<int64_t> Expr::as_const() const {
  if (node_->kind != Kind::Const) return std::nullopt;
  return node_->value;
}

const std::string& Expr::symbol_name() const {
  AF_CHECK(node_->kind == Kind::Symbol, "symbol_name() on a {} expression", kind_name(node_->kind));
  return node_->name;
}

std::span<const Expr> Expr::operands() const {
  return node_->operands;
}

size_t Expr::hash() const {
  return node_->hash;
}

bool Expr::operator==(const Expr& other) const {
  if (node_ == other.node_) return true;
  if (node_->hash != other.node_->hash) return false;
  return compare(*this, other) == 0;
}

int Expr::compare(const Expr& a, const Expr& b) {
  const ExprNode* x = a.node();
  const ExprNode* y = b.node();
  if (x == y) return 0;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  switch (x->kind) {
    case Kind::Const:
      return x->value < y->value ? -1 : (x->value > y->value ? 1 : 0);
    case Kind::Symbol: {
      int c = x->name.compare(y->name);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default:
      break;
  }
  size_t n = std::min(x->operands.size(), y->operands.size());
  for (size_t i = 0; i < n; ++i) {
    int c = compare(x->operands[i], y->operands[i]);
    if (c != 0) return c;
  }
  if (x->operands.size() != y->operands.size()) {
    return x->operands.size() < y->operands.size() ? -1 : 1;
  }
  return 0;
}

// ---- Checked arithmetic ----
namespace detail {

void throw_overflow(std::string_view what) {
  throw UserError(fmt::format("integer overflow in symbolic size arithmetic ({})", what));
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw_overflow(fmt::format("{} + {}", a, b));
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw_overflow(fmt::format("{} * {}", a, b));
  return r;
}

int64_t checked_neg(int64_t a) {
  if (a == INT64_MIN) throw_overflow(fmt::format("-({})", a));
  return -a;
}

std::optional<int64_t> floor_div(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::optional<int64_t> ceil_div(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
  return q;
}

std::optional<int64_t> floor_mod(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return 0;  // a % -1 is UB for INT64_MIN in C++
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace detail
}  // namespace autofuse::sym
