// Whether this test binary runs under AddressSanitizer: tests whose value
// there is the memory checking, not the size, run smaller inputs (CI runs
// every test in both builds; the release build keeps the full sizes).
#pragma once

namespace autofuse {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

}  // namespace autofuse
