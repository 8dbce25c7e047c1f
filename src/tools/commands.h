// The CLI's subcommands. Each registers its options on a CLI11 app and runs
// when selected; user errors propagate as UserError (exit code 2).
#pragma once

#include <CLI/CLI.hpp>

namespace autofuse::tools {

/// Registers a subcommand; the returned callback runs it and gives the exit code.
using Runner = std::function<int()>;
Runner add_print_command(CLI::App& app);
Runner add_run_command(CLI::App& app);
Runner add_fuse_command(CLI::App& app);
Runner add_bench_command(CLI::App& app);
Runner add_stream_command(CLI::App& app);
Runner add_conformance_command(CLI::App& app);

}  // namespace autofuse::tools
