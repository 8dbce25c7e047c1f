// Row-invariant narrow loads (KernelEmitter::row_invariant_): a bf16/f16
// operand that varies only along the vector axis of a constant length
// (LayerNorm's gamma and beta) is converted to an f32 array once per kernel
// call, and every row and pass reads that array.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "autofuse/graph/text.h"
#include "codegen_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace invariant_loads_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

/// examples/<name>.af with its hidden size D replaced by `d` (a constant,
/// or a symbol when empty).
Graph layernorm(const std::string& name, const std::string& d) {
  std::ifstream in(std::string(AUTOFUSE_SOURCE_DIR) + "/examples/" + name + ".af");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  if (!d.empty()) {
    for (size_t at = s.find("D]"); at != std::string::npos; at = s.find("D]", at + 1))
      s.replace(at, 1, d);
    s.replace(s.find(name + "("), name.size(), fmt::format("{}_{}", name, d));
  }
  return parse_graph(s);
}

TEST(InvariantLoads, LayerNormConvertsGammaAndBetaOnce) {
  std::vector<GraphCase> cases;
  for (const char* name : {"layernorm_bf16", "layernorm_f16"})
    for (const char* d : {"768", "40", ""})
      cases.push_back({fmt::format("{} D={}", name, d), layernorm(name, d),
                       d[0] != '\0' ? std::vector<sym::Binding>{{{"N", 1}}, {{"N", 3}}, {{"N", 70}}}
                                    : std::vector<sym::Binding>{{{"N", 5}, {"D", 40}}},
                       3e-2, 3e-2});
  const std::string code = check_cases(cases);

  const std::string k = kernel_text(code, "layernorm_bf16_768");
  // gamma (%2 -> load) and beta: one f32 copy each, read by the loops.
  EXPECT_EQ(count(k, "__attribute__((aligned(64)));  // gamma"), 1u) << k.substr(0, 3000);
  EXPECT_EQ(count(k, "__attribute__((aligned(64)));  // beta"), 1u);
  EXPECT_EQ(count(k, "for (int64_t k_ = 0; k_ < n1; ++k_) c"), 2u);
  EXPECT_EQ(count(k, "af_bf16_to_f32(p1["), 1u);  // only in gamma's copy
  EXPECT_EQ(count(k, "af_bf16_to_f32(p2["), 1u);
  // A symbolic hidden size keeps the loads in the loops.
  const std::string sym_d = kernel_text(code, "layernorm_bf16");
  EXPECT_THAT(sym_d, Not(HasSubstr("k_ = 0")));
  EXPECT_GT(count(sym_d, "af_bf16_to_f32(p1["), 1u);
}

}  // namespace invariant_loads_test_local
}  // namespace autofuse::codegen_test
