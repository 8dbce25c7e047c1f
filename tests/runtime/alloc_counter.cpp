// Global operator new/delete replacements that count allocations while
// enabled. Kept in their own file so no caller sees them inline.
#include "runtime/alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define AF_COUNT_ALLOCATIONS 0  // ASan owns operator new; mixing the two mismatches
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AF_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef AF_COUNT_ALLOCATIONS
#define AF_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};
}  // namespace

#if AF_COUNT_ALLOCATIONS
void* operator new(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) {
  return operator new(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}
#endif  // AF_COUNT_ALLOCATIONS

namespace autofuse::runtime::testing {

bool can_count_allocations() {
  return AF_COUNT_ALLOCATIONS != 0;
}

void start_counting_allocations() {
  g_allocations = 0;
  g_counting = true;
}

int64_t stop_counting_allocations() {
  g_counting = false;
  return g_allocations.load();
}

}  // namespace autofuse::runtime::testing
