// Recursive-descent parser for the text syntax of Expr::to_string():
//   expr    := term (('+' | '-') term)*
//   term    := unary ('*' unary)*
//   unary   := '-' unary | primary
//   primary := INT | IDENT | FUNC '(' expr ',' expr ')' | '(' expr ')'
// FUNC is floordiv, ceildiv, mod, min, max. The result is built through the
// factories, so it comes back canonical.
#include <cctype>

#include "sym/internal.h"

namespace autofuse::sym {

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expr parse_all() {
    Expr e = parse_expr();
    skip_space();
    if (pos_ < text_.size()) fail(fmt::format("unexpected {} after the expression", describe()));
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    SourceLocation where;
    where.line = 1;
    where.column = static_cast<int>(pos_) + 1;
    throw UserError(where, fmt::format("in size expression '{}': {}", text_, message));
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }

  /// What is at the cursor, for messages.
  std::string describe() const {
    if (pos_ >= text_.size()) return "end of input";
    return fmt::format("'{}'", text_[pos_]);
  }

  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!accept(c)) fail(fmt::format("expected '{}', found {}", c, describe()));
  }

  Expr parse_expr() {
    Expr acc = parse_term();
    while (true) {
      if (accept('+')) {
        acc = acc + parse_term();
      } else if (accept('-')) {
        acc = acc - parse_term();
      } else {
        return acc;
      }
    }
  }

  Expr parse_term() {
    Expr acc = parse_unary();
    while (accept('*'))
      acc = acc * parse_unary();
    return acc;
  }

  Expr parse_unary() {
    if (accept('-')) return -parse_unary();
    return parse_primary();
  }

  Expr parse_primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("expected an operand, found end of input");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      Expr e = parse_expr();
      expect(')');
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return parse_integer();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return parse_name();
    fail(fmt::format("expected an operand, found {}", describe()));
  }

  Expr parse_integer() {
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int digit = text_[pos_] - '0';
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, digit, &value)) {
        pos_ = start;
        fail("integer literal does not fit in int64");
      }
      ++pos_;
    }
    return value;
  }

  Expr parse_name() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    std::string name(text_.substr(start, pos_ - start));
    Expr (*function)(const Expr&, const Expr&) = nullptr;
    if (name == "floordiv") function = &floordiv;
    if (name == "ceildiv") function = &ceildiv;
    if (name == "mod") function = &mod;
    if (name == "min") function = &min;
    if (name == "max") function = &max;
    if (function == nullptr) return Expr::symbol(name);
    expect('(');
    Expr a = parse_expr();
    expect(',');
    Expr b = parse_expr();
    expect(')');
    return function(a, b);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Expr parse_expr(std::string_view text) {
  return Parser(text).parse_all();
}

}  // namespace autofuse::sym
