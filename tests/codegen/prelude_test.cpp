// The kernel prelude compiled the way modules are: f16/bf16 conversions
// bit-exact against support/half.h, vector math against glibc over sweeps of
// bit patterns (denormals, huge |x|, inf and NaN included), the cost model,
// and the floor-division helpers. AUTOFUSE_EXHAUSTIVE=1 sweeps all 2^32
// floats instead of a sample (Prelude.VectorMath* alone: 22 minutes on one
// Zen 3 core in session 12).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/support/half.h"
#include "codegen_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace prelude_test_local {

using ::testing::HasSubstr;

constexpr const char* kFunctions[] = {"exp", "log", "tanh", "erf", "sin", "cos", "sigmoid"};

/// A storing vector pass's 16-bit stores over a row of n (af_put32_<half>
/// per 32, af_put16_<half> for the rest), and a reducing one's loads
/// (af_load16_<half> per 16): `half` "bf16" or "f16".
std::string vector_halves(const char* half) {
  return fmt::format(
      "#if AF_VECTOR_PASS\n"
      "extern \"C\" int t_vector_{0}(void) {{ return 1; }}\n"
      "extern \"C\" void t_put_{0}(const float* x, uint16_t* y, int64_t n, int nt) {{\n"
      "  int64_t i = 0;\n"
      "  for (; i + 32 <= n; i += 32) {{\n"
      "    af_f32x16 a, b;\n"
      "    af_load16(&a, x + i, 16);\n"
      "    af_load16(&b, x + i + 16, 16);\n"
      "    af_put32_{0}(y + i, a, b, nt != 0);\n"
      "  }}\n"
      "  for (; i < n; i += 16) {{\n"
      "    af_f32x16 a;\n"
      "    af_load16(&a, x + i, n - i);\n"
      "    af_put16_{0}(y + i, a, n - i);\n"
      "  }}\n"
      "  af_nt_fence();\n"
      "}}\n"
      "extern \"C\" void t_load_{0}(const uint16_t* h, float* y, int64_t n) {{\n"
      "  for (int64_t i = 0; i < n; i += 16) {{\n"
      "    af_f32x16 a;\n"
      "    af_load16_{0}(&a, h + i, n - i);\n"
      "    af_store16(y + i, &a, n - i);\n"
      "  }}\n"
      "}}\n"
      "#else\n"
      "extern \"C\" int t_vector_{0}(void) {{ return 0; }}\n"
      "extern \"C\" void t_put_{0}(const float*, uint16_t*, int64_t, int) {{}}\n"
      "extern \"C\" void t_load_{0}(const uint16_t*, float*, int64_t) {{}}\n"
      "#endif\n",
      half);
}

/// The prelude plus array loops over its functions, as a module.
const jit::Module& prelude_module() {
  static const std::shared_ptr<jit::Module> module = [] {
    codegen::ModuleSource source;
    source.code = std::string(codegen::kernel_prelude());
    const auto loop = [&](const char* name, const char* in, const char* out, const char* fn) {
      source.code += fmt::format(
          "extern \"C\" void t_{0}(const {1}* __restrict x, {2}* __restrict y, int64_t n) {{\n"
          "#pragma omp simd\n"
          "  for (int64_t i = 0; i < n; ++i) y[i] = {3}(x[i]);\n}}\n",
          name, in, out, fn);
    };
    loop("f16_to_f32", "uint16_t", "float", "af_f16_to_f32");
    loop("bf16_to_f32", "uint16_t", "float", "af_bf16_to_f32");
    loop("f32_to_f16", "float", "uint16_t", "af_f32_to_f16");
    loop("f32_to_bf16", "float", "uint16_t", "af_f32_to_bf16");
    for (const char* f : kFunctions)
      loop(f, "float", "float", fmt::format("af_{}", f).c_str());
    loop("exp_nonpos", "float", "float", "af_exp_nonpos");
    source.code +=
        "extern \"C\" void t_exp_nonpos_row(float* p, int64_t n) { af_exp_nonpos_row(p, n); }\n"
        "extern \"C\" int t_exp_row_x16(void) { return AF_EXP_ROW_X16; }\n"
        "extern \"C\" int t_avx512f(void) { return AF_VECTOR_PASS && !AF_LANE_PAIRS; }\n"
        "#ifdef __FMA__\n"
        "extern \"C\" int t_fma(void) { return 1; }\n"
        "#else\n"
        "extern \"C\" int t_fma(void) { return 0; }\n"
        "#endif\n";
    // bf16 stores by the chunk (n a multiple of 64), as inner_loop.cpp emits them.
    source.code +=
        "extern \"C\" int t_bf16_cvt(void) { return AF_BF16_CVT; }\n"
        "extern \"C\" void t_bf16_chunks(const float* __restrict x, uint16_t* __restrict y,\n"
        "    int64_t n, int nt) {\n"
        "  for (int64_t k = 0; k < n; k += AF_NT_CHUNK) {\n"
        "    af_bf16_chunk_t t[AF_NT_CHUNK] __attribute__((aligned(64)));\n"
        "#pragma omp simd\n"
        "    for (int64_t i = 0; i < AF_NT_CHUNK; ++i) t[i] = AF_BF16_CHUNK_VALUE(x[k + i]);\n"
        "    if (nt) af_bf16_nt_store(y + k, t, AF_NT_CHUNK); else af_bf16_store(y + k, t, "
        "AF_NT_CHUNK);\n"
        "  }\n"
        "  af_nt_fence();\n"
        "}\n";
    // A vector pass's 16 lanes (kernel_prelude_lanes.h): loads, stores and
    // sums of a row's tail, and its bf16 stores.
    source.code +=
        "#if AF_VECTOR_PASS\n"
        "extern \"C\" int t_vector_pass(void) { return 1; }\n"
        "extern \"C\" float t_lanes(const float* x, const uint16_t* h, float* y, int64_t n) {\n"
        "  af_f32x16 v, w, s[4] = {};\n"
        "  af_load16(&v, x, n);\n"
        "  af_load16_bf16(&w, h, n);\n"
        "  af_add_lanes(&s[1], &w, n);\n"
        "  const af_f32x16 r = v * 2.0f + w;\n"
        "  af_store16(y, &r, n);\n"
        "  return af_row_sum16x4(s);\n"
        "}\n"
        "#else\n"
        "extern \"C\" int t_vector_pass(void) { return 0; }\n"
        "extern \"C\" float t_lanes(const float*, const uint16_t*, float*, int64_t) { return 0; }\n"
        "#endif\n";
    source.code += vector_halves("bf16") + vector_halves("f16");
    source.code +=
        "extern \"C\" void t_choose(int64_t units, int64_t bytes, int64_t align,\n"
        "    const af_machine* m, int64_t* out) {\n"
        "  const af_block_split s = af_choose_blocks(units, bytes, align, m);\n"
        "  out[0] = s.block_dim;\n  out[1] = s.chunk;\n}\n"
        "extern \"C\" void t_group(int64_t n, const af_tiling_header* members,\n"
        "    const int64_t* level, const int64_t* empty, int64_t max_phases,\n"
        "    af_group_slot* slots, int64_t* out) {\n"
        "  const af_tiling_header* h[8];\n"
        "  for (int64_t k = 0; k < n; ++k) h[k] = &members[k];\n"
        "  af_tiling_header header = {};\n  header.max_phases = max_phases;\n"
        "  int64_t serial = -1;\n"
        "  af_group_schedule(n, h, level, empty, slots, &header, &serial);\n"
        "  out[0] = header.block_dim;\n  out[1] = header.num_phases;\n"
        "  out[2] = header.workspace_bytes;\n  out[3] = serial;\n}\n"
        "extern \"C\" void t_div(int64_t a, int64_t b, int64_t* out) {\n"
        "  out[0] = af_floordiv(a, b);\n  out[1] = af_mod(a, b);\n"
        "  out[2] = af_ceildiv(a, b);\n}\n"
        // Row extremes: of a buffer (padded by the function) and in place.
        "extern \"C\" float t_row_extreme(float* p, int64_t n, int is_max, int in_place,\n"
        "    int* nan) {\n"
        "  if (in_place) return is_max ? af_row_max_f32_in(p, n, nan) : af_row_min_f32_in(p, n, "
        "nan);\n"
        "  return is_max ? af_row_max_f32(p, n, nan) : af_row_min_f32(p, n, nan);\n}\n";
    return compile(source);
  }();
  return *module;
}

template <typename Fn>
Fn fn(const char* name) {
  return reinterpret_cast<Fn>(prelude_module().symbol(std::string("t_") + name));
}

/// The vector stores and loads without __builtin_shufflevector and F16C
/// (AF_SHUFFLEVECTOR 0, AF_F16C 0: the fallbacks of g++ before 12 and of a
/// target without F16C).
const jit::Module& fallback_module() {
  static const std::shared_ptr<jit::Module> module = [] {
    codegen::ModuleSource source;
    source.code = "#define AF_SHUFFLEVECTOR 0\n#define AF_F16C 0\n" +
                  std::string(codegen::kernel_prelude()) + vector_halves("bf16") +
                  vector_halves("f16");
    return compile(source);
  }();
  return *module;
}

bool exhaustive() {
  const char* e = std::getenv("AUTOFUSE_EXHAUSTIVE");
  return e != nullptr && std::string(e) == "1";
}

/// Float bit patterns to test: every `stride`-th one, and every pattern
/// whose low 16 bits are a rounding edge for f16 (bit 12) or bf16 (bit 15).
std::vector<uint32_t> sweep(uint32_t stride) {
  std::vector<uint32_t> bits;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += stride)
    bits.push_back(static_cast<uint32_t>(u));
  const uint32_t edges[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000,
                            0x2fff, 0x3000, 0x7fff, 0x8000, 0x8001, 0xffff};
  for (uint32_t top = 0; top < 0x10000; ++top)
    for (uint32_t low : edges)
      bits.push_back(top << 16 | low);
  return bits;
}

void for_each_chunk(uint32_t stride, const std::function<void(const std::vector<uint32_t>&)>& f) {
  if (!exhaustive()) return f(sweep(stride));
  std::vector<uint32_t> chunk(1 << 24);
  for (uint64_t base = 0; base < (uint64_t{1} << 32); base += chunk.size()) {
    for (size_t i = 0; i < chunk.size(); ++i)
      chunk[i] = static_cast<uint32_t>(base + i);
    f(chunk);
  }
}

TEST(Prelude, HalfToFloatIsExactForEveryInput) {
  std::vector<uint16_t> h(65536);
  for (uint32_t i = 0; i < 65536; ++i)
    h[i] = static_cast<uint16_t>(i);
  std::vector<float> y(h.size());
  using Fn = void (*)(const uint16_t*, float*, int64_t);
  fn<Fn>("f16_to_f32")(h.data(), y.data(), 65536);
  for (uint32_t i = 0; i < 65536; ++i)
    ASSERT_EQ(float_bits(y[i]), float_bits(f16_to_f32(h[i]))) << "f16 bits " << i;
  fn<Fn>("bf16_to_f32")(h.data(), y.data(), 65536);
  for (uint32_t i = 0; i < 65536; ++i)
    ASSERT_EQ(float_bits(y[i]), float_bits(bf16_to_f32(h[i]))) << "bf16 bits " << i;
}

TEST(Prelude, FloatToHalfRoundsLikeHalfH) {
  using Fn = void (*)(const float*, uint16_t*, int64_t);
  int64_t checked = 0;
  for_each_chunk(4099, [&](const std::vector<uint32_t>& bits) {
    std::vector<float> x(bits.size());
    for (size_t i = 0; i < bits.size(); ++i)
      x[i] = bits_float(bits[i]);
    std::vector<uint16_t> h(x.size()), b(x.size());
    fn<Fn>("f32_to_f16")(x.data(), h.data(), static_cast<int64_t>(x.size()));
    fn<Fn>("f32_to_bf16")(x.data(), b.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(h[i], f32_to_f16(x[i])) << fmt::format("f16 of bits {:#x}", bits[i]);
      ASSERT_EQ(b[i], f32_to_bf16(x[i])) << fmt::format("bf16 of bits {:#x}", bits[i]);
    }
    checked += static_cast<int64_t>(x.size());
  });
  EXPECT_GT(checked, 1'000'000);
}

TEST(Prelude, Bf16ChunkStoresRoundLikeHalfH) {
  // With AVX512-BF16 (AF_BF16_CVT) a chunk is rounded by vcvtne2ps2bf16,
  // or element by element when it holds a subnormal (the sweep has chunks
  // of both kinds); elsewhere the buffer holds bf16 already. Streaming and
  // ordinary stores, aligned and not.
  RecordProperty("bf16_cvt", fn<int (*)()>("bf16_cvt")());
  using Fn = void (*)(const float*, uint16_t*, int64_t, int);
  int64_t checked = 0;
  for_each_chunk(4099, [&](const std::vector<uint32_t>& bits) {
    const size_t n = bits.size() / 64 * 64;
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i)
      x[i] = bits_float(bits[i]);
    std::vector<uint16_t> y(n + 64);
    const auto mis = reinterpret_cast<uintptr_t>(y.data()) % 64;  // a multiple of 2
    const size_t aligned = (64 - mis) % 64 / 2;
    for (int nt : {0, 1}) {
      for (size_t offset : {aligned, aligned + 1}) {  // 64-byte aligned or not
        uint16_t* out = y.data() + offset;
        fn<Fn>("bf16_chunks")(x.data(), out, static_cast<int64_t>(n), nt);
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(out[i], f32_to_bf16(x[i]))
              << fmt::format("bf16 of bits {:#x} (nt {}, offset {})", bits[i], nt, offset);
      }
    }
    checked += static_cast<int64_t>(n);
  });
  EXPECT_GT(checked, 1'000'000);
}

/// The vector stores t_put_<half> of the prelude module and of the
/// fallback module against `convert` (half.h's rounding), bit for bit, on
/// the float sweep: streaming and ordinary stores, aligned and not, rows of
/// 1..53 elements (whole runs of 32, then 16s and a tail).
void check_vector_puts(const char* half, uint16_t (*convert)(float)) {
  using Fn = void (*)(const float*, uint16_t*, int64_t, int);
  const std::string name = fmt::format("put_{}", half);
  const Fn puts[] = {fn<Fn>(name.c_str()),
                     reinterpret_cast<Fn>(fallback_module().symbol("t_" + name))};
  int64_t checked = 0;
  for_each_chunk(4099, [&](const std::vector<uint32_t>& bits) {
    std::vector<float> x(bits.size());
    for (size_t i = 0; i < bits.size(); ++i)
      x[i] = bits_float(bits[i]);
    std::vector<uint16_t> y(x.size() + 64);
    const auto mis = reinterpret_cast<uintptr_t>(y.data()) % 64;  // a multiple of 2
    const size_t aligned = (64 - mis) % 64 / 2;
    for (size_t form = 0; form < std::size(puts); ++form) {
      for (int nt : {0, 1}) {
        for (size_t offset : {aligned, aligned + 1}) {
          std::fill(y.begin(), y.end(), uint16_t{0x5555});
          for (size_t at = 0, len = 1; at < x.size(); at += len, len = len % 53 + 1) {
            const size_t n = std::min(len, x.size() - at);
            puts[form](x.data() + at, y.data() + offset + at, static_cast<int64_t>(n), nt);
          }
          for (size_t i = 0; i < x.size(); ++i)
            ASSERT_EQ(y[offset + i], convert(x[i])) << fmt::format(
                "{} of bits {:#x} (form {}, nt {}, offset {})", half, bits[i], form, nt, offset);
        }
      }
    }
    checked += static_cast<int64_t>(x.size());
  });
  EXPECT_GT(checked, 1'000'000);
}

TEST(Prelude, VectorPassStoresRoundLikeHalfH) {
  // af_put32_bf16 and af_put16_bf16 (a storing vector pass's bf16 stores):
  // vcvtne2ps2bf16 with AVX512-BF16 (element by element where a value is
  // subnormal), the integer rounding elsewhere (AVX-512: both halves packed
  // by vpermt2w, or by two vpmovdw without __builtin_shufflevector; AVX2:
  // lane pairs); streaming and ordinary stores, aligned and not, rows with
  // tails of every length.
  RecordProperty("vector_bf16", fn<int (*)()>("vector_bf16")());
  if (fn<int (*)()>("vector_bf16")() == 0) GTEST_SKIP() << "no vector bf16 stores here";
  check_vector_puts("bf16", f32_to_bf16);
}

TEST(Prelude, VectorPassF16MatchesHalfH) {
  // af_put32_f16 / af_put16_f16 and af_load16_f16 (a vector pass's f16
  // stores and loads, kernel_prelude_f16.h): F16C's vcvtps2ph and
  // vcvtph2ps, and lane by lane without it (AF_F16C 0); against half.h's
  // conversions bit for bit: every f16 value, the float sweep (every float
  // with AUTOFUSE_EXHAUSTIVE=1); streaming and ordinary stores, aligned and
  // not, rows with tails of every length.
  if (fn<int (*)()>("vector_f16")() == 0) GTEST_SKIP() << "no vector passes here";
  using Load = void (*)(const uint16_t*, float*, int64_t);
  const Load loads[] = {fn<Load>("load_f16"),
                        reinterpret_cast<Load>(fallback_module().symbol("t_load_f16"))};
  std::vector<uint16_t> h(65536 + 64);
  std::vector<float> wide(h.size());
  for (size_t form = 0; form < std::size(loads); ++form) {
    for (size_t offset : {0, 1}) {
      for (uint32_t i = 0; i < 65536; ++i)
        h[offset + i] = static_cast<uint16_t>(i);
      std::fill(wide.begin(), wide.end(), -1.0f);
      // Rows of 1..37 elements: 16s and a tail.
      for (size_t at = 0, len = 1; at < 65536; at += len, len = len % 37 + 1) {
        const size_t n = std::min<size_t>(len, 65536 - at);
        loads[form](h.data() + offset + at, wide.data() + at, static_cast<int64_t>(n));
      }
      for (uint32_t i = 0; i < 65536; ++i)
        ASSERT_EQ(float_bits(wide[i]), float_bits(f16_to_f32(static_cast<uint16_t>(i))))
            << fmt::format("f16 {:#x} widened (form {}, offset {})", i, form, offset);
    }
  }
  check_vector_puts("f16", f32_to_f16);
}

TEST(Prelude, VectorLanesReadAndWriteOnlyTheRow) {
  // af_load16, af_load16_bf16, af_store16 and af_add_lanes on n = 0..16
  // lanes, the row ending at a page whose successor is unreadable: nothing
  // past lane n - 1 is read or written, the lanes after it add nothing.
  if (fn<int (*)()>("vector_pass")() == 0) GTEST_SKIP() << "no vector passes here";
  using Fn = float (*)(const float*, const uint16_t*, float*, int64_t);
  // Three rows, each ending at an unreadable page: x, h and y.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* mem = static_cast<char*>(
      mmap(nullptr, 6 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  for (size_t guard : {1, 3, 5})
    ASSERT_EQ(mprotect(mem + guard * page, page, PROT_NONE), 0);
  for (int64_t n = 0; n <= 16; ++n) {
    float* x = reinterpret_cast<float*>(mem + page) - n;
    auto* h = reinterpret_cast<uint16_t*>(mem + 3 * page) - n;
    float* y = reinterpret_cast<float*>(mem + 5 * page) - 16;  // 16 lanes below the guard
    float want_sum = 0.0f;
    for (int64_t k = 0; k < n; ++k) {
      x[k] = static_cast<float>(k + 1);
      h[k] = f32_to_bf16(static_cast<float>(64 * (k + 1)));
      want_sum += static_cast<float>(64 * (k + 1));
    }
    for (int k = 0; k < 16; ++k)
      y[k] = -1.0f;
    // y's row starts 16 - n lanes later, so its end is the guard too.
    const float sum = fn<Fn>("lanes")(x, h, y + (16 - n), n);
    EXPECT_EQ(sum, want_sum) << "n = " << n;
    for (int64_t k = 0; k < 16 - n; ++k)
      EXPECT_EQ(y[k], -1.0f) << "n = " << n << ", lane " << k << " written before the row";
    for (int64_t k = 0; k < n; ++k)
      EXPECT_EQ(y[16 - n + k], 2.0f * static_cast<float>(k + 1) + 64.0f * static_cast<float>(k + 1))
          << "n = " << n << ", lane " << k;
  }
  munmap(mem, 6 * page);
}

int64_t ordered(float f) {
  const auto i = static_cast<int32_t>(float_bits(f));
  return i < 0 ? int64_t{std::numeric_limits<int32_t>::min()} - i : i;
}

float glibc(const std::string& name, float x) {
  if (name == "exp") return std::exp(x);
  if (name == "log") return std::log(x);
  if (name == "tanh") return std::tanh(x);
  if (name == "erf") return std::erf(x);
  if (name == "sin") return std::sin(x);
  if (name == "cos") return std::cos(x);
  // sigmoid: the exact value rounded once (the reference's float formula
  // 1 / (1 + expf(-x)) is 0 below -88.7, where the value is subnormal).
  return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x))));
}

TEST(Prelude, VectorMathIsWithinAFewUlpOfGlibc) {
  using Fn = void (*)(const float*, float*, int64_t);
  // erf's polynomials lose an ulp without fused multiply-adds (a target
  // without FMA, e.g. CXX compiling for -march=x86-64-v2: 3 ulp).
  const int64_t erf_ulp = fn<int (*)()>("fma")() ? 2 : 3;
  const std::map<std::string, int64_t> max_ulp = {{"exp", 1},       {"log", 1}, {"tanh", 2},
                                                  {"erf", erf_ulp}, {"sin", 1}, {"cos", 1},
                                                  {"sigmoid", 4}};
  for (const char* name : kFunctions) {
    int64_t worst = 0;
    float worst_x = 0;
    for_each_chunk(4099, [&](const std::vector<uint32_t>& bits) {
      std::vector<float> x(bits.size()), y(bits.size());
      for (size_t i = 0; i < bits.size(); ++i)
        x[i] = bits_float(bits[i]);
      fn<Fn>(name)(x.data(), y.data(), static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); ++i) {
        const float want = glibc(name, x[i]);
        if (std::isnan(want) || std::isnan(y[i])) {
          ASSERT_EQ(std::isnan(want), std::isnan(y[i]))
              << name << "(" << x[i] << ") = " << y[i] << ", glibc " << want;
          continue;
        }
        const int64_t d = std::llabs(ordered(y[i]) - ordered(want));
        if (d > worst) {
          worst = d;
          worst_x = x[i];
        }
      }
    });
    EXPECT_LE(worst, max_ulp.at(name))
        << name << " is " << worst << " ulp off at x = " << fmt::format("{:a}", worst_x);
  }
}

TEST(Prelude, ExpOfNonPositiveIsExp) {
  // af_exp_nonpos (no upper clamp, for x - max(x)) gives af_exp's bits for
  // every x <= 0 and NaN, and for x up to 64 (its scaling holds to ~70: a
  // contracted recomputation of x may exceed the max by an ulp); so does
  // af_exp_nonpos_row, its in-place row form (vscalefps under AVX-512).
  using Fn = void (*)(const float*, float*, int64_t);
  using RowFn = void (*)(float*, int64_t);
  // Where the module is built for AVX-512 (the JIT's target, not the
  // host's: CXX may name another), the 16-lane form is on.
  if (fn<int (*)()>("avx512f")()) {
    EXPECT_EQ(fn<int (*)()>("exp_row_x16")(), 1);
  }
  int64_t checked = 0;
  for_each_chunk(4099, [&](const std::vector<uint32_t>& bits) {
    std::vector<float> x;
    for (uint32_t b : bits) {
      const float f = bits_float(b);
      if (!(f > 64.0f)) x.push_back(f);
    }
    std::vector<float> want(x.size()), got(x.size());
    fn<Fn>("exp")(x.data(), want.data(), static_cast<int64_t>(x.size()));
    fn<Fn>("exp_nonpos")(x.data(), got.data(), static_cast<int64_t>(x.size()));
    // af_exp_nonpos_row in place, in rows of 1..37 (16-lane vectors and tails).
    std::vector<float> row = x;
    for (size_t at = 0, len = 1; at < row.size(); at += len, len = len % 37 + 1)
      fn<RowFn>("exp_nonpos_row")(row.data() + at,
                                  static_cast<int64_t>(std::min(len, row.size() - at)));
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(want[i])) {
        ASSERT_TRUE(std::isnan(got[i])) << fmt::format("x = {:a}", x[i]);
        ASSERT_TRUE(std::isnan(row[i])) << fmt::format("row: x = {:a}", x[i]);
        continue;
      }
      ASSERT_EQ(float_bits(got[i]), float_bits(want[i]))
          << fmt::format("x = {:a}: {} vs af_exp's {}", x[i], got[i], want[i]);
      ASSERT_EQ(float_bits(row[i]), float_bits(want[i]))
          << fmt::format("row: x = {:a}: {} vs af_exp's {}", x[i], row[i], want[i]);
    }
    checked += static_cast<int64_t>(x.size());
  });
  EXPECT_GT(checked, 500'000);
}

TEST(Prelude, VectorMathEdgeValues) {
  using Fn = void (*)(const float*, float*, int64_t);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.0f,      -0.0f,   inf,     -inf,   nan,
                                1e-45f,    -1e-45f, 3e38f,   -3e38f, 88.72283f,
                                88.72284f, -103.9f, -104.0f, 1e5f,   12345.678f};
  std::vector<float> y(x.size());
  for (const char* name : kFunctions) {
    fn<Fn>(name)(x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = glibc(name, x[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << name << "(" << x[i] << ")";
      } else {
        EXPECT_LE(std::llabs(ordered(y[i]) - ordered(want)), 4)
            << name << "(" << x[i] << ") = " << y[i] << ", glibc " << want;
      }
    }
  }
}

// The streaming stores' helpers: the peel to an aligned line, and
// af_nt_store (streamed where aligned, ordinary stores elsewhere).
TEST(Prelude, StreamingStoreHelpers) {
  codegen::ModuleSource source;
  source.code = std::string(codegen::kernel_prelude());
  source.code +=
      "extern \"C\" int64_t t_peel(const void* p, int64_t e, int64_t n) {\n"
      "  return af_nt_peel(p, e, n);\n}\n"
      "extern \"C\" void t_store(void* dst, const void* src, int64_t bytes) {\n"
      "  af_nt_store(dst, src, bytes);\n  af_nt_fence();\n}\n";
  const auto so = compile(source);
  const auto peel =
      reinterpret_cast<int64_t (*)(const void*, int64_t, int64_t)>(so->symbol("t_peel"));
  const auto store = reinterpret_cast<void (*)(void*, const void*, int64_t)>(so->symbol("t_store"));
  alignas(64) static unsigned char buf[512];
  for (int64_t elem : {1, 2, 4, 8}) {
    for (int64_t k = 0; k < 128; k += elem) {
      const int64_t want = ((64 - k % 64) % 64) / elem;
      EXPECT_EQ(peel(buf + k, elem, 1000), want) << elem << " " << k;
      EXPECT_EQ(peel(buf + k, elem, 3), std::min<int64_t>(want, 3)) << elem << " " << k;
    }
  }
  EXPECT_EQ(peel(buf + 2, 4, 1000), 1000);  // never aligned
  EXPECT_EQ(peel(buf + 6, 8, 70), 70);
  alignas(64) unsigned char src[256];
  for (int i = 0; i < 256; ++i)
    src[i] = static_cast<unsigned char>(i * 7 + 1);
  for (int64_t at : {0, 64, 4, 1}) {  // aligned: streamed; else ordinary stores
    std::memset(buf, 0, sizeof(buf));
    store(buf + at, src, 256);
    EXPECT_EQ(std::memcmp(buf + at, src, 256), 0) << at;
    for (int64_t i = 0; i < at; ++i)
      EXPECT_EQ(buf[i], 0) << at;
    for (int64_t i = at + 256; i < 512; ++i)
      EXPECT_EQ(buf[i], 0) << at;
  }
}

TEST(Prelude, CostModel) {
  using Fn = void (*)(int64_t, int64_t, int64_t, const af_machine*, int64_t*);
  auto choose = fn<Fn>("choose");
  const af_machine m{4, 32 << 10, 1 << 20, 32 << 20, 64, 64 << 10, 0};
  int64_t out[2];
  choose(1000, 8, 64, &m, out);  // 8 KB: one block, no thread wake-up
  EXPECT_EQ(out[0], 1);
  EXPECT_GE(out[1], 1000);
  choose(1 << 20, 8, 64, &m, out);  // 8 MB: every core
  EXPECT_EQ(out[0], 4);
  EXPECT_EQ(out[1], (1 << 20) / 4);
  choose(20000, 8, 64, &m, out);  // 160 KB: two blocks of >= 64 KB
  EXPECT_EQ(out[0], 2);
  for (int64_t units : {1, 63, 64, 65, 1000, 4097, 100003}) {
    for (int64_t align : {1, 16, 64}) {
      const af_machine tiny{7, 32 << 10, 1 << 20, 32 << 20, 64, 1, 0};
      choose(units, 4, align, &tiny, out);
      EXPECT_GE(out[0], 1);
      EXPECT_LE(out[0], 7);
      EXPECT_EQ(out[1] % align, 0) << units << " units, align " << align;
      EXPECT_GE(out[0] * out[1], units);        // everything covered
      EXPECT_LT((out[0] - 1) * out[1], units);  // no empty block
    }
  }
  choose(0, 4, 64, &m, out);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 0);
}

/// af_group_slot of the prelude (kernel groups).
struct GroupSlot {
  int64_t start, off, block_dim, phases, workspace;
};

TEST(Prelude, GroupScheduleRunsSmallMembersOnOneBlock) {
  using Fn = void (*)(int64_t, const af_tiling_header*, const int64_t*, const int64_t*, int64_t,
                      GroupSlot*, int64_t*);
  auto group = fn<Fn>("group");
  // Every member one block: one block runs them all in order; workspaces
  // are laid out one after the other, 64-byte aligned.
  const af_tiling_header small[2] = {{1, 0, 0, 3, 10}, {1, 0, 0, 1, 70}};
  const int64_t levels[2] = {0, 1}, none_empty[2] = {0, 0};
  GroupSlot slots[2];
  int64_t out[4];
  group(2, small, levels, none_empty, 1 << 20, slots, out);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(out[2], 64 + 128);
  EXPECT_EQ(out[3], 1);
  EXPECT_EQ(slots[0].phases, 3);  // all three of its launches, in order
  EXPECT_EQ(slots[0].workspace, 0);
  EXPECT_EQ(slots[1].workspace, 64);
}

TEST(Prelude, GroupScheduleLaysOutLevelsInPhases) {
  using Fn = void (*)(int64_t, const af_tiling_header*, const int64_t*, const int64_t*, int64_t,
                      GroupSlot*, int64_t*);
  auto group = fn<Fn>("group");
  // Level 0: members 0 (2 blocks, 1 launch) and 1 (2 blocks, 3 launches)
  // side by side; level 1: member 2 (3 blocks) after them; member 3 empty.
  const af_tiling_header members[4] = {
      {2, 0, 0, 1, 0}, {2, 0, 0, 3, 100}, {3, 0, 0, 0, 0}, {4, 0, 0, 1, 1000}};
  const int64_t levels[4] = {0, 0, 1, 1}, empty[4] = {0, 0, 0, 1};
  GroupSlot slots[4];
  int64_t out[4];
  group(4, members, levels, empty, 1 << 20, slots, out);
  EXPECT_EQ(out[0], 4);  // the widest phase: members 0 and 1
  EXPECT_EQ(out[1], 4);  // 3 launches of level 0, 1 of level 1
  EXPECT_EQ(out[2], 128);
  EXPECT_EQ(out[3], 0);
  EXPECT_EQ(slots[0].start, 0);
  EXPECT_EQ(slots[0].off, 0);
  EXPECT_EQ(slots[1].start, 0);
  EXPECT_EQ(slots[1].off, 2);
  EXPECT_EQ(slots[1].phases, 3);
  EXPECT_EQ(slots[2].start, 3);
  EXPECT_EQ(slots[2].off, 0);
  EXPECT_EQ(slots[2].phases, 1);
  EXPECT_EQ(slots[3].block_dim, 0);  // nothing to write: skipped
  // A caller that runs one launch only: everything on one block.
  group(4, members, levels, empty, 0, slots, out);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(out[3], 1);
}

TEST(Prelude, FloorDivision) {
  using Fn = void (*)(int64_t, int64_t, int64_t*);
  auto div = fn<Fn>("div");
  int64_t out[3];
  for (int64_t a : {-7, -6, -1, 0, 1, 6, 7}) {
    for (int64_t b : {-3, -1, 1, 3}) {
      div(a, b, out);
      const int64_t q = static_cast<int64_t>(std::floor(static_cast<double>(a) / b));
      EXPECT_EQ(out[0], q) << a << " // " << b;
      EXPECT_EQ(out[1], a - b * q) << a << " mod " << b;
      EXPECT_EQ(out[2], static_cast<int64_t>(std::ceil(static_cast<double>(a) / b)));
    }
  }
}

// af_row_max_f32 / af_row_min_f32 (and the _in forms) against the clause's
// `x > a ? x : a` over the non-NaN values plus a NaN flag, for rows whose
// probe sum stays a number (the fast path) and rows where it is NaN without
// a NaN value (+inf and -inf, or overflowing sums of both signs: the
// checked path), NaN anywhere (whole vectors and the tail), every length
// around the 8-lane vectors and the 32-element unrolled loop.
TEST(Prelude, RowExtremesMatchTheClause) {
  using Fn = float (*)(float*, int64_t, int, int, int*);
  auto extreme = fn<Fn>("row_extreme");
  const float inf = std::numeric_limits<float>::infinity();
  const float big = std::numeric_limits<float>::max();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  uint64_t state = 12345;
  const auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>(state >> 33);
  };
  int checked = 0;
  for (int64_t n = 1; n <= 100; ++n) {
    for (int kind = 0; kind < 7; ++kind) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x)
        v = static_cast<float>(next() % 2001 - 1000) / 7.0f;
      const auto at = [&] { return static_cast<size_t>(next() % n); };
      switch (kind) {
        case 1:  // one NaN
          x[at()] = nan;
          break;
        case 2:  // NaN last (the tail after the whole vectors)
          x.back() = nan;
          break;
        case 3:  // the probe NaN without a NaN value
          x[at()] = inf;
          x[at()] = -inf;
          break;
        case 4:  // sums overflowing both ways (or cancelling)
          for (float v : {big, big, -big, -big})
            x[at()] = v;
          break;
        case 5:  // -inf, no NaN
          x[at()] = -inf;
          break;
        case 6:  // signed zeros
          for (float& v : x)
            v = (next() % 2) ? 0.0f : -0.0f;
          break;
        default:
          break;
      }
      for (int is_max : {1, 0}) {
        for (int in_place : {0, 1}) {
          float want = is_max ? -inf : inf;
          int want_nan = 0;
          for (float v : x) {
            want = is_max ? (v > want ? v : want) : (v < want ? v : want);
            want_nan |= v != v;
          }
          std::vector<float> buffer(x);
          buffer.resize(x.size() + 8, 1234.0f);  // the pad the function writes
          int got_nan = -1;
          const float got = extreme(buffer.data(), n, is_max, in_place, &got_nan);
          ASSERT_EQ(got_nan, want_nan) << "n=" << n << " kind=" << kind << " max=" << is_max;
          ASSERT_EQ(got, want) << "n=" << n << " kind=" << kind << " max=" << is_max
                               << " in_place=" << in_place;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 100 * 7 * 4);
}

TEST(Prelude, IncludesLittle) {
  const std::string_view prelude = codegen::kernel_prelude();
  size_t includes = 0;
  for (size_t at = prelude.find("#include"); at != std::string_view::npos;
       at = prelude.find("#include", at + 1))
    ++includes;
  // kernel_abi.h, float8.h and the prelude include <stdint.h> (one real
  // include: the rest hit its guard); half.h <cstdint> and <cstring>.
  EXPECT_LE(includes, 5u);
  EXPECT_THAT(std::string(prelude), HasSubstr("af_choose_blocks"));
}

}  // namespace prelude_test_local
}  // namespace autofuse::codegen_test
