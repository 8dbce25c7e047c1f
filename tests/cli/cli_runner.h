// Runs the built `autofuse` binary and captures its exit code and output.
#pragma once

#include <string>
#include <vector>

namespace autofuse::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs AUTOFUSE_CLI_PATH with `args` (each shell-quoted) and extra
/// environment variables `env` ("NAME=value" each).
CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

/// A fresh empty folder for this test, removed when the process exits.
std::string make_temp_dir();

/// "AUTOFUSE_CACHE_DIR=" and the tests' shared compile cache
/// (test_kernel_cache.h): for a CLI run whose test does not count compiles.
std::string shared_cache_env();

/// Writes `text` to a fresh file in a per-test temp dir (removed when the
/// process exits) and returns its path.
std::string write_temp_file(const std::string& name, const std::string& text);

/// Path of a bundled example, e.g. example_path("layernorm.af").
std::string example_path(const std::string& name);

}  // namespace autofuse::testing
