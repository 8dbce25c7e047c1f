#include "tools/shape_bindings.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "autofuse/error.h"

namespace autofuse::tools {

namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return std::string(s);
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

sym::Binding parse_shape_binding(const std::string& text) {
  sym::Binding binding;
  std::string_view rest = text;
  while (true) {
    size_t comma = rest.find(',');
    std::string item = trim(rest.substr(0, comma));
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw UserError(fmt::format("--shape '{}': expected SYMBOL=VALUE, got '{}'", text, item));
    std::string name = trim(std::string_view(item).substr(0, eq));
    std::string value_text = trim(std::string_view(item).substr(eq + 1));
    if (!is_identifier(name))
      throw UserError(fmt::format("--shape '{}': '{}' is not a symbol name", text, name));
    int64_t value = 0;
    auto [end, ec] =
        std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (ec != std::errc() || end != value_text.data() + value_text.size() || value < 0)
      throw UserError(fmt::format("--shape '{}': value of {} must be an integer >= 0, got '{}'",
                                  text, name, value_text));
    if (!binding.emplace(name, value).second)
      throw UserError(fmt::format("--shape '{}': symbol {} given twice", text, name));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return binding;
}

std::vector<sym::Binding> bindings_for_graph(const Graph& graph,
                                             const std::vector<std::string>& shape_args) {
  std::vector<std::string> symbols = graph.symbols();
  if (shape_args.empty()) {
    if (symbols.empty()) return {sym::Binding{}};
    throw UserError(
        fmt::format("graph '{}' has symbolic sizes {}; give their values with --shape {}=...",
                    graph.name(), fmt::join(symbols, ", "), fmt::join(symbols, "=...,")));
  }
  std::vector<sym::Binding> bindings;
  for (const std::string& arg : shape_args) {
    sym::Binding binding = parse_shape_binding(arg);
    for (const std::string& s : symbols)
      if (!binding.count(s))
        throw UserError(fmt::format("--shape '{}' gives no value for symbol {} (graph '{}' has {})",
                                    arg, s, graph.name(), fmt::join(symbols, ", ")));
    for (const auto& [name, value] : binding)
      if (std::find(symbols.begin(), symbols.end(), name) == symbols.end())
        throw UserError(
            fmt::format("--shape '{}': graph '{}' has no symbol {}{}", arg, graph.name(), name,
                        symbols.empty() ? std::string(" (it has no symbols)")
                                        : fmt::format(" (it has {})", fmt::join(symbols, ", "))));
    bindings.push_back(std::move(binding));
  }
  return bindings;
}

std::string binding_to_string(const sym::Binding& binding, const std::vector<std::string>& order) {
  std::vector<std::string> items;
  for (const std::string& name : order)
    if (auto it = binding.find(name); it != binding.end())
      items.push_back(fmt::format("{}={}", name, it->second));
  for (const auto& [name, value] : binding)
    if (std::find(order.begin(), order.end(), name) == order.end())
      items.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(items, ", "));
}

}  // namespace autofuse::tools
