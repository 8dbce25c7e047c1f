// Helpers of the JIT tests: quick compiler options in a private cache folder
// (TempDir) and counting its files.
#pragma once

#include <filesystem>
#include <string>

#include "autofuse/jit/compiler.h"
#include "temp_dir.h"

namespace autofuse::jit {

inline CompilerOptions options_in(const std::string& dir) {
  CompilerOptions o;
  o.cache_dir = dir;
  o.flags = {"-O1"};  // fast compiles; the flags only matter for the key here
  return o;
}

/// Files in `dir` whose names end with `suffix`.
inline int count_files(const std::string& dir, const std::string& suffix) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().string().ends_with(suffix)) ++n;
  return n;
}

}  // namespace autofuse::jit
