#include "codegen_test_util.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "autofuse/ascir/lower.h"
#include "autofuse/fuse/loop_axes.h"
#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "autofuse/tiling/tiling.h"
#include "test_kernel_cache.h"

namespace autofuse::codegen_test {

std::string kernel_code(const std::string& text) {
  std::vector<schedule::ScheduledKernel> kernels = {schedule_graph(parse_graph(text))};
  const std::string code = codegen::generate_cpu_module(kernels).code;
  const size_t at = code.find("// ---- kernel ");  // after the prelude
  EXPECT_NE(at, std::string::npos);
  return at == std::string::npos ? code : code.substr(at);
}

std::string kernel_text(const std::string& code, const std::string& name) {
  const size_t begin = code.find(fmt::format("extern \"C\" void {}_kernel(", name));
  EXPECT_NE(begin, std::string::npos) << name;
  if (begin == std::string::npos) return {};
  return code.substr(begin, code.find("\n}\n", begin) - begin);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

schedule::ScheduledKernel schedule_graph(const Graph& graph) {
  fuse::Region region;
  region.kind = fuse::RegionKind::Kernel;
  region.name = graph.name();
  for (const Node& n : graph.nodes())
    region.nodes.push_back(n.id);
  region.inputs = graph.inputs();
  region.outputs = graph.outputs();
  const fuse::FusionDecision d = fuse::map_loop_axes(graph, region.nodes, region.loop_axes);
  if (!d.ok()) throw std::runtime_error("no loop axes for " + graph.name() + ": " + d.reason());
  ascir::AscGraph asc = ascir::lower_region(graph, region);
  ascir::elide_casts(asc);
  return schedule::schedule_kernel(std::move(asc));
}

std::shared_ptr<jit::Module> compile(const codegen::ModuleSource& module) {
  jit::CompilerOptions options;
  options.cache_dir = shared_test_cache();
  jit::CompileStats stats;
  return jit::compile_and_load(module.code, options, stats);
}

af_machine one_core() {
  return af_machine{1, 32 << 10, 1 << 20, 32 << 20, 64, 1 << 16, 0};
}

af_machine many_tiny_blocks(int64_t cores, int64_t vector_bytes) {
  return af_machine{cores, 32 << 10, 1 << 20, 32 << 20, vector_bytes, 1, 0};
}

std::vector<int64_t> run_tiling(const jit::Module& module, const codegen::KernelSource& k,
                                const sym::Binding& binding, const af_machine& machine) {
  using SizeFn = int64_t (*)();
  using TilingFn = void (*)(const int64_t*, const af_machine*, void*);
  auto size_fn = reinterpret_cast<SizeFn>(module.symbol(k.name + "_tiling_data_size"));
  auto tiling_fn = reinterpret_cast<TilingFn>(module.symbol(k.name + "_tiling"));
  std::vector<int64_t> symbols;
  for (const std::string& s : k.symbols)
    symbols.push_back(binding.at(s));
  const int64_t td_size = size_fn();
  std::vector<int64_t> td(static_cast<size_t>((td_size + 7) / 8) + 1, 0);
  tiling_fn(symbols.data(), &machine, td.data());
  return td;
}

KernelRun run_kernel(const jit::Module& module, const codegen::KernelSource& k,
                     const ascir::AscGraph& asc, const Graph& graph,
                     const std::vector<HostTensor>& inputs, const sym::Binding& binding,
                     const af_machine& machine, const RunOptions& options) {
  using KernelFn = void (*)(const void*, void* const*, int64_t);
  auto kernel_fn = reinterpret_cast<KernelFn>(module.symbol(k.name + "_kernel"));
  std::vector<int64_t> td = run_tiling(module, k, binding, machine);
  auto* header = reinterpret_cast<af_tiling_header*>(td.data());
  if (options.force_key >= 0) header->tiling_key = options.force_key;

  KernelRun run;
  run.block_dim = header->block_dim;
  std::vector<void*> args;
  for (ValueId v : asc.inputs) {
    const auto& ins = graph.inputs();
    const auto it = std::find(ins.begin(), ins.end(), v);
    if (it == ins.end()) throw std::runtime_error("kernel input is not a graph input");
    args.push_back(const_cast<void*>(inputs.at(static_cast<size_t>(it - ins.begin())).data()));
  }
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<void, Free>> buffers;
  std::vector<std::byte*> starts;
  for (ValueId v : asc.outputs) {
    const TensorType& t = graph.value(v).type;
    run.outputs.emplace_back(t.dtype, concrete_shape(t.shape, binding));
    const size_t skip = static_cast<size_t>(options.output_offset * dtype_size(t.dtype));
    const size_t bytes = (run.outputs.back().nbytes() + skip + 64) / 64 * 64;
    buffers.emplace_back(std::aligned_alloc(64, bytes));
    if (buffers.back() == nullptr) throw std::bad_alloc();
    std::memset(buffers.back().get(), 0xA5, bytes);
    starts.push_back(static_cast<std::byte*>(buffers.back().get()) + skip);
    args.push_back(starts.back());
  }
  args.push_back(nullptr);  // the workspace slot (no workspace: max_phases 0)
  args.push_back(&run.status);
  for (int64_t b = 0; b < header->block_dim; ++b)
    kernel_fn(td.data(), args.data(), b);
  for (size_t o = 0; o < run.outputs.size(); ++o)
    if (run.outputs[o].nbytes() > 0)
      std::memcpy(run.outputs[o].data(), starts[o], run.outputs[o].nbytes());
  return run;
}

std::string softmax_text(const std::string& dtype, const std::string& d) {
  return fmt::format(R"(graph softmax(x: {0}[N, {1}]) {{
  m = reduce_max(x, axes=[1], keepdims=true)
  shifted = sub(x, m)
  e = exp(shifted)
  s = reduce_sum(e, axes=[1], keepdims=true)
  y = div(e, s)
  return y
}})",
                     dtype, d);
}

std::string selects_pass_text(const std::string& dtype, const std::string& d) {
  return fmt::format(R"(graph selects(x: {0}[N, {1}], y: {0}[N, {1}]) {{
  m = reduce_mean(x, axes=[1], keepdims=true)
  c = constant(dtype={0}, value=0.5)
  one = constant(dtype={0}, value=1)
  a = abs(x)
  r = relu(y)
  mx = max(a, r)
  mn = min(mx, c)
  mk = max(c, y)
  ck = min(c, x)
  q = sqrt(a)
  qn = sqrt(r)
  d1 = add(q, one)
  rc = reciprocal(d1)
  t1 = add(mn, mk)
  t2 = mul(t1, rc)
  t3 = min(t2, m)
  t4 = max(m, t3)
  t5 = add(t4, ck)
  t6 = max(x, c)
  t7 = min(y, t6)
  t8 = add(t5, t7)
  t9 = max(t8, qn)
  u = add(t9, one)
  s = reduce_sum(u, axes=[1], keepdims=true)
  z = sub(u, s)
  mxy = max(x, y)
  myx = max(y, x)
  nxy = min(x, y)
  nyx = min(y, x)
  ws = mul(mxy, s)
  return s, z, ws, myx, nxy, nyx
}})",
                     dtype, d);
}

std::vector<HostTensor> selects_inputs(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> in = random_inputs(graph, binding, 7);
  const int64_t d = in.at(0).numel() / binding.at("N");
  set_row_elements(in[0], d, d - 1, {{0, -0.0}, {1, NAN}, {2, 0.0}, {3, INFINITY}, {5, -INFINITY}});
  set_row_elements(in[0], d, 0, {{0, -0.0}, {4, -0.0}, {6, INFINITY}});
  set_row_elements(in[1], d, 0, {{0, -0.0}, {2, 0.0}, {4, -0.0}});
  set_row_elements(in[1], d, d - 1, {{2, -0.0}, {4, -INFINITY}, {7, NAN}});
  return in;
}

void set_row_elements(HostTensor& x, int64_t d, int64_t col,
                      const std::vector<std::pair<int64_t, double>>& values) {
  for (const auto& [row, v] : values)
    if ((row + 1) * d <= x.numel()) x.set_f64(row * d + col, v);
}

std::string normalized_text(const std::string& dtype, const std::string& x, int axis) {
  return fmt::format(R"(  mean = reduce_mean({1}, axes=[{2}], keepdims=true)
  xc = sub({1}, mean)
  sq = mul(xc, xc)
  var = reduce_mean(sq, axes=[{2}], keepdims=true)
  eps = constant(dtype={0}, value=1e-5)
  ve = add(var, eps)
  inv = rsqrt(ve)
  xn = mul(xc, inv)
)",
                     dtype, x, axis);
}

::testing::AssertionResult tensors_close(const HostTensor& got, const HostTensor& want, double rtol,
                                         double atol) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return ::testing::AssertionFailure()
           << "got " << got.type_string() << ", want " << want.type_string();
  int bad = 0;
  std::string report;
  for (int64_t i = 0; i < got.numel(); ++i) {
    bool ok;
    if (!is_float(got.dtype())) {
      ok = got.get_i64(i) == want.get_i64(i);
    } else {
      const double g = got.get_f64(i);
      const double w = want.get_f64(i);
      if (std::isnan(w) || std::isnan(g))
        ok = std::isnan(w) && std::isnan(g);
      else if (std::isinf(w) || std::isinf(g))
        ok = g == w;
      else if (w == 0 && rtol == 0 && atol == 0)
        ok = g == 0 && std::signbit(g) == std::signbit(w);  // exact: -0 is not +0
      else
        ok = std::fabs(g - w) <= atol + rtol * std::fabs(w);
    }
    if (!ok && ++bad <= 8) {
      report +=
          is_float(got.dtype())
              ? fmt::format("\n  [{}] got {:.9g}, want {:.9g}", i, got.get_f64(i), want.get_f64(i))
              : fmt::format("\n  [{}] got {}, want {}", i, got.get_i64(i), want.get_i64(i));
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.numel() << " elements differ" << report;
}

std::string check_cases(std::vector<GraphCase>& cases, uint64_t seed, const std::string& prefix) {
  std::vector<schedule::ScheduledKernel> kernels;
  for (GraphCase& c : cases)
    kernels.push_back(schedule_graph(c.graph));
  codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  module.code = prefix + module.code;
  const std::shared_ptr<jit::Module> so = compile(module);
  const af_machine machines[] = {one_core(), many_tiny_blocks(3, 1), many_tiny_blocks(7, 4),
                                 many_tiny_blocks(2, 64)};
  for (size_t i = 0; i < cases.size(); ++i) {
    GraphCase& c = cases[i];
    for (const sym::Binding& binding : c.bindings) {
      std::vector<HostTensor> inputs = random_inputs(c.graph, binding, seed);
      if (c.make_inputs != nullptr) inputs = c.make_inputs(c.graph, binding);
      const std::vector<HostTensor> want = run_reference(c.graph, inputs, binding);
      for (const af_machine& m : machines) {
        const KernelRun run =
            run_kernel(*so, module.kernels[i], kernels[i].graph, c.graph, inputs, binding, m);
        std::string where = fmt::format("{} with", c.label);
        for (const auto& [s, v] : binding)
          where += fmt::format(" {}={}", s, v);
        where += fmt::format(", cores {} vector {} -> {} blocks", m.cores, m.vector_bytes,
                             run.block_dim);
        for (size_t o = 0; o < want.size(); ++o)
          EXPECT_TRUE(tensors_close(run.outputs.at(o), want[o], c.rtol, c.atol))
              << where << ", output " << o;
      }
    }
  }
  return module.code;
}

std::string select_chain_text(const std::string& d, const std::string& dtype) {
  return fmt::format(R"(graph chain(x: {1}[N, {0}], w: {1}[{0}]) {{
  two = constant(dtype={1}, value=2)
  a = mul(x, two)
  b = sub(a, w)
  c = abs(b)
  m = max(c, w)
  n = min(m, two)
  q = sqrt(n)
  r = reciprocal(q)
  s = relu(b)
  t = div(s, two)
  u = add(r, t)
  y = neg(u)
  return y, m
}})",
                     d, dtype);
}

std::vector<sym::Binding> nd_bindings(const std::vector<std::pair<int64_t, int64_t>>& nd) {
  std::vector<sym::Binding> out;
  for (const auto& [n, d] : nd)
    out.push_back({{"N", n}, {"D", d}});
  return out;
}

std::vector<HostTensor> inputs_with_specials(const Graph& graph, const sym::Binding& binding,
                                             const std::vector<double>& specials) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 5);
  HostTensor& x = inputs.at(0);
  for (int64_t i = 0; i < x.numel(); i += 5)
    x.set_f64(i, specials[static_cast<size_t>(i / 5) % specials.size()]);
  if (inputs.size() > 1 && inputs[1].numel() > 1) inputs[1].set_f64(1, 1.5);
  return inputs;
}

void check_forms_agree(const std::vector<FormCase>& cases, const std::string& form,
                       const std::string& with, const std::string& without, const InputsFn& inputs,
                       const AgreeFn& agree) {
  std::vector<schedule::ScheduledKernel> kernels;
  for (const FormCase& c : cases)
    kernels.push_back(schedule_graph(c.graph));
  codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_NE(kernel_text(module.code, module.kernels[i].name).find(form), std::string::npos)
        << cases[i].label << ": no " << form;
  const std::string code = module.code;
  module.code = with + code;
  const std::shared_ptr<jit::Module> with_form = compile(module);
  module.code = without + code;
  const std::shared_ptr<jit::Module> without_form = compile(module);
  const af_machine machines[] = {one_core(), many_tiny_blocks(3, 4)};
  for (size_t i = 0; i < cases.size(); ++i) {
    const FormCase& c = cases[i];
    for (const sym::Binding& binding : c.bindings) {
      const std::vector<HostTensor> in = inputs(c.graph, binding);
      const std::vector<HostTensor> want = run_reference(c.graph, in, binding);
      for (const af_machine& m : machines) {
        for (int64_t key :
             {tiling::kOrdinaryStoresKey, tiling::kStreamingStoresKey, tiling::kPrefetchingKey}) {
          for (int64_t offset : {0, 1}) {
            const RunOptions options{key, offset};
            const auto run = [&](const jit::Module& so) {
              return run_kernel(so, module.kernels[i], kernels[i].graph, c.graph, in, binding, m,
                                options);
            };
            const KernelRun got = run(*with_form);
            const KernelRun base = run(*without_form);
            std::string where = c.label;
            for (const auto& [s, v] : binding)
              where += fmt::format(" {}={}", s, v);
            where += fmt::format(", key {}, offset {}, {} blocks", key, offset, got.block_dim);
            for (size_t o = 0; o < want.size(); ++o) {
              EXPECT_TRUE(tensors_close(got.outputs[o], want[o], c.tol, c.tol))
                  << where << ", output " << o;
              EXPECT_TRUE(agree(got.outputs[o], base.outputs[o]))
                  << where << ", output " << o << ": the forms differ";
            }
          }
        }
      }
    }
  }
}

}  // namespace autofuse::codegen_test
