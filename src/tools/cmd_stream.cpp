// `autofuse stream [--threads T] [--mib M] [--reps R] [--json]`: the
// STREAM-style bandwidth `bench` compares kernels with, on its own: triad,
// copy and fill, each with ordinary and with non-temporal stores, and read
// only (see stream.h); and the compute probe (compute_probe.h).
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autofuse/error.h"
#include "tools/commands.h"
#include "tools/stream.h"

namespace autofuse::tools {

namespace {

struct StreamOptions {
  int threads = 0;
  double mib = 128;
  int reps = 10;
  bool json = false;
};

int run(const StreamOptions& options) {
  if (options.threads < 0) throw UserError("--threads must be >= 0 (0: one per core)");
  if (options.mib <= 0 || options.reps <= 0) throw UserError("--mib and --reps must be > 0");
  const long elements = static_cast<long>(options.mib * (1 << 20) / sizeof(double));
  StreamResult r = measure_stream(options.threads, elements, options.reps);
  if (options.json) {
    nlohmann::json doc = {{"threads", r.threads},           {"array_mib", r.array_mib},
                          {"reps", options.reps},           {"triad_gbps", r.triad_gbps},
                          {"copy_gbps", r.copy_gbps},       {"triad_nt_gbps", r.triad_nt_gbps},
                          {"copy_nt_gbps", r.copy_nt_gbps}, {"read_gbps", r.read_gbps},
                          {"fill_gbps", r.fill_gbps},       {"fill_nt_gbps", r.fill_nt_gbps},
                          {"fma_gflops", r.fma_gflops}};
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "STREAM on {} threads, {:.0f} MiB per array, best of {}:\n"
      "  triad {:.1f} GB/s, non-temporal {:.1f} GB/s\n"
      "  copy  {:.1f} GB/s, non-temporal {:.1f} GB/s\n"
      "  read  {:.1f} GB/s\n"
      "  fill  {:.1f} GB/s, non-temporal {:.1f} GB/s\n"
      "compute probe (FMA chains): {:.1f} GFLOP/s\n",
      r.threads, r.array_mib, options.reps, r.triad_gbps, r.triad_nt_gbps, r.copy_gbps,
      r.copy_nt_gbps, r.read_gbps, r.fill_gbps, r.fill_nt_gbps, r.fma_gflops);
  return 0;
}

}  // namespace

Runner add_stream_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "stream",
      "Measure STREAM triad and copy bandwidth (ordinary and non-temporal stores) and read "
      "bandwidth");
  auto options = std::make_shared<StreamOptions>();
  cmd->add_option("--threads", options->threads, "threads (default 0: one per core)");
  cmd->add_option("--mib", options->mib, "MiB per array (default 128, beyond the caches)");
  cmd->add_option("--reps", options->reps, "repetitions; the best is reported (default 10)");
  cmd->add_flag("--json", options->json, "print JSON instead of text");
  return [cmd, options]() { return cmd->parsed() ? run(*options) : -1; };
}

}  // namespace autofuse::tools
