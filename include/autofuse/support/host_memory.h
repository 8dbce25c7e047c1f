// Host buffers for tensors, arenas and STREAM's arrays: 64-byte aligned;
// large ones on transparent huge pages.
//
// Why huge pages: on the project's VMs a kernel streaming tens of MiB
// through 4 KiB pages loses up to half its time to page walks (two levels
// of page tables under KVM) and to prefetchers that stop at every 4 KiB
// boundary; the same process run twice moved rotary bf16 [16, 1024] by
// 1.7x with the pages it happened to get (docs/benchmarks.md, session 24).
//
// Why colours: a 2 MiB page fixes address bits 12-20 that 4 KiB pages left
// to chance, so every huge buffer would start in the same L2 set; a kernel
// reading many of them at the same index (a concat of 26 pieces) then
// evicts its own lines. Each buffer starts at one of 32 4-KiB offsets,
// chosen by a hash of its mapping's address (no global counter).
#pragma once

#include <cstddef>

namespace autofuse {

/// Buffers of at least this many bytes are mapped on huge pages.
inline constexpr size_t kHugeBufferBytes = size_t{4} << 20;

/// `bytes` (> 0) of uninitialized memory, 64-byte aligned. Throws
/// std::bad_alloc when the system has none.
void* allocate_host_buffer(size_t bytes);

/// Frees what allocate_host_buffer(bytes) returned; nullptr is ignored.
void free_host_buffer(void* p, size_t bytes) noexcept;

/// Whether allocate_host_buffer(bytes) returns memory that reads as zero
/// (a fresh mapping: the system zeroes each page on its first touch), so
/// zero-filling it again would only write every byte twice.
bool host_buffer_starts_zeroed(size_t bytes);

/// False under AddressSanitizer, which checks heap buffers, not mappings:
/// there every buffer comes from operator new, so overruns stay caught.
bool maps_large_host_buffers();

}  // namespace autofuse
