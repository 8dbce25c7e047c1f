// FusionConfig from flag text (AUTOFUSE_FLAGS).
#include <charconv>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "autofuse/fuse/fusion.h"

namespace autofuse::fuse {

namespace {

constexpr std::string_view kKnownFlags =
    "--max_fusion_size=N, --max_group_size=N, --disable=reduce,broadcast,move_views,group,all, "
    "--log_refusals";

/// Splits on any of `separators`, dropping empty pieces.
std::vector<std::string_view> split(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> pieces;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of(separators, pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) pieces.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return pieces;
}

/// Parses flag text; `source` names where it came from in error messages.
class FlagParser {
 public:
  explicit FlagParser(std::string_view source) : source_(source) {}
  FusionConfig parse(std::string_view flags) const;

 private:
  [[noreturn]] void bad_value(std::string_view flag, std::string_view value,
                              std::string_view expected) const {
    throw UserError(
        fmt::format("{}: bad value '{}' for {} (expected {})", source_, value, flag, expected));
  }
  int parse_size(std::string_view flag, std::string_view value) const {
    int n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n < 1)
      bad_value(flag, value, "an integer >= 1");
    return n;
  }
  bool parse_bool(std::string_view flag, std::string_view value) const {
    if (value == "true" || value == "1") return true;
    if (value == "false" || value == "0") return false;
    bad_value(flag, value, "true, false, 1 or 0");
  }

  std::string_view source_;
};

FusionConfig FlagParser::parse(std::string_view flags) const {
  FusionConfig config;
  for (std::string_view token : split(flags, "; \t\r\n")) {
    const size_t eq = token.find('=');
    const std::string_view flag = token.substr(0, eq);
    const std::optional<std::string_view> value =
        eq == std::string_view::npos ? std::nullopt : std::optional(token.substr(eq + 1));
    if (flag == "--max_fusion_size") {
      if (!value) bad_value(flag, "", "an integer >= 1");
      config.max_fusion_size = parse_size(flag, *value);
    } else if (flag == "--max_group_size") {
      if (!value) bad_value(flag, "", "an integer >= 1");
      config.max_group_size = parse_size(flag, *value);
    } else if (flag == "--disable") {
      if (!value || value->empty())
        bad_value(flag, "", "reduce, broadcast, move_views, group or all");
      for (std::string_view what : split(*value, ",")) {
        if (what == "reduce") {
          config.fuse_reductions = false;
        } else if (what == "broadcast") {
          config.fuse_broadcasts = false;
        } else if (what == "move_views") {
          config.move_views = false;
        } else if (what == "group") {
          config.group_kernels = false;
        } else if (what == "all") {
          config.enabled = false;
        } else {
          bad_value(flag, what, "reduce, broadcast, move_views, group or all");
        }
      }
    } else if (flag == "--log_refusals") {
      config.log_refusals = value ? parse_bool(flag, *value) : true;
    } else {
      throw UserError(
          fmt::format("{}: unknown flag '{}' (known: {})", source_, token, kKnownFlags));
    }
  }
  return config;
}

}  // namespace

FusionConfig FusionConfig::from_flags(std::string_view flags) {
  return FlagParser("fusion flags").parse(flags);
}

FusionConfig FusionConfig::from_env() {
  const char* flags = std::getenv("AUTOFUSE_FLAGS");
  if (flags == nullptr) return FusionConfig{};
  return FlagParser("AUTOFUSE_FLAGS").parse(flags);
}

}  // namespace autofuse::fuse
