// Two error channels (see docs/architecture.md):
//  * UserError: the input was wrong (bad file, unknown op, bad attribute,
//    incompatible shapes, a shape binding that violates a guard). It carries
//    where the problem is (file:line:col and/or node name and op) and is meant
//    to be shown to the user; the CLI exits with code 2.
//  * InternalError: an invariant of autofuse itself broke. Raised by
//    AF_CHECK; never used for anything the user could have caused.
// Nothing in autofuse aborts or asserts on user data.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace autofuse {

/// Where in the user's input a problem is. Every field is optional.
struct SourceLocation {
  std::string file;  ///< file name, empty for in-memory text
  int line = 0;      ///< 1-based, 0 when unknown
  int column = 0;    ///< 1-based, 0 when unknown
  std::string node;  ///< node (value) name, empty when unknown
  std::string op;    ///< op name, empty when unknown

  /// "file:3:7: node 'y' (add)" with the unknown parts left out.
  std::string to_string() const;
};

/// An error in what the user gave us. what() = "<location>: <message>".
class UserError : public std::runtime_error {
 public:
  UserError(SourceLocation where, std::string message);
  explicit UserError(std::string message) : UserError(SourceLocation{}, std::move(message)) {}
  const SourceLocation& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string message_;
};

/// A well-formed input that uses something autofuse does not implement (an
/// op type, an attribute value, a dtype, an opset). Same channel as UserError
/// (exit code 2); a separate type so that tools (the conformance runner) can
/// tell "not implemented" from "wrong input" without reading message text.
class UnsupportedError : public UserError {
 public:
  using UserError::UserError;
};

/// A broken internal invariant: a bug in autofuse.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void throw_internal_error(const char* file, int line, const char* condition,
                                       const std::string& message);

}  // namespace autofuse

/// Internal invariant check. Message is a fmt format string + args.
#define AF_CHECK(cond, ...)                                                           \
  do {                                                                                \
    if (!(cond)) [[unlikely]]                                                         \
      ::autofuse::throw_internal_error(__FILE__, __LINE__, #cond,                     \
                                       ::autofuse::detail_format_check(__VA_ARGS__)); \
  } while (0)

namespace autofuse {
inline std::string detail_format_check() {
  return {};
}
template <typename... Args>
std::string detail_format_check(fmt::format_string<Args...> f, Args&&... args) {
  return fmt::format(f, std::forward<Args>(args)...);
}
}  // namespace autofuse
