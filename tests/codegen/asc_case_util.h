// Kernels from hand-written AscGraph text (for IR the lowering does not
// produce yet, e.g. Gather nodes and Outputs written in pieces), checked
// against the reference interpreter on a Graph with the same semantics.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen_test_util.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {

struct AscCase {
  std::string label;
  Graph graph;      ///< same semantics: random inputs and the reference
  std::string asc;  ///< AscGraph text; "@IO" stands for `inputs(..) outputs(..)` of graph
  std::vector<sym::Binding> bindings;
  double rtol = 1e-6;
  double atol = 1e-6;
};

/// The AscGraph of `c` (its "@IO" replaced by the graph's value ids).
ascir::AscGraph parse_case(const AscCase& c);

struct CompiledCases {
  std::vector<schedule::ScheduledKernel> kernels;
  codegen::ModuleSource module;
  std::shared_ptr<jit::Module> so;
};
/// Schedules every case and compiles them as one module.
CompiledCases compile_cases(const std::vector<AscCase>& cases);

/// The af_status of every way check_asc_cases runs case `i` (machines,
/// tiling keys, split launches), on `inputs`.
std::vector<af_status> run_statuses(const CompiledCases& compiled, size_t i, const AscCase& c,
                                    const std::vector<HostTensor>& inputs,
                                    const sym::Binding& binding);

/// Sets element `at` (and the first and last) of input `input` to a bad
/// index (`bad`: 0 means n, 1 means -n - 1, else the value itself; n is the
/// binding of `bound`) and expects every run of case `i` to report exactly
/// that index, from one of the gathers `which`, with bound n.
void expect_reported(const AscCase& c, const CompiledCases& compiled, size_t i, size_t input,
                     int64_t at, int64_t bad, const std::vector<int>& which,
                     const std::string& bound);

/// Cases `i` and `j` of `cases` (the same Graph, different AscGraphs) give
/// outputs equal bit for bit on random inputs, for every binding of case i
/// and every way check_asc_cases runs them.
void expect_same_bits(const std::vector<AscCase>& cases, const CompiledCases& compiled, size_t i,
                      size_t j);

/// Compiles the cases and runs each for every binding on random inputs:
/// run_kernel on one core and on uneven block splits, with tiling key 0 and
/// with streaming stores (key 1, unaligned outputs); Reduction kernels also
/// with run_phased on machines that split. Outputs must match the
/// reference and every af_status must be clear. Returns the module source.
std::string check_asc_cases(const std::vector<AscCase>& cases, uint64_t seed = 1);

/// A symbol, for case bindings and sizes.
inline sym::Expr S(const char* name) {
  return sym::Expr::symbol(name);
}

/// `text` with every `from` replaced by `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to);

/// `text` with the table dtype DT and index dtype IT filled in (gather cases).
std::string typed(const std::string& text, DType table, DType index);

/// Comparison tolerance of a kernel computed in f32 and stored in `t`.
inline double tolerance(DType t) {
  return t == DType::f32 ? 1e-5 : t == DType::f16 ? 4e-3 : 3e-2;
}

}  // namespace autofuse::codegen_test
