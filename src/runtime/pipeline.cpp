// The compile pipeline, one flat list of passes (docs/pipeline.md):
//
//   fuse::move_views -> fuse::partition -> fuse::group_kernels -> per Kernel
//   region: ascir::lower_region, ascir::elide_casts, schedule::schedule_kernel
//   -> codegen::generate_cpu_module (all kernels, one module; one launch per
//   kernel group, runtime/group_launch.h) -> jit::compile_and_load -> the
//   Executable.
//
// Every pass is timed into CompileReport::pass_seconds (summed over kernels
// for the per-kernel passes). With a dump folder (CompileOptions::dump_dir,
// else $AUTOFUSE_DUMP) the IR after each pass is written there:
// 00_move_views.txt (the rewritten graph), 01_fused.txt (after grouping),
// 02_<kernel>_ascgraph.txt (after lowering and cast elision),
// 03_<kernel>_schedule.txt, module.cpp.
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "autofuse/ascir/lower.h"
#include "autofuse/codegen/cpu_codegen.h"
#include "autofuse/error.h"
#include "autofuse/fuse/move_views.h"
#include "autofuse/graph/text.h"
#include "autofuse/runtime/executable.h"
#include "autofuse/schedule/schedule.h"
#include "runtime/group_launch.h"
#include "runtime/program.h"

namespace autofuse::runtime {

namespace {

/// Writes pass dumps into a folder (nothing when it has none).
class Dumper {
 public:
  explicit Dumper(std::string dir) : dir_(std::move(dir)) {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec)
      throw UserError(fmt::format("cannot create the dump folder '{}': {}", dir_, ec.message()));
  }
  void write(const std::string& file, const std::string& text) const {
    if (dir_.empty()) return;
    const std::string path = dir_ + "/" + file;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw UserError(fmt::format("cannot write the dump file '{}'", path));
  }

 private:
  std::string dir_;
};

/// Accumulates the time of each named pass, in first-run order.
class PassTimer {
 public:
  explicit PassTimer(CompileReport& report) : report_(report) {}
  template <typename F>
  auto time(const std::string& pass, F&& f) {
    const auto start = std::chrono::steady_clock::now();
    struct Record {
      PassTimer& timer;
      const std::string& pass;
      std::chrono::steady_clock::time_point start;
      ~Record() {
        timer.add(pass,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    } record{*this, pass, start};
    return f();
  }

 private:
  void add(const std::string& pass, double seconds) {
    for (auto& [name, total] : report_.pass_seconds) {
      if (name == pass) {
        total += seconds;
        return;
      }
    }
    report_.pass_seconds.emplace_back(pass, seconds);
  }
  CompileReport& report_;
};

std::string dump_dir(const CompileOptions& options) {
  if (!options.dump_dir.empty()) return options.dump_dir;
  const char* env = std::getenv("AUTOFUSE_DUMP");
  return env != nullptr ? env : "";
}

/// A file-name-safe version of a region name.
std::string file_stem(const std::string& name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

/// Generated code that calls glibc's vector math (declared with the simd
/// attribute) must link libmvec.
bool needs_libmvec(const std::string& code) {
  return code.find("__attribute__((simd") != std::string::npos ||
         code.find("omp declare simd") != std::string::npos;
}

/// The graph after fuse::move_views, headed by the rewrites applied.
std::string move_views_dump(const fuse::MoveViewsResult& moved) {
  std::string out = fmt::format("# fuse::move_views: {} rewrites\n", moved.rewrites);
  for (const auto& [name, count] : moved.by_rewrite)
    out += fmt::format("#   {} x{}\n", name, count);
  return out + print_graph(*moved.graph);
}

Program compile_program(std::shared_ptr<const Graph> graph, const CompileOptions& options) {
  AF_CHECK(graph != nullptr, "Executable::build without a graph");
  Program program;
  PassTimer timer(program.report);
  const Dumper dump(dump_dir(options));

  // Movement ops to the region boundary first (docs/data-movement-fusion.md):
  // everything after this, the Executable included, runs the rewritten graph
  // (same inputs and outputs).
  if (options.fusion.enabled && options.fusion.move_views) {
    const fuse::MoveViewsResult moved =
        timer.time("fuse::move_views", [&] { return fuse::move_views(graph); });
    graph = moved.graph;
    dump.write("00_move_views.txt", move_views_dump(moved));
  }
  program.fused =
      timer.time("fuse::partition", [&] { return fuse::partition(graph, options.fusion); });
  timer.time("fuse::group_kernels",
             [&] { return fuse::group_kernels(program.fused, options.fusion); });
  dump.write("01_fused.txt", fuse::print_fused_graph(program.fused));

  // Per Kernel region: its scheduled kernel (kernel_of_region) and args.
  std::vector<schedule::ScheduledKernel> scheduled;
  std::vector<int> kernel_of_region(program.fused.regions.size(), -1);
  std::vector<NestArgs> nests;
  for (size_t r = 0; r < program.fused.regions.size(); ++r) {
    const fuse::Region& region = program.fused.regions[r];
    if (region.kind != fuse::RegionKind::Kernel) continue;
    ascir::AscGraph asc =
        timer.time("ascir::lower_region", [&] { return ascir::lower_region(*graph, region); });
    timer.time("ascir::elide_casts", [&] { return ascir::elide_casts(asc); });
    const std::string stem = file_stem(region.name);
    dump.write(fmt::format("02_{}_ascgraph.txt", stem), ascir::print_asc_graph(asc));

    NestArgs kernel;
    kernel.inputs = asc.inputs;
    kernel.outputs = asc.outputs;
    scheduled.push_back(timer.time("schedule::schedule_kernel",
                                   [&] { return schedule::schedule_kernel(std::move(asc)); }));
    dump.write(fmt::format("03_{}_schedule.txt", stem), schedule::print_schedule(scheduled.back()));
    // Merging axes keeps the buffers: arguments stay those of the region.
    AF_CHECK(scheduled.back().graph.inputs == kernel.inputs &&
                 scheduled.back().graph.outputs == kernel.outputs,
             "scheduling changed the arguments of kernel '{}'", region.name);
    kernel_of_region[r] = static_cast<int>(nests.size());
    nests.push_back(std::move(kernel));
  }
  // One launch per kernel group (a group of one: its kernel).
  std::vector<codegen::KernelGroupSpec> groups;
  for (const fuse::KernelGroup& group : program.fused.groups) {
    GroupLaunch planned = plan_group_launch(program.fused, group, kernel_of_region, nests);
    LoadedKernel launch;
    launch.region = group.regions.at(0);
    launch.inputs = std::move(planned.inputs);
    launch.outputs = std::move(planned.outputs);
    program.kernels.push_back(std::move(launch));
    groups.push_back(std::move(planned.spec));
  }
  program.report.kernels = static_cast<int>(nests.size());
  program.report.launches = static_cast<int>(program.kernels.size());
  if (program.kernels.empty()) return program;  // only library ops: nothing to compile

  const codegen::ModuleSource module = timer.time("codegen::generate_cpu_module", [&] {
    return codegen::generate_cpu_module(scheduled, groups);
  });
  dump.write("module.cpp", module.code);
  AF_CHECK(module.kernels.size() == program.kernels.size(), "{} launches generated for {} groups",
           module.kernels.size(), program.kernels.size());

  jit::CompilerOptions compiler = options.compiler;
  if (needs_libmvec(module.code)) compiler.link_flags.insert(compiler.link_flags.begin(), "-lmvec");
  program.module = timer.time("jit::compile_and_load", [&] {
    return jit::compile_and_load(
        module.code, codegen::split_translation_units(module, jit::compile_jobs(compiler)),
        compiler, program.report.jit);
  });
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    LoadedKernel& kernel = program.kernels[k];
    const codegen::KernelSource& source = module.kernels[k];
    AF_CHECK(source.num_inputs == static_cast<int>(kernel.inputs.size()) &&
                 source.num_outputs == static_cast<int>(kernel.outputs.size()),
             "kernel '{}' has {} inputs and {} outputs, its region {} and {}", source.name,
             source.num_inputs, source.num_outputs, kernel.inputs.size(), kernel.outputs.size());
    kernel.name = source.name;
    kernel.symbols = source.symbols;
    kernel.gathers = source.gathers;
    resolve_kernel_symbols(*program.module, kernel);
  }
  return program;
}

}  // namespace

std::unique_ptr<Executable> Executable::build(std::shared_ptr<const Graph> graph,
                                              const CompileOptions& options) {
  return make_executable(compile_program(std::move(graph), options), options.threads);
}

}  // namespace autofuse::runtime
