#include "asc_case_util.h"

#include <cstring>

#include <fmt/format.h>
#include <gmock/gmock.h>

#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"

namespace autofuse::codegen_test {

namespace {

const af_machine kMachines[] = {one_core(), many_tiny_blocks(3, 1), many_tiny_blocks(7, 4),
                                many_tiny_blocks(2, 64)};
const af_machine kSplitMachines[] = {split_machine(64, 64), split_machine(5, 4),
                                     split_machine(3, 16)};

// Key 1: streaming stores; key 2: prefetching chunks, ordinary stores; both
// on unaligned outputs.
const RunOptions kOptions[] = {RunOptions{}, RunOptions{1, 3}, RunOptions{2, 5}};

std::string where(const AscCase& c, const sym::Binding& binding) {
  std::string out = c.label + " with";
  for (const auto& [s, v] : binding)
    out += fmt::format(" {}={}", s, v);
  return out;
}

}  // namespace

ascir::AscGraph parse_case(const AscCase& c) {
  const std::string io = fmt::format("inputs({}) outputs({})", fmt::join(c.graph.inputs(), ", "),
                                     fmt::join(c.graph.outputs(), ", "));
  std::string text = c.asc;
  const size_t at = text.find("@IO");
  if (at == std::string::npos) throw std::runtime_error(c.label + ": no @IO in the AscGraph");
  text.replace(at, 3, io);
  return ascir::parse_asc_graph(text);
}

CompiledCases compile_cases(const std::vector<AscCase>& cases) {
  CompiledCases out;
  for (const AscCase& c : cases)
    out.kernels.push_back(schedule::schedule_kernel(parse_case(c)));
  out.module = codegen::generate_cpu_module(out.kernels);
  out.so = compile(out.module);
  return out;
}

std::vector<af_status> run_statuses(const CompiledCases& compiled, size_t i, const AscCase& c,
                                    const std::vector<HostTensor>& inputs,
                                    const sym::Binding& binding) {
  std::vector<af_status> out;
  const codegen::KernelSource& k = compiled.module.kernels.at(i);
  const ascir::AscGraph& asc = compiled.kernels.at(i).graph;
  for (const af_machine& m : kMachines)
    for (const RunOptions& o : kOptions)
      out.push_back(run_kernel(*compiled.so, k, asc, c.graph, inputs, binding, m, o).status);
  if (compiled.kernels.at(i).kind == schedule::Template::Reduction) {
    for (const af_machine& m : kSplitMachines)
      out.push_back(run_phased(*compiled.so, k, asc, c.graph, inputs, binding, m).status);
  }
  return out;
}

void expect_reported(const AscCase& c, const CompiledCases& compiled, size_t i, size_t input,
                     int64_t at, int64_t bad, const std::vector<int>& which,
                     const std::string& bound) {
  for (const sym::Binding& binding : c.bindings) {
    std::vector<HostTensor> inputs = random_inputs(c.graph, binding, 7);
    HostTensor& idx = inputs.at(input);
    const int64_t n = binding.at(bound);
    for (int64_t pos : {int64_t{0}, at % idx.numel(), idx.numel() - 1}) {
      const int64_t old = idx.get_i64(pos);
      idx.set_i64(pos, bad == 0 ? n : bad == 1 ? -n - 1 : bad);  // 0: n, 1: -n-1
      const int64_t value = idx.get_i64(pos);                    // as stored (narrow dtypes wrap)
      if (value >= -n && value < n) {
        idx.set_i64(pos, old);
        continue;
      }
      for (const af_status& st : run_statuses(compiled, i, c, inputs, binding)) {
        const std::string at_pos = fmt::format("{} at {} = {}", where(c, binding), pos, value);
        EXPECT_EQ(st.code, AF_STATUS_GATHER_INDEX) << at_pos;
        EXPECT_THAT(which, ::testing::Contains(st.which)) << at_pos;
        EXPECT_EQ(st.index, value) << at_pos;
        EXPECT_EQ(st.bound, n) << at_pos;
      }
      idx.set_i64(pos, old);
    }
  }
}

void expect_same_bits(const std::vector<AscCase>& cases, const CompiledCases& compiled, size_t i,
                      size_t j) {
  const AscCase& c = cases.at(i);
  const auto same = [](const std::vector<HostTensor>& a, const std::vector<HostTensor>& b) {
    if (a.size() != b.size()) return false;
    for (size_t o = 0; o < a.size(); ++o)
      if (a[o].nbytes() != b[o].nbytes() ||
          std::memcmp(a[o].data(), b[o].data(), a[o].nbytes()) != 0)
        return false;
    return true;
  };
  const auto run = [&](size_t k, const std::vector<HostTensor>& in, const sym::Binding& binding,
                       const af_machine& m, const RunOptions& o) {
    return run_kernel(*compiled.so, compiled.module.kernels.at(k), compiled.kernels.at(k).graph,
                      cases.at(k).graph, in, binding, m, o)
        .outputs;
  };
  for (const sym::Binding& binding : c.bindings) {
    const std::vector<HostTensor> in = random_inputs(c.graph, binding, 3);
    for (const af_machine& m : kMachines)
      for (const RunOptions& o : kOptions)
        EXPECT_TRUE(same(run(i, in, binding, m, o), run(j, in, binding, m, o)))
            << where(c, binding) << " vs " << cases.at(j).label << ", cores " << m.cores << " key "
            << o.force_key;
    if (compiled.kernels.at(i).kind != schedule::Template::Reduction) continue;
    for (const af_machine& m : kSplitMachines) {
      const auto phased = [&](size_t k) {
        return run_phased(*compiled.so, compiled.module.kernels.at(k), compiled.kernels.at(k).graph,
                          cases.at(k).graph, in, binding, m)
            .outputs;
      };
      EXPECT_TRUE(same(phased(i), phased(j)))
          << where(c, binding) << " vs " << cases.at(j).label << ", split cores " << m.cores;
    }
  }
}

std::string check_asc_cases(const std::vector<AscCase>& cases, uint64_t seed) {
  const CompiledCases compiled = compile_cases(cases);
  for (size_t i = 0; i < cases.size(); ++i) {
    const AscCase& c = cases[i];
    const codegen::KernelSource& k = compiled.module.kernels[i];
    const ascir::AscGraph& asc = compiled.kernels[i].graph;
    const auto check = [&](const std::vector<HostTensor>& got, const af_status& status,
                           const std::vector<HostTensor>& want, const std::string& at) {
      EXPECT_EQ(status.code, AF_STATUS_OK) << at;
      for (size_t o = 0; o < want.size(); ++o)
        EXPECT_TRUE(tensors_close(got.at(o), want[o], c.rtol, c.atol)) << at << ", output " << o;
    };
    for (const sym::Binding& binding : c.bindings) {
      const std::vector<HostTensor> inputs = random_inputs(c.graph, binding, seed);
      const std::vector<HostTensor> want = run_reference(c.graph, inputs, binding);
      for (const af_machine& m : kMachines) {
        for (const RunOptions& o : kOptions) {
          const KernelRun run = run_kernel(*compiled.so, k, asc, c.graph, inputs, binding, m, o);
          check(run.outputs, run.status, want,
                fmt::format("{}, cores {} vector {} key {} -> {} blocks", where(c, binding),
                            m.cores, m.vector_bytes, o.force_key, run.block_dim));
        }
      }
      if (compiled.kernels[i].kind != schedule::Template::Reduction) continue;
      for (const af_machine& m : kSplitMachines) {
        for (int64_t max_phases : {int64_t{0}, int64_t{64}}) {
          const PhasedRun run =
              run_phased(*compiled.so, k, asc, c.graph, inputs, binding, m, max_phases);
          check(run.outputs, run.status, want,
                fmt::format("{}, split machine cores {} vector {} max_phases {} -> {} blocks, "
                            "{} phases, split {}, tile {}",
                            where(c, binding), m.cores, m.vector_bytes, max_phases, run.block_dim,
                            run.phases, run.split, run.tile));
        }
      }
    }
  }
  return compiled.module.code;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string typed(const std::string& text, DType table, DType index) {
  return replace_all(replace_all(text, "DT", std::string(dtype_name(table))), "IT",
                     std::string(dtype_name(index)));
}

}  // namespace autofuse::codegen_test
