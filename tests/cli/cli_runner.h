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

/// Runs AUTOFUSE_CLI_PATH with `args` (each shell-quoted).
CliResult run_cli(const std::vector<std::string>& args);

/// Writes `text` to a fresh file in a per-test temp dir and returns its path.
std::string write_temp_file(const std::string& name, const std::string& text);

/// Path of a bundled example, e.g. example_path("layernorm.af").
std::string example_path(const std::string& name);

}  // namespace autofuse::testing
