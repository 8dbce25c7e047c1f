#include "graph/text_lexer.h"

#include <cstring>

namespace autofuse::text {
namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

// A character as it reads in an error message (bytes outside printable ASCII
// are escaped so that binary junk does not garble the message).
std::string describe_char(char c) {
  auto u = static_cast<unsigned char>(c);
  if (c == '\'') return "\"'\"";
  if (u >= 0x20 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("'\\x{:02x}'", u);
}

}  // namespace

std::string Token::describe() const {
  if (kind == TokKind::End) return "end of input";
  constexpr size_t kMaxShown = 40;
  if (text.size() > kMaxShown) return fmt::format("'{}...'", text.substr(0, kMaxShown));
  return fmt::format("'{}'", text);
}

void Lexer::advance() {
  if (text_[pos_] == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  ++pos_;
}

void Lexer::skip_space_and_comments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n')
        advance();
    } else {
      break;
    }
  }
}

Token Lexer::make(TokKind kind, size_t begin, int line, int column) const {
  return Token{kind, text_.substr(begin, pos_ - begin), line, column};
}

Token Lexer::lex_number(size_t begin, int line, int column) {
  bool is_float = false;
  while (is_digit(peek()))
    advance();
  if (peek() == '.') {
    is_float = true;
    advance();
    while (is_digit(peek()))
      advance();
  }
  if (peek() == 'e' || peek() == 'E') {
    // Only an exponent if digits follow; otherwise `2e` is a number and an
    // identifier, which the parser rejects with a better message.
    size_t digits_at = (peek(1) == '+' || peek(1) == '-') ? 2 : 1;
    if (is_digit(peek(digits_at))) {
      is_float = true;
      for (size_t i = 0; i < digits_at; ++i)
        advance();
      while (is_digit(peek()))
        advance();
    }
  }
  return make(is_float ? TokKind::Float : TokKind::Int, begin, line, column);
}

Token Lexer::next() {
  skip_space_and_comments();
  int line = line_, column = column_;
  size_t begin = pos_;
  if (pos_ >= text_.size()) return Token{TokKind::End, {}, line, column};
  char c = text_[pos_];
  if (is_ident_start(c)) {
    while (pos_ < text_.size() && is_ident_char(text_[pos_]))
      advance();
    return make(TokKind::Ident, begin, line, column);
  }
  if (is_digit(c)) return lex_number(begin, line, column);
  if (c != '\0' && std::strchr("()[]{},:=+-*", c) != nullptr) {
    advance();
    return make(TokKind::Punct, begin, line, column);
  }
  throw UserError(location(line, column), fmt::format("unexpected character {}", describe_char(c)));
}

}  // namespace autofuse::text
