// Counting heap allocations made through operator new (the test binary
// replaces the global operator new; see alloc_counter.cpp).
#pragma once

#include <cstdint>

namespace autofuse::runtime::testing {

/// False where the replacement is left out (under AddressSanitizer).
bool can_count_allocations();
/// Starts counting from zero.
void start_counting_allocations();
/// Stops counting; returns the allocations since the start.
int64_t stop_counting_allocations();

}  // namespace autofuse::runtime::testing
