// The `autofuse` command line. Exit codes: 0 success, 2 bad input (a
// UserError or a bad command line), 3 `run --check` found a mismatch (or
// `conformance` a failing test), 1 an internal error (a bug).
#include <iostream>

#include <CLI/CLI.hpp>

#include "autofuse/error.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  using namespace autofuse;
  CLI::App app{"autofuse: an automatic operator-fusion compiler for ML graphs"};
  app.require_subcommand(1);
  std::vector<tools::Runner> runners = {
      tools::add_print_command(app),  tools::add_run_command(app),
      tools::add_fuse_command(app),   tools::add_bench_command(app),
      tools::add_stream_command(app), tools::add_conformance_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (const tools::Runner& runner : runners) {
      int code = runner();
      if (code >= 0) return code;
    }
    std::cerr << "autofuse: no command given\n";
    return 2;
  } catch (const UserError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const InternalError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
}
