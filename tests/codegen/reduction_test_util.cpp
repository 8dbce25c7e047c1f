#include "reduction_test_util.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"

namespace autofuse::codegen_test {

namespace {

struct Free {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<void, Free>;

Buffer garbage_buffer(size_t bytes) {
  const size_t rounded = (bytes + 64) / 64 * 64;
  Buffer b(std::aligned_alloc(64, rounded));
  if (!b) throw std::bad_alloc();
  std::memset(b.get(), 0xA5, rounded);
  return b;
}

}  // namespace

af_machine split_machine(int64_t cores, int64_t vector_bytes) {
  return af_machine{cores, 32 << 10, 1 << 20, 32 << 20, vector_bytes, 1, 0};
}

PhasedRun run_phased(const jit::Module& module, const codegen::KernelSource& k,
                     const ascir::AscGraph& asc, const Graph& graph,
                     const std::vector<HostTensor>& inputs, const sym::Binding& binding,
                     const af_machine& machine, int64_t max_phases) {
  using SizeFn = int64_t (*)();
  using TilingFn = void (*)(const int64_t*, const af_machine*, void*);
  using KernelFn = void (*)(const void*, void* const*, int64_t);
  auto size_fn = reinterpret_cast<SizeFn>(module.symbol(k.name + "_tiling_data_size"));
  auto tiling_fn = reinterpret_cast<TilingFn>(module.symbol(k.name + "_tiling"));
  auto kernel_fn = reinterpret_cast<KernelFn>(module.symbol(k.name + "_kernel"));
  std::vector<int64_t> symbols;
  for (const std::string& s : k.symbols)
    symbols.push_back(binding.at(s));
  std::vector<int64_t> td(static_cast<size_t>((size_fn() + 7) / 8) + 1, 0);
  auto* header = reinterpret_cast<af_tiling_header*>(td.data());
  header->max_phases = max_phases;
  tiling_fn(symbols.data(), &machine, td.data());

  PhasedRun run;
  run.block_dim = header->block_dim;
  run.phases = std::max<int64_t>(1, header->num_phases);
  run.workspace_bytes = header->workspace_bytes;
  // Field order of tiling.cpp's struct: header, symbols, axis sizes, work,
  // chunk, split, seg_len, tile, tiles, ws_slot, fold, pf_rows.
  const size_t split_at =
      sizeof(af_tiling_header) / 8 + k.symbols.size() + static_cast<size_t>(asc.num_axes()) + 2;
  run.split = td.at(split_at);
  run.tile = td.at(split_at + 2);
  run.fold = td.at(split_at + 5);
  run.pf_rows = td.at(split_at + 6);

  std::vector<void*> args;
  for (ValueId v : asc.inputs) {
    const auto& ins = graph.inputs();
    const auto it = std::find(ins.begin(), ins.end(), v);
    if (it == ins.end()) throw std::runtime_error("kernel input is not a graph input");
    args.push_back(const_cast<void*>(inputs.at(static_cast<size_t>(it - ins.begin())).data()));
  }
  std::vector<Buffer> buffers;
  for (ValueId v : asc.outputs) {
    const TensorType& t = graph.value(v).type;
    run.outputs.emplace_back(t.dtype, concrete_shape(t.shape, binding));
    buffers.push_back(garbage_buffer(run.outputs.back().nbytes()));
    args.push_back(buffers.back().get());
  }
  Buffer workspace;
  if (run.workspace_bytes > 0) workspace = garbage_buffer(static_cast<size_t>(run.workspace_bytes));
  args.push_back(workspace.get());  // the workspace slot (null: none)
  args.push_back(&run.status);
  for (int64_t p = 0; p < run.phases; ++p)
    for (int64_t b = run.block_dim; b-- > 0;)
      kernel_fn(td.data(), args.data(), p * run.block_dim + b);
  for (size_t o = 0; o < run.outputs.size(); ++o)
    if (run.outputs[o].nbytes() > 0)
      std::memcpy(run.outputs[o].data(), buffers[o].get(), run.outputs[o].nbytes());
  return run;
}

std::string check_split_cases(std::vector<GraphCase>& cases, bool expect_split, uint64_t seed,
                              const std::string& prefix) {
  std::vector<schedule::ScheduledKernel> kernels;
  for (GraphCase& c : cases)
    kernels.push_back(schedule_graph(c.graph));
  codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  module.code = prefix + module.code;
  const std::shared_ptr<jit::Module> so = compile(module);
  const af_machine machines[] = {
      one_core(), many_tiny_blocks(3, 1), many_tiny_blocks(7, 4), split_machine(64, 64),
      split_machine(5, 4), split_machine(3, 16),
      // Data "larger than the cache": streaming stores, column prefetches.
      af_machine{2, 32 << 10, 1 << 20, 1 << 10, 64, 1, 0},
      // A 4 KiB L2: centered moments in blocks of 64 rows (tiling.h kMomentRowsField).
      af_machine{2, 32 << 10, 4 << 10, 1 << 10, 64, 1, 0}};
  for (size_t i = 0; i < cases.size(); ++i) {
    GraphCase& c = cases[i];
    bool split = false;
    for (const sym::Binding& binding : c.bindings) {
      std::vector<HostTensor> inputs = random_inputs(c.graph, binding, seed);
      if (c.make_inputs != nullptr) inputs = c.make_inputs(c.graph, binding);
      const std::vector<HostTensor> want = run_reference(c.graph, inputs, binding);
      for (const af_machine& m : machines) {
        for (int64_t max_phases : {int64_t{0}, int64_t{64}}) {
          const PhasedRun run = run_phased(*so, module.kernels[i], kernels[i].graph, c.graph,
                                           inputs, binding, m, max_phases);
          std::string where = fmt::format("{} with", c.label);
          for (const auto& [s, v] : binding)
            where += fmt::format(" {}={}", s, v);
          where += fmt::format(
              ", cores {} vector {} max_phases {} -> {} blocks, {} phases, split {}, tile {}, fold "
              "{}",
              m.cores, m.vector_bytes, max_phases, run.block_dim, run.phases, run.split, run.tile,
              run.fold);
          if (max_phases == 0) {
            EXPECT_EQ(run.phases, 1) << where;
            EXPECT_EQ(run.workspace_bytes, 0) << where;
          }
          split = split || run.split > 1;
          for (size_t o = 0; o < want.size(); ++o)
            EXPECT_TRUE(tensors_close(run.outputs.at(o), want[o], c.rtol, c.atol))
                << where << ", output " << o;
        }
      }
    }
    if (expect_split) {
      EXPECT_TRUE(split) << c.label << " never split";
    }
  }
  return module.code;
}

}  // namespace autofuse::codegen_test
