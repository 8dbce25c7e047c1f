// The JIT: compiles a generated C++ module with the system compiler into a
// shared object and loads it, through a content-addressed disk cache.
//
// Cache key: hash of (source text, compiler path, compiler version text,
// flags). Entries are written to a temporary file and renamed into place,
// so concurrent processes can share the cache; a corrupt or unloadable entry
// is removed and recompiled.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace autofuse::jit {

struct CompilerOptions {
  /// Compiler command; empty: $CXX, else the first of g++, c++, clang++ on PATH.
  std::string cxx;
  /// Optimization and target flags (PIC/shared are always added).
  /// -fno-trapping-math changes no result (kernels never read the floating-
  /// point exception flags) but lets g++ invert a compare instead of
  /// negating its mask (NaN-exact max/min/relu): chain30 and swiglu 0.86-0.93x
  /// the time (docs/benchmarks.md, session 26). -O3 over -O2: softmax 1.3-1.5x.
  /// -mprefer-vector-width=512: g++ tunes Intel AVX-512 cores (icelake,
  /// skylake-avx512, sapphirerapids) for 256-bit loops, so a loop wrote its
  /// f32 row buffers in 32-byte halves that the prelude's 64-byte vector code
  /// then read back, each load waiting for two stores (store forwarding
  /// fails): on an Ice Lake, swiglu bf16 0.38x the time in L2, 0.61x large,
  /// rmsnorm bf16 0.72x (docs/benchmarks.md, session 39). No effect without
  /// AVX-512.
  std::vector<std::string> flags = {
      "-O3",           "-march=native", "-mprefer-vector-width=512", "-fno-math-errno",
      "-fopenmp-simd", "-fno-plt",      "-fno-trapping-math"};
  /// Link flags and libraries, placed after the source file on the command
  /// line (e.g. "-lmvec" when the module calls libmvec's vector math).
  std::vector<std::string> link_flags = {"-lm"};
  /// Cache folder; empty: $AUTOFUSE_CACHE_DIR, else $XDG_CACHE_HOME/autofuse,
  /// else ~/.cache/autofuse.
  std::string cache_dir;
  bool use_cache = true;
  /// Where to keep a copy of the source (for dumps); empty: nowhere.
  std::string dump_source_path;
  /// Compiler processes at once for a module given as several translation
  /// units; 0: $AUTOFUSE_COMPILE_JOBS, else the hardware threads
  /// (compile_jobs).
  int jobs = 0;
};

struct CompileStats {
  int compiles = 0;            ///< modules compiled (however many translation units each)
  int cache_hits = 0;          ///< loads straight from the cache
  int units = 0;               ///< translation units of the last module compiled (0: none compiled)
  double compile_seconds = 0;  ///< wall time, units compiled in parallel counted once
  std::string shared_object;   ///< path of the loaded .so
};

/// A loaded shared object; unloaded when the last reference goes.
class Module {
 public:
  virtual ~Module() = default;
  /// The address of an exported symbol; InternalError if missing.
  virtual void* symbol(const std::string& name) const = 0;
};

/// Compiles (or finds in the cache) and loads. UserError when no compiler is
/// found or it fails (with its output), or the cache folder is unusable.
std::shared_ptr<Module> compile_and_load(const std::string& source, const CompilerOptions& options,
                                         CompileStats& stats);

/// The same for a module also given as several translation `units` that
/// together define what `source` does (codegen::split_translation_units):
/// `source` keys the cache and is kept beside the entry, while a compile
/// runs one compiler per unit, compile_jobs(options) at once, then links
/// them (a module compiles in about the time of its largest unit). With
/// fewer than two units, `source` is compiled itself.
std::shared_ptr<Module> compile_and_load(const std::string& source,
                                         const std::vector<std::string>& units,
                                         const CompilerOptions& options, CompileStats& stats);

/// options.jobs; when that is 0, $AUTOFUSE_COMPILE_JOBS (a number, 0 or
/// unset: none), else the hardware threads (at least 1). UserError for a
/// malformed variable.
int compile_jobs(const CompilerOptions& options);

}  // namespace autofuse::jit
