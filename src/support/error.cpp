#include "autofuse/error.h"

namespace autofuse {

std::string SourceLocation::to_string() const {
  std::string out;
  if (!file.empty() || line > 0) {
    out += file.empty() ? "<input>" : file;
    if (line > 0) out += fmt::format(":{}", line);
    if (column > 0) out += fmt::format(":{}", column);
  }
  if (!node.empty()) {
    if (!out.empty()) out += ": ";
    out += fmt::format("node '{}'", node);
    if (!op.empty()) out += fmt::format(" ({})", op);
  } else if (!op.empty()) {
    if (!out.empty()) out += ": ";
    out += fmt::format("op {}", op);
  }
  return out;
}

static std::string compose(const SourceLocation& where, const std::string& message) {
  std::string loc = where.to_string();
  return loc.empty() ? message : loc + ": " + message;
}

UserError::UserError(SourceLocation where, std::string message)
    : std::runtime_error(compose(where, message)),
      where_(std::move(where)),
      message_(std::move(message)) {}

void throw_internal_error(const char* file, int line, const char* condition,
                          const std::string& message) {
  throw InternalError(fmt::format("internal error at {}:{}: check '{}' failed{}{}", file, line,
                                  condition, message.empty() ? "" : ": ", message));
}

}  // namespace autofuse
