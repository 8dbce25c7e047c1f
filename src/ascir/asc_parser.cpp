// Parser of the AscGraph text form (grammar in asc_text.h). Line oriented:
// every error is a UserError with the line and column where reading failed.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <vector>

#include "ascir/asc_text.h"
#include "autofuse/ascir/asc_graph.h"

namespace autofuse::ascir {

namespace text {
std::string kind_keyword(AscKind kind) {
  std::string word(asc_kind_name(kind));
  for (char& c : word)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word;
}
}  // namespace text

namespace {

// A piece of a line (an item of a parenthesized list), with its column.
struct Piece {
  std::string_view text;
  int column;
};

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

class LineReader {
 public:
  LineReader(std::string_view line, int line_no) : line_(line), line_no_(line_no) {}

  [[noreturn]] void fail(const std::string& message, int column = 0) const {
    SourceLocation where;
    where.line = line_no_;
    where.column = column > 0 ? column : this->column();
    throw UserError(where, message);
  }
  int column() const { return static_cast<int>(pos_) + 1; }
  bool at_end() {
    skip_space();
    return pos_ >= line_.size();
  }
  void expect_end() {
    if (!at_end()) fail(fmt::format("unexpected '{}'", line_.substr(pos_)));
  }

  void skip_space() {
    while (pos_ < line_.size() &&
           (line_[pos_] == ' ' || line_[pos_] == '\t' || line_[pos_] == '\r'))
      ++pos_;
  }
  bool accept(std::string_view s) {
    skip_space();
    if (line_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  void expect(std::string_view s) {
    if (!accept(s)) fail(fmt::format("expected '{}'", s));
  }
  std::string_view ident(const char* what) {
    skip_space();
    size_t end = pos_;
    if (end < line_.size() && is_ident_start(line_[end]))
      while (end < line_.size() && is_ident_char(line_[end]))
        ++end;
    if (end == pos_) fail(fmt::format("expected {}", what));
    std::string_view word = line_.substr(pos_, end - pos_);
    pos_ = end;
    return word;
  }
  int integer(const char* what) {
    skip_space();
    int value = 0;
    const char* begin = line_.data() + pos_;
    auto [ptr, ec] = std::from_chars(begin, line_.data() + line_.size(), value);
    if (ec != std::errc() || ptr == begin) fail(fmt::format("expected {}", what));
    pos_ += static_cast<size_t>(ptr - begin);
    return value;
  }
  /// The items of a list that was just opened (its `open` consumed) up to the
  /// matching `close`, split at commas outside parentheses. Items trimmed.
  std::vector<Piece> list(char close) {
    std::vector<Piece> items;
    const size_t start = pos_;
    size_t item_start = pos_;
    int depth = 0;
    for (; pos_ < line_.size(); ++pos_) {
      const char c = line_[pos_];
      if (c == '(') {
        ++depth;
      } else if (c == ')' && depth > 0) {
        --depth;
      } else if (depth == 0 && (c == ',' || c == close)) {
        Piece piece = trimmed(item_start, pos_);
        const bool empty_list = c == close && items.empty() && piece.text.empty();
        if (piece.text.empty() && !empty_list) fail("empty list item", piece.column);
        if (!empty_list) items.push_back(piece);
        item_start = pos_ + 1;
        if (c == close) {
          ++pos_;
          return items;
        }
      }
    }
    fail(fmt::format("missing '{}'", close), static_cast<int>(start));  // at the opener
  }
  /// The rest of the line, trimmed (for a trailing expression).
  Piece rest() {
    Piece piece = trimmed(pos_, line_.size());
    pos_ = line_.size();
    if (piece.text.empty()) fail("expected an expression");
    return piece;
  }
  Piece trimmed(size_t begin, size_t end) const {
    while (begin < end && std::isspace(static_cast<unsigned char>(line_[begin])))
      ++begin;
    while (end > begin && std::isspace(static_cast<unsigned char>(line_[end - 1])))
      --end;
    return {line_.substr(begin, end - begin), static_cast<int>(begin) + 1};
  }

  sym::Expr expr(const Piece& piece) const {
    try {
      return sym::parse_expr(piece.text);
    } catch (const UserError& e) {
      const int offset = e.where().column > 0 ? e.where().column - 1 : 0;
      fail(e.message(), piece.column + offset);
    }
  }
  std::vector<sym::Expr> exprs(char close) {
    std::vector<sym::Expr> out;
    for (const Piece& piece : list(close))
      out.push_back(expr(piece));
    return out;
  }
  int piece_int(const Piece& piece, const char* what) const {
    int value = 0;
    const char* end = piece.text.data() + piece.text.size();
    auto [ptr, ec] = std::from_chars(piece.text.data(), end, value);
    if (ec != std::errc() || ptr != end) fail(fmt::format("expected {}", what), piece.column);
    return value;
  }

 private:
  std::string_view line_;
  int line_no_;
  size_t pos_ = 0;
};

std::vector<ValueId> parse_ids(LineReader& r) {
  std::vector<ValueId> ids;
  for (const Piece& piece : r.list(')'))
    ids.push_back(r.piece_int(piece, "a value id"));
  return ids;
}

void parse_header(LineReader& r, AscGraph& g) {
  r.expect("kernel");
  g.name = std::string(r.ident("a kernel name"));
  r.expect("axes(");
  for (const Piece& piece : r.list(')')) {
    const size_t colon = piece.text.find(':');
    if (colon == std::string_view::npos) r.fail("expected 'name: size'", piece.column);
    Axis axis;
    std::string_view name = piece.text.substr(0, colon);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back())))
      name.remove_suffix(1);
    bool valid_name = !name.empty() && is_ident_start(name[0]);
    for (char c : name)
      valid_name = valid_name && is_ident_char(c);
    if (!valid_name) r.fail("expected an axis name", piece.column);
    axis.name = std::string(name);
    std::string_view size = piece.text.substr(colon + 1);
    int size_column = piece.column + static_cast<int>(colon) + 1;
    while (!size.empty() && std::isspace(static_cast<unsigned char>(size.front()))) {
      size.remove_prefix(1);
      ++size_column;
    }
    // A trailing word `reduced` after the size marks a reduced axis (an
    // expression never ends in two juxtaposed terms, so this is unambiguous).
    constexpr std::string_view kReduced = "reduced";
    if (size.size() > kReduced.size() && size.ends_with(kReduced) &&
        std::isspace(static_cast<unsigned char>(size[size.size() - kReduced.size() - 1]))) {
      axis.reduced = true;
      size.remove_suffix(kReduced.size());
      while (!size.empty() && std::isspace(static_cast<unsigned char>(size.back())))
        size.remove_suffix(1);
    }
    if (size.empty()) r.fail("expected an axis size", size_column);
    axis.size = r.expr({size, size_column});
    g.axes.push_back(std::move(axis));
  }
  r.expect("inputs(");
  g.inputs = parse_ids(r);
  r.expect("outputs(");
  g.outputs = parse_ids(r);
  r.expect("{");
  r.expect_end();
}

// The kind and op named by the word after `=`.
void parse_kind_word(LineReader& r, std::string_view word, int column, AscNode& n) {
  for (int k = 0; k <= static_cast<int>(AscKind::Output); ++k) {
    const auto kind = static_cast<AscKind>(k);
    if (kind == AscKind::Compute || kind == AscKind::Reduce) continue;
    if (word == text::kind_keyword(kind)) {
      n.kind = kind;
      return;
    }
  }
  const std::optional<OpKind> op = op_from_name(word);
  if (op) {
    const OpClass cls = op_info(*op).op_class;
    if (cls == OpClass::Unary || cls == OpClass::Binary || cls == OpClass::Where) {
      n.kind = AscKind::Compute;
      n.op = *op;
      return;
    }
    if (cls == OpClass::Reduce) {
      n.kind = AscKind::Reduce;
      n.op = *op;
      return;
    }
  }
  r.fail(fmt::format("unknown node kind '{}'", word), column);
}

void parse_args(LineReader& r, const std::vector<Piece>& args, AscNode& n) {
  // A Gather's dims: each `stride=` starts one; its `size=` and optional
  // `name=` (default: the node's name) follow it.
  std::vector<bool> seen_size;
  for (const Piece& arg : args) {
    std::string_view t = arg.text;
    if (t.starts_with('%')) {
      const int id = r.piece_int({t.substr(1), arg.column + 1}, "a node id");
      if (id < 0 || id >= n.id)
        r.fail(fmt::format("node %{} is not defined before", id), arg.column);
      n.inputs.push_back(id);
    } else if (t.starts_with("arg=") && (n.kind == AscKind::Data || n.kind == AscKind::Output)) {
      n.arg_index = r.piece_int({t.substr(4), arg.column + 4}, "an argument index");
    } else if (t == "saturate=false" && n.kind == AscKind::Cast) {
      n.saturate = false;
    } else if (t.starts_with("stride=") && n.kind == AscKind::Gather) {
      GatherDim d;
      d.stride = r.expr({t.substr(7), arg.column + 7});
      n.gather.push_back(std::move(d));
      seen_size.push_back(false);
    } else if (t.starts_with("size=") && n.kind == AscKind::Gather) {
      if (n.gather.empty() || seen_size.back())
        r.fail("'size=' needs 'stride=' before it (one pair per gathered dim)", arg.column);
      n.gather.back().size = r.expr({t.substr(5), arg.column + 5});
      seen_size.back() = true;
    } else if (t.starts_with("name=") && n.kind == AscKind::Gather) {
      const std::string_view name = t.substr(5);
      bool valid = !name.empty() && is_ident_start(name[0]) && !n.gather.empty() &&
                   n.gather.back().name.empty();
      for (char c : name)
        valid = valid && is_ident_char(c);
      if (!valid) r.fail("expected 'name=' and a name after a gathered dim", arg.column);
      n.gather.back().name = std::string(name);
    } else if (t.starts_with("axis=") && n.kind == AscKind::Index) {
      n.axis = r.piece_int({t.substr(5), arg.column + 5}, "an axis index");
    } else if (n.kind == AscKind::Scalar) {
      const char* end = t.data() + t.size();
      auto [ptr, ec] = std::from_chars(t.data(), end, n.scalar);
      if (ec != std::errc() || ptr != end) r.fail("expected a number", arg.column);
    } else {
      r.fail(fmt::format("unexpected argument '{}'", t), arg.column);
    }
  }
  if (n.kind != AscKind::Gather) return;
  if (n.gather.empty() || std::find(seen_size.begin(), seen_size.end(), false) != seen_size.end())
    r.fail(fmt::format("gather {} needs 'stride=' and 'size=' per gathered dim", n.name));
  for (GatherDim& d : n.gather)
    if (d.name.empty()) d.name = n.name;
}

AscNode parse_node(LineReader& r, int expected_id) {
  AscNode n;
  r.skip_space();
  const int id_column = r.column();
  r.expect("%");
  n.id = r.integer("a node id");
  if (n.id != expected_id) r.fail(fmt::format("expected node id %{}", expected_id), id_column);
  n.name = std::string(r.ident("a node name"));
  r.expect("=");
  r.skip_space();
  const int word_column = r.column();
  const std::string_view word = r.ident("a node kind or op");
  parse_kind_word(r, word, word_column, n);
  r.expect("(");
  parse_args(r, r.list(')'), n);
  r.expect(":");
  r.skip_space();
  const int dtype_column = r.column();
  const std::string_view dtype = r.ident("a dtype");
  const std::optional<DType> t = dtype_from_name(dtype);
  if (!t) r.fail(fmt::format("unknown dtype '{}'", dtype), dtype_column);
  n.dtype = *t;
  r.expect("repeats[");
  n.view.repeats = r.exprs(']');
  if (n.kind == AscKind::Load || n.kind == AscKind::Gather || n.kind == AscKind::Store) {
    r.expect("strides[");
    n.view.strides = r.exprs(']');
    r.expect("offset");
    n.view.offset = r.expr(r.rest());
  }
  r.expect_end();
  return n;
}

}  // namespace

AscGraph parse_asc_graph(std::string_view text) {
  AscGraph g;
  enum class State { Header, Nodes, Done } state = State::Header;
  int line_no = 0;
  int last_content_line = 1;  // where "missing ..." at the end points
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    LineReader r(line, line_no);
    if (r.at_end() || r.accept("#")) continue;
    last_content_line = line_no;
    switch (state) {
      case State::Header:
        parse_header(r, g);
        state = State::Nodes;
        break;
      case State::Nodes:
        if (r.accept("}")) {
          r.expect_end();
          state = State::Done;
        } else {
          g.nodes.push_back(parse_node(r, static_cast<int>(g.nodes.size())));
        }
        break;
      case State::Done:
        r.fail("unexpected text after the kernel");
    }
  }
  if (state != State::Done) {
    SourceLocation where;
    where.line = last_content_line;
    throw UserError(where, state == State::Header ? "expected 'kernel'" : "missing '}'");
  }
  // Well-formed text can still describe an inconsistent graph; that is the
  // user's input, so it is a UserError here rather than an internal one.
  try {
    verify(g);
  } catch (const InternalError& e) {
    throw UserError(fmt::format("invalid AscGraph '{}': {}", g.name, e.what()));
  }
  return g;
}

}  // namespace autofuse::ascir
