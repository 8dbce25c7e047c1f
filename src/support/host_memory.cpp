#include "autofuse/support/host_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace autofuse {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kPage = 4096;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kColours = 32;  // 4 KiB steps over 128 KiB: an L2 way

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapHugeBuffers = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMapHugeBuffers = false;
#else
constexpr bool kMapHugeBuffers = true;
#endif
#else
constexpr bool kMapHugeBuffers = true;
#endif

/// Written in the 64 bytes before a mapped buffer: what munmap needs.
struct MappedHeader {
  void* base;
  size_t length;
};
static_assert(sizeof(MappedHeader) <= kAlignment);

size_t round_up(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

size_t colour_offset(uintptr_t huge_page_base) {
  const uint64_t key = static_cast<uint64_t>(huge_page_base / kHugePage);
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 59) % kColours * kPage;
}

void* map_huge_buffer(size_t bytes) {
  // Reserve 2 MiB more, keep the 2 MiB aligned part, give back the rest.
  const size_t most = round_up((kColours - 1) * kPage + kAlignment + bytes, kPage);
  const size_t reserved = most + kHugePage;
  void* raw = ::mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t base = round_up(start, kHugePage);
  const size_t offset = colour_offset(base);
  const size_t length = round_up(offset + kAlignment + bytes, kPage);
  if (base > start) ::munmap(raw, base - start);
  const uintptr_t end = start + reserved;
  if (base + length < end) ::munmap(reinterpret_cast<void*>(base + length), end - (base + length));
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(base), length, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  char* data = reinterpret_cast<char*>(base) + offset + kAlignment;
  *reinterpret_cast<MappedHeader*>(data - kAlignment) = {reinterpret_cast<void*>(base), length};
  return data;
}

}  // namespace

bool maps_large_host_buffers() {
  return kMapHugeBuffers;
}

bool host_buffer_starts_zeroed(size_t bytes) {
  return kMapHugeBuffers && bytes >= kHugeBufferBytes;
}

void* allocate_host_buffer(size_t bytes) {
  if (host_buffer_starts_zeroed(bytes)) return map_huge_buffer(bytes);
  return ::operator new (bytes == 0 ? 1 : bytes, std::align_val_t{kAlignment});
}

void free_host_buffer(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (host_buffer_starts_zeroed(bytes)) {
    const MappedHeader header =
        *reinterpret_cast<const MappedHeader*>(static_cast<char*>(p) - kAlignment);
    ::munmap(header.base, header.length);
    return;
  }
  ::operator delete (p, std::align_val_t{kAlignment});
}

}  // namespace autofuse
