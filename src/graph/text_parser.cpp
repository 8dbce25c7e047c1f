// Recursive-descent parser for the `.af` text format (grammar in
// autofuse/graph/text.h). It builds the Graph statement by statement through
// Graph::add_node, so verification and shape inference errors surface at the
// statement that caused them.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <variant>

#include "autofuse/graph/text.h"
#include "graph/text_attrs.h"
#include "graph/text_lexer.h"

namespace autofuse {
namespace {

using text::Lexer;
using text::Literal;
using text::NamedAttr;
using text::Token;
using text::TokKind;

// Lists and dim expressions nest; bounding the depth keeps the recursion
// (and the stack) small on adversarial input.
constexpr int kMaxDepth = 64;

bool is_dim_function(std::string_view name) {
  return name == "floordiv" || name == "ceildiv" || name == "mod" || name == "min" || name == "max";
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : file_(file), lexer_(text, file_) {}

  Graph parse_graph();

 private:
  // ---- Tokens ----
  const Token& peek(size_t ahead = 0) {
    while (tokens_.size() <= pos_ + ahead) {
      if (!tokens_.empty() && tokens_.back().kind == TokKind::End) return tokens_.back();
      tokens_.push_back(lexer_.next());
    }
    return tokens_[pos_ + ahead];
  }
  Token take() {
    Token t = peek();
    if (t.kind != TokKind::End) ++pos_;
    return t;
  }
  SourceLocation loc(const Token& t) const { return text::text_location(file_, t.line, t.column); }
  [[noreturn]] void fail(const Token& t, const std::string& message) const {
    throw UserError(loc(t), message);
  }
  [[noreturn]] void fail_expected(std::string_view expected) {
    fail(peek(), fmt::format("expected {} but found {}", expected, peek().describe()));
  }
  Token expect(char punct) {
    if (!peek().is(punct)) fail_expected(fmt::format("'{}'", punct));
    return take();
  }
  Token expect_ident(std::string_view what) {
    if (peek().kind != TokKind::Ident) fail_expected(what);
    return take();
  }
  // Runs a sym factory, giving any UserError it throws (e.g. an overflow)
  // the position of `at`.
  template <typename F>
  sym::Expr at_token(const Token& at, F&& build) {
    try {
      return build();
    } catch (const UserError& e) {
      if (e.where().line > 0) throw;
      throw UserError(loc(at), e.message());
    }
  }

  // ---- Pieces ----
  int64_t int_value(const Token& t, bool negative);
  double float_value(const Token& t);
  TensorType parse_type();
  sym::Expr parse_dim(int depth);
  sym::Expr parse_dim_term(int depth);
  sym::Expr parse_dim_unary(int depth);
  sym::Expr parse_dim_primary(int depth);
  Literal parse_literal(int depth);
  void parse_params(Graph& graph);
  void parse_statement(Graph& graph);
  void parse_return(Graph& graph);
  ValueId resolve(const Graph& graph, const Token& name);
  void define(const Token& name);

  const std::string& file_;
  Lexer lexer_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::map<std::string, Token, std::less<>> defined_;  // value name -> where it was defined
};

int64_t Parser::int_value(const Token& t, bool negative) {
  uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), magnitude);
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (ec != std::errc() || ptr != t.text.data() + t.text.size() ||
      magnitude > kMax + (negative ? 1 : 0)) {
    fail(t, fmt::format("integer literal {}{} is out of range", negative ? "-" : "", t.text));
  }
  if (!negative) return static_cast<int64_t>(magnitude);
  // -(2^63) does not fit the positive side, so negate in unsigned arithmetic.
  return static_cast<int64_t>(~magnitude + 1);
}

double Parser::float_value(const Token& t) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
  if (ec != std::errc() || ptr != t.text.data() + t.text.size()) {
    fail(t, fmt::format("float literal {} is out of range", t.text));
  }
  return value;
}

TensorType Parser::parse_type() {
  Token dtype_tok = expect_ident("a dtype");
  auto dtype = dtype_from_name(dtype_tok.text);
  if (!dtype) fail(dtype_tok, fmt::format("unknown dtype '{}'", dtype_tok.text));
  TensorType type{*dtype, {}};
  expect('[');
  if (!peek().is(']')) {
    while (true) {
      type.shape.push_back(parse_dim(0));
      if (peek().is(']')) break;
      if (!peek().is(',')) fail_expected("',' or ']'");
      take();
    }
  }
  take();
  return type;
}

// dim := term (('+' | '-') term)*
sym::Expr Parser::parse_dim(int depth) {
  sym::Expr lhs = parse_dim_term(depth);
  while (peek().is('+') || peek().is('-')) {
    Token op = take();
    sym::Expr rhs = parse_dim_term(depth);
    lhs = at_token(op, [&] { return op.is('+') ? lhs + rhs : lhs - rhs; });
  }
  return lhs;
}

// term := unary ('*' unary)*
sym::Expr Parser::parse_dim_term(int depth) {
  sym::Expr lhs = parse_dim_unary(depth);
  while (peek().is('*')) {
    Token op = take();
    sym::Expr rhs = parse_dim_unary(depth);
    lhs = at_token(op, [&] { return lhs * rhs; });
  }
  return lhs;
}

// unary := '-' unary | primary
sym::Expr Parser::parse_dim_unary(int depth) {
  if (depth > kMaxDepth) fail(peek(), "expression nested too deeply");
  if (!peek().is('-')) return parse_dim_primary(depth);
  Token minus = take();
  // A negated literal directly, so that INT64_MIN can be written.
  if (peek().kind == TokKind::Int) return sym::Expr(int_value(take(), /*negative=*/true));
  sym::Expr operand = parse_dim_unary(depth + 1);
  return at_token(minus, [&] { return -operand; });
}

// primary := INT | IDENT | FUNC '(' dim ',' dim ')' | '(' dim ')'
sym::Expr Parser::parse_dim_primary(int depth) {
  Token t = peek();
  if (t.kind == TokKind::Int) return sym::Expr(int_value(take(), /*negative=*/false));
  if (t.is('(')) {
    take();
    sym::Expr inner = parse_dim(depth + 1);
    expect(')');
    return inner;
  }
  if (t.kind != TokKind::Ident) fail_expected("a dim expression");
  Token name = take();
  if (!peek().is('(')) return sym::Expr::symbol(std::string(name.text));
  if (!is_dim_function(name.text)) {
    fail(name, fmt::format("unknown function '{}' in dim expression (expected floordiv, ceildiv, "
                           "mod, min or max)",
                           name.text));
  }
  take();
  sym::Expr a = parse_dim(depth + 1);
  expect(',');
  sym::Expr b = parse_dim(depth + 1);
  expect(')');
  return at_token(name, [&] {
    if (name.text == "floordiv") return sym::floordiv(a, b);
    if (name.text == "ceildiv") return sym::ceildiv(a, b);
    if (name.text == "mod") return sym::mod(a, b);
    if (name.text == "min") return sym::min(a, b);
    return sym::max(a, b);
  });
}

// attr := '[' [attr (',' attr)*] ']' | ['-'] (FLOAT | 'inf' | 'nan') | ['-'] INT
//       | IDENT | dim
// The simple forms are tried first; anything followed by an operator is
// re-read as a dim expression.
Literal Parser::parse_literal(int depth) {
  if (depth > kMaxDepth) fail(peek(), "attribute value nested too deeply");
  Token first = peek();
  if (!first.is('[') && !first.is('-') && !first.is('(') && first.kind != TokKind::Int &&
      first.kind != TokKind::Float && first.kind != TokKind::Ident) {
    fail_expected("an attribute value");
  }
  Literal lit;
  lit.line = first.line;
  lit.column = first.column;
  if (first.is('[')) {
    take();
    lit.kind = Literal::Kind::List;
    if (!peek().is(']')) {
      while (true) {
        lit.items.push_back(parse_literal(depth + 1));
        if (peek().is(']')) break;
        if (!peek().is(',')) fail_expected("',' or ']'");
        take();
      }
    }
    take();
  } else {
    size_t start = pos_;
    bool negative = peek().is('-');
    if (negative) take();
    Token t = peek();  // a copy: peek(1) may grow the token buffer
    auto operator_follows = [&] {
      const Token& after = peek(1);
      return after.is('+') || after.is('-') || after.is('*') || after.is('(');
    };
    if (t.kind == TokKind::Float ||
        ((t.is_ident("inf") || t.is_ident("nan")) && !operator_follows())) {
      double magnitude = t.kind == TokKind::Float ? float_value(t)
                         : t.text == "inf"        ? std::numeric_limits<double>::infinity()
                                                  : std::numeric_limits<double>::quiet_NaN();
      take();
      lit.kind = Literal::Kind::Float;
      lit.float_value = negative ? -magnitude : magnitude;
    } else if (t.kind == TokKind::Int && !operator_follows()) {
      lit.kind = Literal::Kind::Int;
      lit.negative = negative;
      lit.int_value = int_value(take(), negative);
    } else if (t.kind == TokKind::Ident && !negative && !operator_follows()) {
      lit.kind = Literal::Kind::Ident;
      take();
    } else {
      pos_ = start;
      lit.kind = Literal::Kind::Expr;
      lit.expr = parse_dim(depth + 1);
    }
  }
  const Token& last = tokens_[pos_ - 1];
  lit.text =
      std::string(first.text.data(),
                  static_cast<size_t>(last.text.data() + last.text.size() - first.text.data()));
  return lit;
}

void Parser::define(const Token& name) {
  auto [it, inserted] = defined_.emplace(std::string(name.text), name);
  if (!inserted) {
    fail(name, fmt::format("duplicate value name '{}' (first defined at {}:{})", name.text,
                           it->second.line, it->second.column));
  }
}

ValueId Parser::resolve(const Graph& graph, const Token& name) {
  auto id = graph.find_value(std::string(name.text));
  if (!id) fail(name, fmt::format("unknown value '{}'", name.text));
  return *id;
}

void Parser::parse_params(Graph& graph) {
  expect('(');
  if (peek().is(')')) {
    take();
    return;
  }
  while (true) {
    Token name = expect_ident("a parameter name");
    define(name);
    expect(':');
    TensorType type = parse_type();
    graph.add_input(std::string(name.text), std::move(type), loc(name));
    if (peek().is(')')) break;
    if (!peek().is(',')) fail_expected("',' or ')'");
    take();
  }
  take();
}

void Parser::parse_statement(Graph& graph) {
  struct Target {
    Token name;
    std::optional<Token> type_at;
    TensorType declared;
  };
  std::vector<Target> targets;
  while (true) {
    Target target{expect_ident("a statement or 'return'"), std::nullopt, {}};
    define(target.name);
    if (peek().is(':')) {
      take();
      target.type_at = peek();
      target.declared = parse_type();
    }
    targets.push_back(std::move(target));
    if (peek().is('=')) break;
    if (!peek().is(',')) fail_expected(targets.back().type_at ? "',' or '='" : "':', ',' or '='");
    take();
  }
  take();

  Token op_tok = expect_ident("an op name");
  auto op = op_from_name(op_tok.text);
  if (!op) fail(op_tok, fmt::format("unknown op '{}'", op_tok.text));
  expect('(');
  std::vector<ValueId> inputs;
  std::vector<NamedAttr> attrs;
  if (!peek().is(')')) {
    while (true) {
      if (peek().kind == TokKind::Ident && peek(1).is('=')) {
        Token name = take();
        take();
        attrs.push_back(
            NamedAttr{std::string(name.text), name.line, name.column, parse_literal(0)});
      } else if (peek().kind == TokKind::Ident) {
        Token name = take();
        if (!attrs.empty()) fail(name, "inputs must come before attributes");
        inputs.push_back(resolve(graph, name));
      } else {
        fail_expected("an input name or attribute");
      }
      if (peek().is(')')) break;
      if (!peek().is(',')) fail_expected("',' or ')'");
      take();
    }
  }
  take();

  const SourceLocation where = loc(targets.front().name);
  Attrs typed = text::convert_attrs(*op, attrs, file_, loc(op_tok));
  size_t num_outputs = 1;
  if (const auto* split = std::get_if<SplitAttrs>(&typed)) num_outputs = split->sizes.size();
  if (targets.size() != num_outputs) {
    throw UserError(where, fmt::format("{} produces {} output{} but {} target{} given", op_tok.text,
                                       num_outputs, num_outputs == 1 ? "" : "s", targets.size(),
                                       targets.size() == 1 ? " is" : "s are"));
  }
  std::vector<std::string> names;
  for (const Target& target : targets)
    names.emplace_back(target.name.text);

  std::vector<ValueId> outputs;
  try {
    outputs = graph.add_node(*op, inputs, std::move(typed), names, where);
  } catch (const UserError& e) {
    if (e.where().line > 0) throw;
    SourceLocation located = e.where();
    located.file = where.file;
    located.line = where.line;
    located.column = where.column;
    throw UserError(located, e.message());
  }

  const sym::ShapeEnv& env = graph.shape_env();
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!targets[i].type_at) continue;
    const TensorType& inferred = graph.value(outputs[i]).type;
    const TensorType& declared = targets[i].declared;
    bool same = inferred.dtype == declared.dtype && inferred.rank() == declared.rank();
    for (int d = 0; same && d < inferred.rank(); ++d) {
      // Equal as written, or equal once the guards recorded so far apply.
      same = inferred.shape[d] == declared.shape[d] ||
             env.canonicalize(inferred.shape[d]) == env.canonicalize(declared.shape[d]);
    }
    if (!same) {
      SourceLocation at = loc(*targets[i].type_at);
      at.node = names[i];
      at.op = std::string(op_tok.text);
      throw UserError(at, fmt::format("declared {} but inferred {}", declared.to_string(),
                                      inferred.to_string()));
    }
  }
}

void Parser::parse_return(Graph& graph) {
  Token ret = take();
  std::vector<ValueId> outputs;
  while (true) {
    Token name = expect_ident("a value name");
    ValueId id = resolve(graph, name);
    // Checked here (set_outputs does too) to point at the second mention.
    if (std::find(outputs.begin(), outputs.end(), id) != outputs.end()) {
      fail(name, fmt::format("value '{}' is returned twice", name.text));
    }
    outputs.push_back(id);
    if (!peek().is(',')) break;
    take();
  }
  graph.set_outputs(outputs, loc(ret));
}

Graph Parser::parse_graph() {
  if (!peek().is_ident("graph")) fail_expected("'graph'");
  take();
  Token name = expect_ident("a graph name");
  Graph graph{std::string(name.text)};
  parse_params(graph);
  expect('{');
  // `return` ends the body unless it is itself a value being defined
  // (`return: f32[N] = ...`); any identifier may name a value.
  auto at_return = [&] {
    if (!peek().is_ident("return")) return false;
    const Token& after = peek(1);
    return !after.is(':') && !after.is(',') && !after.is('=');
  };
  while (!at_return()) {
    if (peek().is('}')) fail(peek(), "missing 'return' statement before '}'");
    parse_statement(graph);
  }
  parse_return(graph);
  if (!peek().is('}')) fail_expected("',' or '}'");
  take();
  if (peek().kind != TokKind::End) fail_expected("end of input after the graph");
  return graph;
}

}  // namespace

Graph parse_graph(std::string_view text, const std::string& file_name) {
  return Parser(text, file_name).parse_graph();
}

Graph parse_graph_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UserError(text::text_location(path, 0, 0),
                    fmt::format("cannot open file: {}", std::strerror(errno)));
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw UserError(text::text_location(path, 0, 0), "cannot read file");
  return parse_graph(contents.str(), path);
}

}  // namespace autofuse
