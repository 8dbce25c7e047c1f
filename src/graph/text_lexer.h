// Tokenizer for the `.af` text format (see autofuse/graph/text.h). Private to
// the text parser. Tokens are produced on demand so that an error is reported
// at the first problem in reading order, whether it is lexical or syntactic.
#pragma once

#include <string>
#include <string_view>

#include "autofuse/error.h"

namespace autofuse::text {

/// A position in a text file (no node or op).
inline SourceLocation text_location(const std::string& file, int line, int column) {
  SourceLocation where;
  where.file = file;
  where.line = line;
  where.column = column;
  return where;
}

enum class TokKind : uint8_t {
  Ident,  // [A-Za-z_][A-Za-z0-9_]*
  Int,    // decimal digits, unsigned (a leading '-' is a separate token)
  Float,  // digits with a '.' and/or an exponent
  Punct,  // one of ( ) [ ] { } , : = + - *
  End,    // end of input
};

struct Token {
  TokKind kind = TokKind::End;
  std::string_view text;  ///< a view into the parsed text
  int line = 1;
  int column = 1;

  bool is(char punct) const {
    return kind == TokKind::Punct && text.size() == 1 && text[0] == punct;
  }
  bool is_ident(std::string_view name) const { return kind == TokKind::Ident && text == name; }
  /// How the token reads in an error message: `'x'` or `end of input`.
  std::string describe() const;
};

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  /// The next token; UserError on a character that starts no token.
  Token next();

  /// A location in the lexed file.
  SourceLocation location(int line, int column) const { return text_location(file_, line, column); }

 private:
  void skip_space_and_comments();
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void advance();
  Token make(TokKind kind, size_t begin, int line, int column) const;
  Token lex_number(size_t begin, int line, int column);

  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace autofuse::text
