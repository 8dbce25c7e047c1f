// The module: the prelude, then per kernel its tiling data and tiling
// function (tiling/) and its kernel function (kernel_emitter.h).
#include "autofuse/codegen/cpu_codegen.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/kernel_emitter.h"
#include "codegen/cpu/kernel_group.h"

namespace autofuse::codegen {

namespace {

/// A C identifier from a graph name: other characters become '_', a leading
/// digit gets a prefix, and a clash with an earlier kernel gets a suffix.
std::string kernel_name(const std::string& graph_name, std::set<std::string>& taken) {
  std::string base;
  for (char ch : graph_name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_';
    base += ok ? ch : '_';
  }
  if (base.empty() || (base[0] >= '0' && base[0] <= '9')) base = "k_" + base;
  std::string name = base;
  for (int i = 2; taken.count(name) != 0; ++i)
    name = fmt::format("{}_{}", base, i);
  taken.insert(name);
  return name;
}

/// The embedded prelude without `#pragma once` lines (support/half.h has
/// one): in a main file they only make the compiler warn.
std::string module_prelude() {
  std::string text(kernel_prelude());
  const std::string pragma = "#pragma once";
  for (size_t at = text.find(pragma); at != std::string::npos; at = text.find(pragma, at))
    text.replace(at, pragma.size(), "// (pragma once)");
  return text;
}

/// Appends the wrapper of a group of several kernels to `code`; its source.
KernelSource emit_group(const KernelGroupSpec& group, const std::vector<KernelSource>& sources,
                        std::set<std::string>& taken, std::string& code) {
  KernelSource source;
  source.name = kernel_name(group.name, taken);
  source.num_inputs = group.num_inputs;
  source.num_outputs = group.num_outputs;
  std::vector<cpu::GroupMemberCode> members;
  std::set<std::string> seen;
  auto add_symbol = [&](const std::string& s) {
    if (seen.insert(s).second) source.symbols.push_back(s);
  };
  for (const KernelGroupSpec::Member& m : group.members) {
    const KernelSource& member = sources.at(static_cast<size_t>(m.kernel));
    members.push_back({member.name, member.symbols, member.num_inputs, member.num_outputs});
    for (const std::string& s : member.symbols)
      add_symbol(s);
    source.gathers.insert(source.gathers.end(), member.gathers.begin(), member.gathers.end());
  }
  for (const KernelGroupSpec::Member& m : group.members) {
    std::set<std::string> used;
    sym::collect_symbols(m.output_elements, used);
    for (const std::string& s : used)
      add_symbol(s);
  }
  code += fmt::format("\n// ---- kernel group {}: {} members ----\n", source.name,
                      group.members.size());
  code +=
      cpu::emit_kernel_group(group, source.name, members, source.symbols, !source.gathers.empty());
  return source;
}

/// How often `what` occurs in `text`.
int64_t occurrences(const std::string& text, std::string_view what) {
  int64_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

/// A launch's compile time, roughly, in units of one vector loop: g++ spends
/// it optimizing the vector loops and the vector math inlined into them (an
/// exp or erf is 10-30 instructions that each loop variant optimizes again).
/// A BERT layer's five launches took 0.25-1.7 s to compile, within ~30% of
/// proportional to this; their source sizes were up to 3x off.
int64_t compile_cost(const std::string& launch_code) {
  int64_t math = 0;
  for (std::string_view fn :
       {"af_exp", "af_log(", "af_erf(", "af_tanh(", "af_sigmoid(", "af_sin(", "af_cos(", "af_pow("})
    math += occurrences(launch_code, fn);
  return 1 + occurrences(launch_code, "#pragma omp simd") + 2 * math;
}

}  // namespace

ModuleSource generate_cpu_module(const std::vector<schedule::ScheduledKernel>& kernels,
                                 const std::vector<KernelGroupSpec>& groups) {
  // A kernel's gathers are numbered after those of the members before it.
  std::vector<int> gather_base(kernels.size(), 0);
  std::vector<int> in_group(kernels.size(), 0);
  for (const KernelGroupSpec& group : groups) {
    int base = 0;
    for (const KernelGroupSpec::Member& m : group.members) {
      const auto k = static_cast<size_t>(m.kernel);
      AF_CHECK(k < kernels.size(), "kernel group '{}' names kernel {}", group.name, m.kernel);
      ++in_group[k];
      gather_base[k] = base;
      for (const ascir::AscNode& n : kernels[k].graph.nodes)
        base += static_cast<int>(n.gather.size());  // one per gathered dim
    }
  }
  for (size_t k = 0; k < kernels.size(); ++k)
    AF_CHECK(groups.empty() || in_group[k] == 1, "kernel {} is in {} groups", k, in_group[k]);

  ModuleSource module;
  module.code = module_prelude();
  std::set<std::string> taken;
  std::vector<KernelSource> sources;
  std::vector<std::string> kernel_code;  // per kernel: its tiling and kernel functions
  for (size_t k = 0; k < kernels.size(); ++k) {
    const schedule::ScheduledKernel& kernel = kernels[k];
    const ascir::AscGraph& g = kernel.graph;
    KernelSource source;
    source.name = kernel_name(g.name, taken);
    source.symbols = g.symbols();
    for (const ascir::AscNode& n : g.nodes) {
      if (n.kind == ascir::AscKind::Data) ++source.num_inputs;
      if (n.kind == ascir::AscKind::Output) ++source.num_outputs;
      for (const ascir::GatherDim& d : n.gather)  // one per gathered dim
        source.gathers.push_back(d.name);
    }
    std::string code =
        fmt::format("\n// ---- kernel {} ({}, {} template) ----\n", source.name, g.name,
                    kernel.kind == schedule::Template::Reduction ? "reduction" : "elementwise");
    const tiling::TilingSource tiling = tiling::emit_tiling(kernel, source.name);
    code += tiling.code + "\n";
    code += cpu::KernelEmitter(kernel, source.name, tiling.struct_name, gather_base[k]).emit();
    module.code += code;
    kernel_code.push_back(std::move(code));
    sources.push_back(std::move(source));
  }
  if (groups.empty()) {
    module.kernels = std::move(sources);
    module.launch_code = std::move(kernel_code);
    return module;
  }
  for (const KernelGroupSpec& group : groups) {
    if (group.members.size() == 1) {
      KernelSource& lone = sources.at(static_cast<size_t>(group.members[0].kernel));
      std::vector<int> identity(static_cast<size_t>(lone.num_inputs + lone.num_outputs));
      for (size_t a = 0; a < identity.size(); ++a)
        identity[a] = static_cast<int>(a);
      AF_CHECK(group.members[0].args == identity && group.num_inputs == lone.num_inputs,
               "the group of kernel '{}' alone reorders its args", lone.name);
      module.kernels.push_back(std::move(lone));
      module.launch_code.push_back(kernel_code.at(static_cast<size_t>(group.members[0].kernel)));
      continue;
    }
    std::string wrapper;
    module.kernels.push_back(emit_group(group, sources, taken, wrapper));
    module.code += wrapper;
    // The wrapper holds its members' tiling data: they compile together.
    std::string launch;
    for (const KernelGroupSpec::Member& m : group.members)
      launch += kernel_code.at(static_cast<size_t>(m.kernel));
    module.launch_code.push_back(launch + wrapper);
  }
  return module;
}

std::vector<std::string> split_translation_units(const ModuleSource& module, int max_units) {
  const size_t launches = module.launch_code.size();
  if (max_units <= 1 || launches <= 1) return {module.code};
  const size_t count = std::min(launches, static_cast<size_t>(max_units));
  std::vector<int64_t> cost(launches);
  for (size_t l = 0; l < launches; ++l)
    cost[l] = compile_cost(module.launch_code[l]);
  std::vector<size_t> order(launches);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::vector<std::vector<size_t>> unit_launches(count);
  std::vector<int64_t> unit_cost(count, 0);
  for (size_t launch : order) {
    const auto least = static_cast<size_t>(std::min_element(unit_cost.begin(), unit_cost.end()) -
                                           unit_cost.begin());
    unit_launches[least].push_back(launch);
    unit_cost[least] += cost[launch];
  }
  const std::string prelude = module_prelude();
  std::vector<std::string> units;
  for (std::vector<size_t>& members : unit_launches) {
    std::sort(members.begin(), members.end());  // the module's order
    std::string unit = prelude;
    for (size_t launch : members)
      unit += module.launch_code[launch];
    units.push_back(std::move(unit));
  }
  return units;
}

}  // namespace autofuse::codegen
