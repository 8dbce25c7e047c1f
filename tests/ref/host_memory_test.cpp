// Host buffers: alignment, usable bytes at both ends, huge-page advice and
// colours for large buffers, HostTensor on top of them.
#include "autofuse/support/host_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "autofuse/ref/tensor.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace host_memory_test_local {

/// The VmFlags line of the /proc/self/smaps entry that holds `p`.
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= address && address < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST(HostMemory, AlignedAndWritableEndToEnd) {
  for (size_t bytes : {size_t{1}, size_t{63}, size_t{4096}, kHugeBufferBytes - 1, kHugeBufferBytes,
                       kHugeBufferBytes + 1, size_t{37} << 20}) {
    auto* p = static_cast<unsigned char*>(allocate_host_buffer(bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    std::memset(p, 0xab, bytes);
    EXPECT_EQ(p[0], 0xab);
    EXPECT_EQ(p[bytes - 1], 0xab);
    free_host_buffer(p, bytes);
  }
  free_host_buffer(nullptr, kHugeBufferBytes);  // ignored
}

TEST(HostMemory, LargeBuffersAdviseHugePagesAndStartInDifferentL2Sets) {
  if (!maps_large_host_buffers())
    GTEST_SKIP() << "under AddressSanitizer every buffer is operator new's";
  const bool thp = std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
  std::vector<void*> buffers;
  std::set<uintptr_t> starts;  // offsets within 128 KiB (one way of a 2 MiB, 16-way L2)
  for (int i = 0; i < 16; ++i) {
    void* p = allocate_host_buffer(kHugeBufferBytes);
    buffers.push_back(p);
    starts.insert(reinterpret_cast<uintptr_t>(p) % (size_t{128} << 10));
    if (thp) {
      EXPECT_NE(vm_flags_of(p).find(" hg"), std::string::npos) << vm_flags_of(p);
    }
  }
  // 16 buffers from 32 colours chosen by a hash: far more than one.
  EXPECT_GE(starts.size(), 4u);
  for (void* p : buffers)
    free_host_buffer(p, kHugeBufferBytes);
}

TEST(HostMemory, HostTensorsOfAnySizeAreZeroFilledAndAligned) {
  // Twice per size, dirtying the first: a freed buffer's bytes must not
  // come back (large ones are fresh mappings, small ones zero-filled).
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{3} << 20})
    for (int round = 0; round < 2; ++round) {
      HostTensor t(DType::f32, {n});
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
      const float* v = t.data_as<float>();
      int64_t nonzero = 0;
      for (int64_t i = 0; i < n; ++i)
        nonzero += v[i] != 0.0f;
      EXPECT_EQ(nonzero, 0) << n << " round " << round;
      HostTensor copy = t;  // copies through the allocator too
      EXPECT_NE(copy.data(), t.data());
      EXPECT_EQ(std::memcmp(copy.data(), t.data(), t.nbytes()), 0);
      std::memset(t.data(), 0xff, t.nbytes());
    }
  EXPECT_TRUE(host_buffer_starts_zeroed(kHugeBufferBytes) == maps_large_host_buffers());
  EXPECT_FALSE(host_buffer_starts_zeroed(kHugeBufferBytes - 1));
}

}  // namespace host_memory_test_local
}  // namespace autofuse
