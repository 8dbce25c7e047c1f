// module_ab: times one kernel of several compiled modules (or of one module
// under several tiling keys) interleaved in one process, the A/B that a
// noisy machine allows (sessions 39-41: the same module took 7.0 ms in one
// run and 11.4 ms in another minutes later; interleaved, the ratio holds).
//
//   cmake --build build/release --target module_ab
//   AUTOFUSE_DUMP=/tmp/d build/release/autofuse bench model.onnx --shape ...
//   g++ -O3 -march=native -mprefer-vector-width=512 -fno-math-errno
//       -fopenmp-simd -fno-plt -fno-trapping-math -fPIC -shared
//       /tmp/d/module.cpp -o a.so -lm            (the JIT's flags: jit/compiler.h)
//   build/release/module_ab a.so+b.so@1+b.so@2 asc_backend_0
//       SYMBOLS ARG_BYTES REPS [ROUNDS]
//
// Modules are joined by '+'; `so@K` runs that module under tiling key K
// (0 ordinary stores, 1 streaming, 2 prefetching) instead of the key its
// tiling function picks. SYMBOLS: the symbol values in the order of the
// tiling function's symbols[] ("8,384"); ARG_BYTES: each input's and then
// each output's size in bytes, in the kernel's args order ("a,b,c"). Every
// buffer gets random bf16 pairs in [-1, 1] (f32 reads see values of about
// 1e-5 to 1e2), on 2 MiB-aligned huge pages; a workspace and a zeroed
// af_status follow. All blocks run on this thread, in order (phases too).
// Each round runs each module REPS times; a module's time is the median
// over rounds of its per-round medians, and `ratio` is against the first.
//
// Environment: MODULE_AB_L3 (bytes: the L3 the tiling sees, default 48
// MiB), MODULE_AB_CORES (blocks the tiling may plan, default 1),
// MODULE_AB_OPS (af_machine::stream_max_ops_per_kib, default 0: none; the
// runtime's is runtime/machine.h's), MODULE_AB_INDICES ("arg:bound,...":
// int64 buffers of indices in [0, bound), for gathers), MODULE_AB_F32
// ("arg,...": f32 buffers of values uniform in [-1, 1], as `autofuse bench`
// feeds them; timings can depend on the values), MODULE_AB_CHECK
// (an argument index: print a hash of that output after one run of each
// module, to compare their bits).
#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "autofuse/codegen/kernel_abi.h"

namespace {

using SizeFn = int64_t (*)();
using TilingFn = void (*)(const int64_t*, const af_machine*, void*);
using KernelFn = void (*)(const void*, void* const*, int64_t);

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);)
    parts.push_back(part);
  return parts;
}

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoll(v) : fallback;
}

uint16_t bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

struct Module {
  std::string label;
  KernelFn kernel = nullptr;
  std::vector<char> tiling;  // its tiling data
  af_tiling_header header{};
};

/// A whole non-negative number, or a clear error naming `what`.
int64_t number(const std::string& text, const char* what) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0)
    throw std::runtime_error(std::string(what) + ": not a number >= 0: '" + text + "'");
  return v;
}

/// An argument index into ARG_BYTES, or a clear error.
size_t arg_index(const std::string& text, size_t count, const char* what) {
  const auto i = static_cast<size_t>(number(text, what));
  if (i >= count)
    throw std::runtime_error(std::string(what) + ": argument " + text + " of " +
                             std::to_string(count));
  return i;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int ab_main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s a.so[@key]+b.so[@key] KERNEL SYMBOLS ARG_BYTES REPS [ROUNDS]\n",
                 argv[0]);
    return 2;
  }
  const std::string kernel = argv[2];
  std::vector<int64_t> symbols, sizes;
  for (const std::string& s : split(argv[3], ','))
    symbols.push_back(number(s, "SYMBOLS"));
  for (const std::string& s : split(argv[4], ','))
    sizes.push_back(number(s, "ARG_BYTES"));
  const int reps = std::max(1, std::atoi(argv[5]));
  const int rounds = argc > 6 ? std::max(1, std::atoi(argv[6])) : 7;
  const af_machine machine{env_int("MODULE_AB_CORES", 1),     48 << 10, 1280 << 10,
                           env_int("MODULE_AB_L3", 48 << 20), 64,       1 << 20,
                           env_int("MODULE_AB_OPS", 0)};

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  constexpr size_t kHuge = size_t{2} << 20;
  std::vector<void*> args;
  for (int64_t bytes : sizes) {
    const size_t len = (static_cast<size_t>(bytes) + kHuge - 1) / kHuge * kHuge;
    auto* p = static_cast<uint32_t*>(std::aligned_alloc(kHuge, std::max(len, kHuge)));
    madvise(p, len, MADV_HUGEPAGE);
    for (int64_t i = 0; i < (bytes + 3) / 4; ++i)
      p[i] = bf16(uniform(rng)) | (static_cast<uint32_t>(bf16(uniform(rng))) << 16);
    args.push_back(p);
  }
  if (const char* spec = std::getenv("MODULE_AB_INDICES")) {
    for (const std::string& item : split(spec, ',')) {
      const std::vector<std::string> kv = split(item, ':');
      if (kv.size() != 2) throw std::runtime_error("MODULE_AB_INDICES: not arg:bound: " + item);
      const size_t arg = arg_index(kv[0], sizes.size(), "MODULE_AB_INDICES");
      const int64_t bound = std::max<int64_t>(1, number(kv[1], "MODULE_AB_INDICES"));
      auto* p = static_cast<int64_t*>(args.at(arg));
      for (int64_t i = 0; i < sizes[arg] / 8; ++i)
        p[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(bound));
    }
  }
  if (const char* spec = std::getenv("MODULE_AB_F32")) {
    for (const std::string& item : split(spec, ',')) {
      const size_t arg = arg_index(item, sizes.size(), "MODULE_AB_F32");
      auto* p = static_cast<float*>(args.at(arg));
      for (int64_t i = 0; i < sizes[arg] / 4; ++i)
        p[i] = uniform(rng);
    }
  }
  constexpr size_t kWorkspace = size_t{64} << 20;
  args.push_back(std::calloc(1, kWorkspace));
  args.push_back(std::calloc(1, sizeof(af_status)));

  std::vector<Module> modules;
  for (const std::string& spec : split(argv[1], '+')) {
    Module m;
    m.label = spec;
    const size_t at = spec.find('@');
    const std::string path = spec.substr(0, at);
    void* so = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (so == nullptr) {
      std::fprintf(stderr, "%s\n", dlerror());
      return 1;
    }
    const auto size = reinterpret_cast<SizeFn>(dlsym(so, (kernel + "_tiling_data_size").c_str()));
    const auto tiling = reinterpret_cast<TilingFn>(dlsym(so, (kernel + "_tiling").c_str()));
    m.kernel = reinterpret_cast<KernelFn>(dlsym(so, (kernel + "_kernel").c_str()));
    if (size == nullptr || tiling == nullptr || m.kernel == nullptr) {
      std::fprintf(stderr, "%s: no kernel %s\n", path.c_str(), kernel.c_str());
      return 1;
    }
    m.tiling.assign(static_cast<size_t>(size()), 0);
    auto* header = reinterpret_cast<af_tiling_header*>(m.tiling.data());
    header->max_phases = 2;
    tiling(symbols.data(), &machine, m.tiling.data());
    if (static_cast<size_t>(header->workspace_bytes) > kWorkspace) {
      std::fprintf(stderr, "%s: workspace of %lld bytes\n", path.c_str(),
                   static_cast<long long>(header->workspace_bytes));
      return 1;
    }
    if (at != std::string::npos) header->tiling_key = std::atoll(spec.c_str() + at + 1);
    m.header = *header;
    std::fprintf(stderr, "%s: block_dim %lld key %lld phases %lld\n", spec.c_str(),
                 static_cast<long long>(header->block_dim),
                 static_cast<long long>(header->tiling_key),
                 static_cast<long long>(header->num_phases));
    modules.push_back(std::move(m));
  }
  const auto run = [&](const Module& m) {
    const int64_t launches = std::max<int64_t>(1, m.header.num_phases) * m.header.block_dim;
    for (int64_t b = 0; b < launches; ++b)
      m.kernel(m.tiling.data(), args.data(), b);
  };

  if (const char* check = std::getenv("MODULE_AB_CHECK")) {
    const size_t out = arg_index(check, sizes.size(), "MODULE_AB_CHECK");
    for (const Module& m : modules) {
      std::memset(args.at(out), 0, static_cast<size_t>(sizes.at(out)));
      run(m);
      uint64_t hash = 1469598103934665603ull;  // FNV-1a
      const auto* bytes = static_cast<const unsigned char*>(args[out]);
      for (int64_t i = 0; i < sizes[out]; ++i)
        hash = (hash ^ bytes[i]) * 1099511628211ull;
      std::printf("%-40s hash %016llx\n", m.label.c_str(), static_cast<unsigned long long>(hash));
    }
  }
  std::vector<std::vector<double>> per_round(modules.size());
  for (const Module& m : modules)
    run(m);  // warm-up
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < modules.size(); ++i) {
      std::vector<double> times;
      for (int j = 0; j < reps; ++j) {
        const auto start = std::chrono::steady_clock::now();
        run(modules[i]);
        times.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
      }
      per_round[i].push_back(median(times));
    }
  }
  const double first = median(per_round[0]);
  for (size_t i = 0; i < modules.size(); ++i) {
    const double t = median(per_round[i]);
    std::printf("%-40s median %.4f ms (min %.4f)  ratio %.3f\n", modules[i].label.c_str(), t,
                *std::min_element(per_round[i].begin(), per_round[i].end()), t / first);
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return ab_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "module_ab: %s\n", e.what());
    return 2;
  }
}
