// The Executable: runs a compiled Program. Built once: the storage of every
// value (graph inputs are read in place; reshapes alias their input; a value
// that is, or aliases, a graph output lives in the output tensor; constants
// are materialized now; everything else gets a slot in the arena) and the
// list of steps. Per distinct input shape (a small LRU cache): the symbol
// binding, concrete shapes, every kernel's tiling data, and the arena
// offsets (intermediate values, and the workspace of kernels whose tiling
// asks for one, live during that kernel's step only). A kernel runs as
// num_phases launches of its blocks on the pool, in order (kernel_abi.h). A
// kernel with gathers also gets an af_status, zeroed before its first
// launch and checked after each: a bad index is a UserError naming the
// gather (the run stops; the inputs are untouched and the next run starts
// afresh). A run with a known shape allocates nothing but run()'s outputs.
// bare_calls() records the steps of one run, with their pointers and tiling
// data, into a BareCallList (bare_calls.h) instead of running them.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <numeric>

#include "autofuse/error.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "runtime/bare_calls.h"
#include "runtime/library.h"
#include "runtime/machine.h"
#include "runtime/memory_plan.h"
#include "runtime/program.h"
#include "runtime/thread_pool.h"

namespace autofuse::runtime {

namespace {

/// Distinct input shapes remembered (each holds its plan and tiling data).
constexpr size_t kMaxShapeEntries = 16;
/// af_tiling_header::max_phases offered to tiling functions: any number of
/// launches (a kernel asks for one per pass of its reduction, plus one).
constexpr int64_t kMaxPhases = int64_t{1} << 20;

enum class StorageKind : uint8_t { Input, Output, Constant, Arena };

/// Values that share bytes: a source value and the reshapes of it.
struct Group {
  ValueId source = -1;
  StorageKind storage = StorageKind::Arena;
  int slot = 0;  // input index, output index, constant index or arena buffer index
  int first_step = 0, last_step = 0;  // Arena: live range
};

enum class StepKind : uint8_t { Kernel, Library, Fill };
struct Step {
  StepKind kind;
  int index;  // kernel index, or node id
};

struct ShapeEntry {
  std::vector<int64_t> key;                  // per input: rank, dims...
  std::vector<std::vector<int64_t>> shapes;  // per value (empty when unused)
  std::vector<int64_t> arena_offsets;        // per arena buffer
  int64_t arena_bytes = 0;
  std::vector<std::vector<uint64_t>> tiling;  // per kernel
  std::vector<int64_t> block_dim;             // per kernel; 0: no work, skipped
  std::vector<int64_t> phases;                // per kernel: launches, >= 1
  std::vector<int64_t> workspace_offset;      // per kernel: in the arena; -1: none
  uint64_t last_use = 0;
};

class ExecutableImpl final : public Executable {
 public:
  ExecutableImpl(Program program, int threads);

  std::vector<HostTensor> run(std::span<const HostTensor> inputs) override;
  void run_into(std::span<const HostTensor> inputs, std::span<HostTensor> outputs) override;
  std::unique_ptr<BareCalls> bare_calls(std::span<const HostTensor> inputs,
                                        std::span<HostTensor> outputs) override;
  const fuse::FusedGraph& fused() const override { return program_.fused; }
  const CompileReport& report() const override { return program_.report; }

 private:
  const Graph& graph() const { return *program_.fused.graph; }
  int group_of(ValueId v) const { return group_of_[static_cast<size_t>(v)]; }
  void plan_storage();
  /// Region r is a kernel group's member after its first (run by the
  /// group's launch, the first member's step).
  bool in_later_group_place(int r) const;
  void add_use(ValueId v, int step);
  ShapeEntry& entry_for(std::span<const HostTensor> inputs);
  ShapeEntry make_entry(std::span<const HostTensor> inputs) const;
  bool matches(const ShapeEntry& e, std::span<const HostTensor> inputs) const;
  void check_outputs(const ShapeEntry& e, std::span<HostTensor> outputs) const;
  /// Runs the steps; with `record`, adds them to it instead (its own arena).
  void execute(const ShapeEntry& e, std::span<const HostTensor> inputs,
               std::span<HostTensor> outputs, BareCallList* record = nullptr);
  TensorView view(const ShapeEntry& e, ValueId v) const;
  [[noreturn]] void throw_status(const LoadedKernel& kernel) const;

  Program program_;
  std::shared_ptr<ThreadPool> pool_;  // shared with other executables (ThreadPool::shared)
  af_machine machine_;
  Scratch arena_;
  Scratch library_scratch_;
  DnnlCache dnnl_cache_;  // oneDNN primitives per matmul / conv problem

  std::vector<int> group_of_;  // per value; -1: not stored at run time
  std::vector<Group> groups_;
  std::vector<HostTensor> constants_;
  int num_arena_buffers_ = 0;
  std::vector<Step> steps_;
  std::vector<int> kernel_step_;                    // per kernel: its step
  std::vector<std::pair<int, int>> output_copies_;  // (group, output index)

  std::mutex mutex_;  // one run at a time: the state below is per run
  std::vector<ShapeEntry> entries_;
  uint64_t use_clock_ = 0;
  std::vector<void*> group_ptr_;
  std::vector<std::vector<void*>> kernel_args_;
  af_status status_{};  // the af_status of the kernel running (those with gathers)
  std::vector<std::vector<TensorView>> step_inputs_, step_outputs_;
};

ExecutableImpl::ExecutableImpl(Program program, int threads)
    : program_(std::move(program)),
      pool_(ThreadPool::shared(threads > 0 ? threads : static_cast<int>(detect_machine().cores))),
      machine_(detect_machine(pool_->num_threads())) {
  AF_CHECK(program_.fused.graph != nullptr, "program without a graph");
  plan_storage();
  group_ptr_.assign(groups_.size(), nullptr);
  kernel_args_.resize(program_.kernels.size());
  // Inputs, outputs, the workspace and the status (kernel_abi.h).
  for (size_t k = 0; k < program_.kernels.size(); ++k) {
    std::vector<void*>& args = kernel_args_[k];
    args.resize(program_.kernels[k].inputs.size() + program_.kernels[k].outputs.size() + 2);
    args.back() = &status_;
  }
  kernel_step_.assign(program_.kernels.size(), -1);
  for (size_t s = 0; s < steps_.size(); ++s)
    if (steps_[s].kind == StepKind::Kernel)
      kernel_step_.at(static_cast<size_t>(steps_[s].index)) = static_cast<int>(s);
  step_inputs_.resize(steps_.size());
  step_outputs_.resize(steps_.size());
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (steps_[s].kind == StepKind::Kernel) continue;
    const Node& node = graph().node(steps_[s].index);
    step_inputs_[s].resize(node.inputs.size());
    step_outputs_[s].resize(node.outputs.size());
  }
}

bool ExecutableImpl::in_later_group_place(int r) const {
  for (const fuse::KernelGroup& group : program_.fused.groups)
    if (std::find(group.regions.begin() + 1, group.regions.end(), r) != group.regions.end())
      return true;
  return false;
}

void ExecutableImpl::add_use(ValueId v, int step) {
  Group& g = groups_[static_cast<size_t>(group_of(v))];
  g.last_step = std::max(g.last_step, step);
}

void ExecutableImpl::plan_storage() {
  const Graph& g = graph();
  const size_t num_values = g.values().size();
  // Reshape outputs join their input's group (a view: same bytes).
  std::vector<ValueId> alias_of(num_values);
  std::iota(alias_of.begin(), alias_of.end(), 0);
  for (const fuse::Region& region : program_.fused.regions) {
    if (region.kind != fuse::RegionKind::View) continue;
    for (NodeId id : region.nodes) {
      const Node& node = g.node(id);
      AF_CHECK(node.op == OpKind::Reshape && node.inputs.size() == 1,
               "view region '{}' holds a {} node", region.name, op_name(node.op));
      alias_of[static_cast<size_t>(node.outputs[0])] = node.inputs[0];
    }
  }
  auto source_of = [&](ValueId v) {
    while (alias_of[static_cast<size_t>(v)] != v)
      v = alias_of[static_cast<size_t>(v)];
    return v;
  };

  group_of_.assign(num_values, -1);
  std::vector<int> group_of_source(num_values, -1);
  auto use_value = [&](ValueId v) {
    if (group_of_[static_cast<size_t>(v)] >= 0) return;
    const ValueId s = source_of(v);
    int& gi = group_of_source[static_cast<size_t>(s)];
    if (gi < 0) {
      gi = static_cast<int>(groups_.size());
      groups_.push_back(Group{s});
    }
    group_of_[static_cast<size_t>(v)] = gi;
  };

  // Steps, in region order; every value a step reads or writes gets a group.
  for (size_t r = 0; r < program_.fused.regions.size(); ++r) {
    const fuse::Region& region = program_.fused.regions[r];
    switch (region.kind) {
      case fuse::RegionKind::Kernel: {
        auto it =
            std::find_if(program_.kernels.begin(), program_.kernels.end(),
                         [&](const LoadedKernel& k) { return k.region == static_cast<int>(r); });
        if (it == program_.kernels.end() && in_later_group_place(static_cast<int>(r))) break;
        AF_CHECK(it != program_.kernels.end(), "kernel region '{}' has no kernel", region.name);
        steps_.push_back({StepKind::Kernel, static_cast<int>(it - program_.kernels.begin())});
        for (ValueId v : it->inputs)
          use_value(v);
        for (ValueId v : it->outputs)
          use_value(v);
        break;
      }
      case fuse::RegionKind::Library:
      case fuse::RegionKind::Constant:
        for (NodeId id : region.nodes) {
          const Node& node = g.node(id);
          AF_CHECK(has_library_impl(node.op),
                   "region '{}' holds a {} node, which has no "
                   "library implementation",
                   region.name, op_name(node.op));
          const bool creation = node.op == OpKind::Constant || node.op == OpKind::Iota;
          bool static_shape = true;
          for (const sym::Expr& d : g.value(node.outputs[0]).type.shape)
            static_shape = static_shape && d.is_const();
          if (creation && static_shape) {
            // Materialized once, now.
            const TensorType& t = g.value(node.outputs[0]).type;
            std::vector<int64_t> shape;
            for (const sym::Expr& d : t.shape)
              shape.push_back(*d.as_const());
            HostTensor c(t.dtype, shape);
            TensorView out{c.data(), c.dtype(), c.shape()};
            LibraryContext ctx{*pool_, library_scratch_, machine_.min_block_bytes, &dnnl_cache_};
            run_library_node(g, node, {}, std::span<const TensorView>(&out, 1), ctx);
            use_value(node.outputs[0]);
            Group& grp = groups_[static_cast<size_t>(group_of(node.outputs[0]))];
            grp.storage = StorageKind::Constant;
            grp.slot = static_cast<int>(constants_.size());
            constants_.push_back(std::move(c));
            continue;
          }
          steps_.push_back({creation ? StepKind::Fill : StepKind::Library, id});
          for (ValueId v : node.inputs)
            use_value(v);
          for (ValueId v : node.outputs)
            use_value(v);
        }
        break;
      case fuse::RegionKind::View:
        break;  // aliases: no step
    }
  }
  for (ValueId v : g.inputs())
    use_value(v);
  for (ValueId v : g.outputs())
    use_value(v);

  // Storage of each group: where its source lives.
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    Group& grp = groups_[static_cast<size_t>(group_of(g.inputs()[i]))];
    AF_CHECK(grp.source == g.inputs()[i], "graph input '{}' is not the source of its group",
             g.value(g.inputs()[i]).name);
    grp.storage = StorageKind::Input;
    grp.slot = static_cast<int>(i);
  }
  std::vector<bool> hosted(groups_.size(), false);
  for (size_t j = 0; j < g.outputs().size(); ++j) {
    const int gi = group_of(g.outputs()[j]);
    Group& grp = groups_[static_cast<size_t>(gi)];
    if (grp.storage == StorageKind::Arena && !hosted[static_cast<size_t>(gi)]) {
      grp.storage = StorageKind::Output;  // the first output of the group holds it
      grp.slot = static_cast<int>(j);
      hosted[static_cast<size_t>(gi)] = true;
    }
    if (grp.storage != StorageKind::Output || grp.slot != static_cast<int>(j))
      output_copies_.emplace_back(gi, static_cast<int>(j));
  }

  // Live ranges of arena groups, in steps.
  for (Group& grp : groups_)
    grp.first_step = grp.last_step = -1;
  for (size_t s = 0; s < steps_.size(); ++s) {
    const int step = static_cast<int>(s);
    std::span<const ValueId> ins, outs;
    if (steps_[s].kind == StepKind::Kernel) {
      const LoadedKernel& k = program_.kernels[static_cast<size_t>(steps_[s].index)];
      ins = k.inputs;
      outs = k.outputs;
    } else {
      const Node& node = g.node(steps_[s].index);
      ins = node.inputs;
      outs = node.outputs;
    }
    for (ValueId v : outs) {
      Group& grp = groups_[static_cast<size_t>(group_of(v))];
      AF_CHECK(grp.first_step < 0 && grp.source == v,
               "value '{}' is written twice or through an alias", g.value(v).name);
      grp.first_step = grp.last_step = step;
    }
    for (ValueId v : ins) {
      AF_CHECK(groups_[static_cast<size_t>(group_of(v))].first_step >= 0 ||
                   groups_[static_cast<size_t>(group_of(v))].storage != StorageKind::Arena,
               "value '{}' is read before it is written", g.value(v).name);
      add_use(v, step);
    }
  }
  for (Group& grp : groups_) {
    if (grp.storage != StorageKind::Arena) continue;
    AF_CHECK(grp.first_step >= 0, "value '{}' is never computed", g.value(grp.source).name);
    grp.slot = num_arena_buffers_++;
  }
}

bool ExecutableImpl::matches(const ShapeEntry& e, std::span<const HostTensor> inputs) const {
  size_t at = 0;
  for (const HostTensor& t : inputs) {
    const auto rank = static_cast<size_t>(t.rank());
    if (at + 1 + rank > e.key.size() || e.key[at] != static_cast<int64_t>(rank)) return false;
    if (!std::equal(t.shape().begin(), t.shape().end(), e.key.begin() + static_cast<long>(at) + 1))
      return false;
    at += 1 + rank;
  }
  return at == e.key.size();
}

ShapeEntry& ExecutableImpl::entry_for(std::span<const HostTensor> inputs) {
  const Graph& g = graph();
  bool dtypes_ok = inputs.size() == g.inputs().size();
  for (size_t i = 0; dtypes_ok && i < inputs.size(); ++i)
    dtypes_ok = inputs[i].dtype() == g.value(g.inputs()[i]).type.dtype;
  if (dtypes_ok) {
    for (ShapeEntry& e : entries_) {
      if (matches(e, inputs)) {
        e.last_use = ++use_clock_;
        return e;
      }
    }
  }
  ShapeEntry fresh = make_entry(inputs);  // UserError on bad inputs
  fresh.last_use = ++use_clock_;
  if (entries_.size() < kMaxShapeEntries) {
    entries_.push_back(std::move(fresh));
    return entries_.back();
  }
  auto lru = std::min_element(
      entries_.begin(), entries_.end(),
      [](const ShapeEntry& a, const ShapeEntry& b) { return a.last_use < b.last_use; });
  *lru = std::move(fresh);
  return *lru;
}

ShapeEntry ExecutableImpl::make_entry(std::span<const HostTensor> inputs) const {
  const Graph& g = graph();
  const sym::Binding binding = bind_symbols(g, inputs);
  ShapeEntry e;
  for (const HostTensor& t : inputs) {
    e.key.push_back(t.rank());
    e.key.insert(e.key.end(), t.shape().begin(), t.shape().end());
  }
  e.shapes.resize(g.values().size());
  for (const Value& v : g.values())
    if (group_of(v.id) >= 0)
      e.shapes[static_cast<size_t>(v.id)] = concrete_shape(v.type.shape, binding);

  e.tiling.resize(program_.kernels.size());
  e.block_dim.assign(program_.kernels.size(), 0);
  e.phases.assign(program_.kernels.size(), 1);
  e.workspace_offset.assign(program_.kernels.size(), -1);
  std::vector<int64_t> workspace_bytes(program_.kernels.size(), 0);
  for (size_t k = 0; k < program_.kernels.size(); ++k) {
    const LoadedKernel& kernel = program_.kernels[k];
    bool any_output = false;
    for (ValueId v : kernel.outputs) {
      int64_t n = 1;
      for (int64_t d : e.shapes[static_cast<size_t>(v)])
        n *= d;
      any_output = any_output || n > 0;
    }
    if (!any_output) continue;  // nothing to write: skipped
    std::vector<int64_t> symbols;
    for (const std::string& s : kernel.symbols) {
      auto it = binding.find(s);
      AF_CHECK(it != binding.end(), "kernel '{}' needs symbol '{}', which is unbound", kernel.name,
               s);
      symbols.push_back(it->second);
    }
    const int64_t bytes = kernel.tiling_data_size();
    AF_CHECK(bytes >= static_cast<int64_t>(sizeof(af_tiling_header)),
             "kernel '{}' has {} bytes of tiling data", kernel.name, bytes);
    std::vector<uint64_t>& data = e.tiling[k];
    data.assign(static_cast<size_t>((bytes + 7) / 8), 0);
    af_tiling_header header{};
    header.max_phases = kMaxPhases;
    std::memcpy(data.data(), &header, sizeof header);
    kernel.tiling(symbols.data(), &machine_, data.data());
    std::memcpy(&header, data.data(), sizeof header);
    AF_CHECK(header.block_dim >= 1, "kernel '{}' tiling chose block_dim {}", kernel.name,
             header.block_dim);
    AF_CHECK(header.num_phases <= kMaxPhases && header.workspace_bytes >= 0,
             "kernel '{}' tiling chose {} phases and {} workspace bytes", kernel.name,
             header.num_phases, header.workspace_bytes);
    e.block_dim[k] = header.block_dim;
    e.phases[k] = std::max<int64_t>(1, header.num_phases);
    workspace_bytes[k] = header.workspace_bytes;
  }

  // Arena buffers: the groups', then each kernel's workspace (live during
  // its step only).
  std::vector<BufferRequest> requests(static_cast<size_t>(num_arena_buffers_));
  for (const Group& grp : groups_) {
    if (grp.storage != StorageKind::Arena) continue;
    const auto& shape = e.shapes[static_cast<size_t>(grp.source)];
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    requests[static_cast<size_t>(grp.slot)] = {n * dtype_size(g.value(grp.source).type.dtype),
                                               grp.first_step, grp.last_step};
  }
  std::vector<size_t> workspace_request(program_.kernels.size(), 0);
  for (size_t k = 0; k < program_.kernels.size(); ++k) {
    if (workspace_bytes[k] <= 0) continue;
    workspace_request[k] = requests.size();
    const int step = kernel_step_.at(k);
    requests.push_back({workspace_bytes[k], step, step});
  }
  MemoryPlan plan = plan_memory(requests);
  for (size_t k = 0; k < program_.kernels.size(); ++k)
    if (workspace_bytes[k] > 0) e.workspace_offset[k] = plan.offsets.at(workspace_request[k]);
  plan.offsets.resize(static_cast<size_t>(num_arena_buffers_));
  e.arena_offsets = std::move(plan.offsets);
  e.arena_bytes = plan.arena_bytes;
  return e;
}

void ExecutableImpl::check_outputs(const ShapeEntry& e, std::span<HostTensor> outputs) const {
  const Graph& g = graph();
  if (outputs.size() != g.outputs().size())
    throw UserError(fmt::format("graph '{}' has {} outputs but {} output tensors were given",
                                g.name(), g.outputs().size(), outputs.size()));
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Value& v = g.value(g.outputs()[j]);
    const auto& shape = e.shapes[static_cast<size_t>(v.id)];
    if (outputs[j].dtype() != v.type.dtype || outputs[j].shape() != shape) {
      throw UserError(fmt::format("output {} ('{}') must be {}[{}], got {}", j, v.name,
                                  dtype_name(v.type.dtype), fmt::join(shape, ", "),
                                  outputs[j].type_string()));
    }
  }
}

TensorView ExecutableImpl::view(const ShapeEntry& e, ValueId v) const {
  return {group_ptr_[static_cast<size_t>(group_of(v))], graph().value(v).type.dtype,
          e.shapes[static_cast<size_t>(v)]};
}

void ExecutableImpl::throw_status(const LoadedKernel& kernel) const {
  const af_status st = status_;
  AF_CHECK(st.code == AF_STATUS_GATHER_INDEX && st.which >= 0 &&
               static_cast<size_t>(st.which) < kernel.gathers.size(),
           "kernel '{}' reported status {} for gather {}", kernel.name, st.code, st.which);
  throw UserError(fmt::format("gather '{}': index {} out of range [-{}, {})",
                              kernel.gathers[static_cast<size_t>(st.which)], st.index, st.bound,
                              st.bound));
}

void ExecutableImpl::execute(const ShapeEntry& e, std::span<const HostTensor> inputs,
                             std::span<HostTensor> outputs, BareCallList* record) {
  char* arena =
      record ? record->arena() : static_cast<char*>(arena_.get(static_cast<size_t>(e.arena_bytes)));
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const Group& grp = groups_[gi];
    const auto slot = static_cast<size_t>(grp.slot);
    switch (grp.storage) {
      case StorageKind::Input:
        group_ptr_[gi] = const_cast<void*>(inputs[slot].data());
        break;
      case StorageKind::Output:
        group_ptr_[gi] = outputs[slot].data();
        break;
      case StorageKind::Constant:
        group_ptr_[gi] = constants_[slot].data();
        break;
      case StorageKind::Arena:
        group_ptr_[gi] = arena + e.arena_offsets[slot];
        break;
    }
  }
  LibraryContext ctx{*pool_, library_scratch_, machine_.min_block_bytes, &dnnl_cache_};
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    if (step.kind == StepKind::Kernel) {
      const auto k = static_cast<size_t>(step.index);
      if (e.block_dim[k] == 0) continue;
      const LoadedKernel& kernel = program_.kernels[k];
      std::vector<void*>& args = kernel_args_[k];
      size_t a = 0;
      for (ValueId v : kernel.inputs)
        args[a++] = group_ptr_[static_cast<size_t>(group_of(v))];
      for (ValueId v : kernel.outputs)
        args[a++] = group_ptr_[static_cast<size_t>(group_of(v))];
      args[a] = e.workspace_offset[k] >= 0 ? arena + e.workspace_offset[k] : nullptr;
      const void* tiling = e.tiling[k].data();
      void* const* arg_ptr = args.data();
      const KernelFn fn = kernel.kernel;
      const int64_t blocks = e.block_dim[k];
      if (record) {
        record->add_kernel(fn, e.tiling[k], std::span(args).first(a + 1), e.phases[k] * blocks);
        continue;
      }
      // Launch p runs block indices [p * blocks, (p + 1) * blocks); the pool
      // returns once all are done, which orders the launches (and makes the
      // blocks' status reports visible here).
      const bool checks = !kernel.gathers.empty();
      if (checks) status_ = af_status{};
      for (int64_t p = 0; p < e.phases[k]; ++p) {
        const int64_t first = p * blocks;
        pool_->parallel_for(blocks,
                            [&](int64_t block, int) { fn(tiling, arg_ptr, first + block); });
        if (checks && status_.code != AF_STATUS_OK) throw_status(kernel);
      }
      continue;
    }
    const Node& node = graph().node(step.index);
    std::vector<TensorView>& ins = step_inputs_[s];
    std::vector<TensorView>& outs = step_outputs_[s];
    for (size_t i = 0; i < node.inputs.size(); ++i)
      ins[i] = view(e, node.inputs[i]);
    for (size_t i = 0; i < node.outputs.size(); ++i)
      outs[i] = view(e, node.outputs[i]);
    if (record)
      record->add_library(node, ins, outs);
    else
      run_library_node(graph(), node, ins, outs, ctx);
  }
  for (const auto& [gi, j] : output_copies_) {
    void* out = outputs[static_cast<size_t>(j)].data();
    const auto bytes = outputs[static_cast<size_t>(j)].nbytes();
    const void* value = group_ptr_[static_cast<size_t>(gi)];
    if (record)
      record->add_copy(out, value, bytes);
    else
      library_copy(out, value, bytes, ctx);
  }
}

std::vector<HostTensor> ExecutableImpl::run(std::span<const HostTensor> inputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  const ShapeEntry& e = entry_for(inputs);
  std::vector<HostTensor> outputs;
  outputs.reserve(graph().outputs().size());
  for (ValueId v : graph().outputs())
    outputs.emplace_back(graph().value(v).type.dtype, e.shapes[static_cast<size_t>(v)]);
  execute(e, inputs, outputs);
  return outputs;
}

void ExecutableImpl::run_into(std::span<const HostTensor> inputs, std::span<HostTensor> outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  const ShapeEntry& e = entry_for(inputs);
  check_outputs(e, outputs);
  execute(e, inputs, outputs);
}

std::unique_ptr<BareCalls> ExecutableImpl::bare_calls(std::span<const HostTensor> inputs,
                                                      std::span<HostTensor> outputs) {
  run_into(inputs, outputs);  // checks inputs, outputs and gather indices
  std::lock_guard<std::mutex> lock(mutex_);
  const ShapeEntry& e = entry_for(inputs);  // cached by run_into
  auto calls =
      std::make_unique<BareCallList>(program_.fused.graph, e.arena_bytes, machine_.min_block_bytes);
  execute(e, inputs, outputs, calls.get());
  return calls;
}

}  // namespace

void resolve_kernel_symbols(const jit::Module& module, LoadedKernel& kernel) {
  kernel.tiling_data_size =
      reinterpret_cast<TilingDataSizeFn>(module.symbol(kernel.name + "_tiling_data_size"));
  kernel.tiling = reinterpret_cast<TilingFn>(module.symbol(kernel.name + "_tiling"));
  kernel.kernel = reinterpret_cast<KernelFn>(module.symbol(kernel.name + "_kernel"));
}

std::unique_ptr<Executable> make_executable(Program program, int threads) {
  return std::make_unique<ExecutableImpl>(std::move(program), threads);
}

}  // namespace autofuse::runtime
