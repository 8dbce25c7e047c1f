#include "runtime/bare_calls.h"

#include "autofuse/error.h"

namespace autofuse::runtime {

BareCallList::BareCallList(std::shared_ptr<const Graph> graph, int64_t arena_bytes,
                           int64_t min_block_bytes)
    : graph_(std::move(graph)),
      arena_bytes_(static_cast<size_t>(arena_bytes)),
      context_{pool_, scratch_, min_block_bytes, &dnnl_cache_} {
  AF_CHECK(graph_ != nullptr && arena_bytes >= 0, "bare calls without a graph or arena");
}

void BareCallList::add_kernel(KernelFn kernel, std::span<const uint64_t> tiling,
                              std::span<void* const> args, int64_t blocks) {
  AF_CHECK(kernel != nullptr && blocks >= 1, "bare kernel call of {} blocks", blocks);
  steps_.push_back({Kind::Kernel, kernels_.size()});
  kernels_.push_back({kernel, tiling_.size(), args_.size(), blocks});
  tiling_.insert(tiling_.end(), tiling.begin(), tiling.end());
  args_.insert(args_.end(), args.begin(), args.end());
  args_.push_back(&status_);
}

TensorView BareCallList::own_view(const TensorView& v) {
  shapes_.push_back(std::make_unique<std::vector<int64_t>>(v.shape.begin(), v.shape.end()));
  return {v.data, v.dtype, *shapes_.back()};
}

void BareCallList::add_library(const Node& node, std::span<const TensorView> inputs,
                               std::span<const TensorView> outputs) {
  LibraryStep step{&node, {}, {}};
  for (const TensorView& v : inputs)
    step.inputs.push_back(own_view(v));
  for (const TensorView& v : outputs)
    step.outputs.push_back(own_view(v));
  steps_.push_back({Kind::Library, libraries_.size()});
  libraries_.push_back(std::move(step));
}

void BareCallList::add_copy(void* dst, const void* src, size_t bytes) {
  steps_.push_back({Kind::Copy, copies_.size()});
  copies_.push_back({dst, src, bytes});
}

void BareCallList::call() {
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::Kernel: {
        const KernelStep& k = kernels_[step.index];
        const void* tiling = tiling_.data() + k.tiling;
        void* const* args = args_.data() + k.args;
        for (int64_t block = 0; block < k.blocks; ++block)
          k.kernel(tiling, args, block);
        break;
      }
      case Kind::Library: {
        const LibraryStep& l = libraries_[step.index];
        run_library_node(*graph_, *l.node, l.inputs, l.outputs, context_);
        break;
      }
      case Kind::Copy: {
        const CopyStep& c = copies_[step.index];
        library_copy(c.dst, c.src, c.bytes, context_);
        break;
      }
    }
  }
}

}  // namespace autofuse::runtime
