// The compile cache the tests share: one folder for every test process and
// both builds, so a kernel the release run compiled is loaded, not compiled
// again, by the ASan run (same source, same flags: the same cache key) and by
// a rerun. The cache is safe across processes (jit/compiler.cpp: lock files,
// checksummed entries renamed into place). Tests of the cache itself (hits,
// misses, corrupt entries, compile counts) use a TempDir of their own.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace autofuse {

/// $AUTOFUSE_TEST_CACHE_DIR, else <tmp>/autofuse-test-kernels.
inline std::string shared_test_cache() {
  if (const char* dir = std::getenv("AUTOFUSE_TEST_CACHE_DIR"); dir != nullptr && *dir != '\0')
    return dir;
  return (std::filesystem::temp_directory_path() / "autofuse-test-kernels").string();
}

}  // namespace autofuse
