// Running a program without a shell (no quoting, no injection) and finding
// programs on PATH: what the JIT needs to drive the system compiler.
#pragma once

#include <string>
#include <vector>

namespace autofuse::jit {

struct ProcessResult {
  int exit_code = 0;   ///< the exit status; 128 + signal number when killed by a signal
  std::string output;  ///< stdout and stderr, interleaved as written
};

/// Runs argv[0] (a path) with the arguments, waits for it and returns its
/// combined output. UserError when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv);

/// The arguments joined by spaces, as shown in error messages.
std::string command_line(const std::vector<std::string>& argv);

/// The path of an executable program: `name` itself when it contains a '/',
/// else the first match in $PATH. Empty when there is none.
std::string find_program(const std::string& name);

}  // namespace autofuse::jit
