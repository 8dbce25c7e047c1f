/* The binary interface between generated kernels and the runtime. Plain C
 * so that it is valid in the generated source (which embeds this file) and
 * in the runtime. Changing it changes every generated module's hash.
 *
 * Per kernel K (C linkage):
 *   int64_t K_tiling_data_size(void);
 *   void K_tiling(const int64_t* symbols, const af_machine* machine, void* tiling_data);
 *       symbols: the values of the kernel's symbols in KernelSource::symbols
 *       order. Fills the tiling data, which starts with an af_tiling_header;
 *       the caller zeroes it first, except header.max_phases (see there).
 *       Cheap, allocation-free; the runtime caches the result per shape.
 *   void K_kernel(const void* tiling_data, void* const* args, int64_t block_idx);
 *       args: input buffers (Data order), output buffers (Output order),
 *       then the workspace slot: when header.workspace_bytes > 0, that many
 *       bytes of 64-byte aligned scratch (no initial contents needed), else
 *       unused; then, for a kernel with gathers (KernelSource::gathers not
 *       empty), an af_status* (below), zeroed by the caller before the
 *       first launch. Kernels without gathers never read the status
 *       slot, so callers of those may omit it.
 *       Run once for each block_idx in [0, phases * block_dim), phases =
 *       max(1, header.num_phases), as `phases` launches in order: launch p
 *       runs block_idx p * block_dim + b for b in [0, block_dim), whose
 *       blocks are independent; launch p + 1 starts after every block of
 *       launch p has finished (so it sees their workspace and outputs).
 */
#ifndef AUTOFUSE_CODEGEN_KERNEL_ABI_H_
#define AUTOFUSE_CODEGEN_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the tiling cost model knows about the machine. */
typedef struct af_machine {
  int64_t cores;           /**< blocks that can run at once */
  int64_t l1_bytes;        /**< per core */
  int64_t l2_bytes;        /**< per core */
  int64_t l3_bytes;        /**< shared; what outputs can count on (runtime/cache_probe.h) */
  int64_t vector_bytes;    /**< SIMD register width: 64 for AVX-512 */
  int64_t min_block_bytes; /**< least bytes moved that pay for waking another core */
  /** Streaming (non-temporal) stores only for a kernel whose vector loop
   *  issues at most this many vector instructions per KiB it moves through
   *  memory (more: compute-bound, where ordinary stores are faster); <= 0:
   *  no limit. */
  int64_t stream_max_ops_per_kib;
} af_machine;

/** The first fields of every kernel's tiling data. */
typedef struct af_tiling_header {
  int64_t block_dim;  /**< number of blocks per launch, >= 1 */
  int64_t tiling_key; /**< template variant chosen at run time */
  /** In: the most launches the caller can run in order, with a workspace
   *  (0 from callers that know only single launches: the tiling function
   *  then chooses one launch and no workspace). */
  int64_t max_phases;
  int64_t num_phases;      /**< out: launches to run (0 or 1: one) */
  int64_t workspace_bytes; /**< out: scratch bytes the kernel needs (0: none) */
} af_tiling_header;

/** af_status::code values. */
#define AF_STATUS_OK 0
/** A Gather read an index outside [-bound, bound) (it read index 0 instead). */
#define AF_STATUS_GATHER_INDEX 1

/** A kernel's run-time error report (one per kernel call, all launches).
 *  The caller zeroes it; blocks that find an error claim `code` with an
 *  atomic compare-exchange from AF_STATUS_OK, and only the winner writes the
 *  other fields, so the report is one error's, complete. The caller reads
 *  it after the launch has finished. */
typedef struct af_status {
  int32_t code;  /**< AF_STATUS_OK or the first error's code */
  int32_t which; /**< AF_STATUS_GATHER_INDEX: the gather, an index into KernelSource::gathers */
  int64_t index; /**< AF_STATUS_GATHER_INDEX: the bad index value (as int64) */
  int64_t bound; /**< AF_STATUS_GATHER_INDEX: n, the gathered dim's size */
} af_status;

#ifdef __cplusplus
}
#endif

#endif /* AUTOFUSE_CODEGEN_KERNEL_ABI_H_ */
