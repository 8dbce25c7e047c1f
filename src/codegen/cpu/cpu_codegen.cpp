// The module: the prelude, then per kernel its tiling data and tiling
// function (tiling/) and its kernel function (kernel_emitter.h).
#include "autofuse/codegen/cpu_codegen.h"

#include <set>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/kernel_emitter.h"

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

}  // namespace

ModuleSource generate_cpu_module(const std::vector<schedule::ScheduledKernel>& kernels) {
  ModuleSource module;
  module.code = module_prelude();
  std::set<std::string> taken;
  for (const schedule::ScheduledKernel& kernel : kernels) {
    const ascir::AscGraph& g = kernel.graph;
    KernelSource source;
    source.name = kernel_name(g.name, taken);
    source.symbols = g.symbols();
    for (const ascir::AscNode& n : g.nodes) {
      if (n.kind == ascir::AscKind::Data) ++source.num_inputs;
      if (n.kind == ascir::AscKind::Output) ++source.num_outputs;
      if (n.kind == ascir::AscKind::Gather) source.gathers.push_back(n.name);
    }
    module.code +=
        fmt::format("\n// ---- kernel {} ({}, {} template) ----\n", source.name, g.name,
                    kernel.kind == schedule::Template::Reduction ? "reduction" : "elementwise");
    const tiling::TilingSource tiling = tiling::emit_tiling(kernel, source.name);
    module.code += tiling.code + "\n";
    module.code += cpu::KernelEmitter(kernel, source.name, tiling.struct_name).emit();
    module.kernels.push_back(std::move(source));
  }
  return module;
}

}  // namespace autofuse::codegen
