// emit_kernel_group: the group's tiling data holds every member's tiling
// data and its slot (af_group_slot, kernel_prelude.h); the tiling function
// tiles each member with its own symbols, then af_group_schedule lays out
// the launches; the kernel function gives each member its args (a view of
// the group's) and runs the member blocks the launch's block index owns,
// or, in serial mode, every member's launches in order.
#include "codegen/cpu/kernel_group.h"

#include <algorithm>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"

namespace autofuse::codegen::cpu {

namespace {

std::string symbol_index_list(const std::vector<std::string>& member,
                              const std::vector<std::string>& group) {
  std::vector<std::string> at;
  for (const std::string& s : member) {
    auto it = std::find(group.begin(), group.end(), s);
    AF_CHECK(it != group.end(), "kernel group lacks symbol '{}'", s);
    at.push_back(fmt::format("symbols[{}]", it - group.begin()));
  }
  return fmt::format("{}", fmt::join(at, ", "));
}

std::string tiling_code(const KernelGroupSpec& spec, const std::string& name,
                        const std::string& data, const std::vector<GroupMemberCode>& members,
                        const std::vector<std::string>& symbols) {
  const size_t n = members.size();
  std::string c = fmt::format(
      "extern \"C\" void {}_tiling(const int64_t* symbols, const af_machine* machine,\n"
      "    void* tiling_data) {{\n  {}* td = ({}*)tiling_data;\n  (void)symbols;\n",
      name, data, data);
  for (size_t i = 0; i < symbols.size(); ++i)
    c += fmt::format("  const int64_t {} = symbols[{}];\n  (void){};\n",
                     tiling::symbol_field(symbols[i]), i, tiling::symbol_field(symbols[i]));
  // A member with nothing to write is not tiled (its tiling may divide by
  // a zero size); af_group_schedule skips it.
  std::vector<std::string> levels, headers, empties;
  for (size_t k = 0; k < n; ++k)
    empties.push_back(fmt::format(
        "({}) == 0", sym::to_cpp(spec.members[k].output_elements,
                                 [](const std::string& s) { return tiling::symbol_field(s); })));
  c += fmt::format("  const int64_t empty[{}] = {{{}}};\n", n, fmt::join(empties, ", "));
  for (size_t k = 0; k < n; ++k) {
    const GroupMemberCode& m = members[k];
    c += fmt::format("  if (!empty[{}]) {{\n", k);
    c += fmt::format("    td->m{}.header.max_phases = td->header.max_phases;\n", k);
    if (m.symbols.empty()) {
      c += fmt::format("    {}_tiling(symbols, machine, &td->m{});\n", m.name, k);
    } else {
      c += fmt::format("    const int64_t s[] = {{{}}};\n    {}_tiling(s, machine, &td->m{});\n",
                       symbol_index_list(m.symbols, symbols), m.name, k);
    }
    c += "  }\n";
    levels.push_back(std::to_string(spec.members[k].level));
    headers.push_back(fmt::format("&td->m{}.header", k));
  }
  c += fmt::format("  static const int64_t level[{}] = {{{}}};\n", n, fmt::join(levels, ", "));
  c += fmt::format("  const af_tiling_header* const headers[{}] = {{{}}};\n", n,
                   fmt::join(headers, ", "));
  c += fmt::format(
      "  af_group_schedule({}, headers, level, empty, td->slot, &td->header, &td->serial);\n}}\n\n",
      n);
  return c;
}

}  // namespace

std::string emit_kernel_group(const KernelGroupSpec& spec, const std::string& name,
                              const std::vector<GroupMemberCode>& members,
                              const std::vector<std::string>& symbols, bool has_gathers) {
  AF_CHECK(members.size() == spec.members.size() && members.size() >= 2,
           "kernel group '{}' with {} members", name, members.size());
  const size_t n = members.size();
  const std::string data = name + "_tiling_data";
  std::string c =
      fmt::format("struct {} {{\n  af_tiling_header header;\n  int64_t serial;\n", data);
  c += fmt::format("  af_group_slot slot[{}];\n", n);
  for (size_t k = 0; k < n; ++k)
    c += fmt::format("  {}_tiling_data m{};\n", members[k].name, k);
  c += "};\n\n";
  c += fmt::format("extern \"C\" int64_t {}_tiling_data_size(void) {{\n", name);
  c += fmt::format("  return (int64_t)sizeof({});\n}}\n\n", data);
  c += tiling_code(spec, name, data, members, symbols);

  const int group_args = spec.num_inputs + spec.num_outputs;
  c += fmt::format(
      "extern \"C\" void {}_kernel(const void* tiling_data, void* const* args, int64_t "
      "block_idx) {{\n  const {}* td = (const {}*)tiling_data;\n",
      name, data, data);
  c += fmt::format("  char* const ws = (char*)args[{}];\n", group_args);
  c += has_gathers ? fmt::format("  void* const st = args[{}];\n", group_args + 1)
                   : "  void* const st = 0;\n";
  for (size_t k = 0; k < n; ++k) {
    const KernelGroupSpec::Member& m = spec.members[k];
    AF_CHECK(static_cast<int>(m.args.size()) == members[k].num_inputs + members[k].num_outputs,
             "member {} of kernel group '{}' maps {} args", k, name, m.args.size());
    std::vector<std::string> args;
    for (int a : m.args) {
      AF_CHECK(a >= 0 && a < group_args, "member {} of kernel group '{}' reads arg {}", k, name, a);
      args.push_back(fmt::format("args[{}]", a));
    }
    args.push_back(fmt::format("ws ? ws + td->slot[{}].workspace : (char*)0", k));
    args.push_back("st");
    c += fmt::format("  void* const a{}[] = {{{}}};\n", k, fmt::join(args, ", "));
  }
  c += "  if (td->serial) {\n";
  for (size_t k = 0; k < n; ++k)
    c += fmt::format("    af_group_run_all({}_kernel, &td->m{}, a{}, &td->slot[{}]);\n",
                     members[k].name, k, k, k);
  c += "    return;\n  }\n";
  c += "  const int64_t p = block_idx / td->header.block_dim;\n";
  c += "  const int64_t b = block_idx % td->header.block_dim;\n";
  for (size_t k = 0; k < n; ++k)
    c += fmt::format("  af_group_run({}_kernel, &td->m{}, a{}, &td->slot[{}], p, b);\n",
                     members[k].name, k, k, k);
  c += "}\n";
  return c;
}

}  // namespace autofuse::codegen::cpu
