// Runs every hand-computed case through a one-node graph, and checks that
// the table covers every op (a new op without a reference case fails here)
// and every dtype each elementwise op accepts.
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "autofuse/error.h"
#include "ref/op_cases.h"

namespace autofuse::testing {
namespace {}  // namespace

// Names the case in gtest output instead of dumping its bytes.
void PrintTo(const OpCase& c, std::ostream* os) {
  *os << c.label;
}

// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace op_table_test_local {

class OpTableTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpTableTest, MatchesHandComputedValues) {
  const OpCase& c = GetParam();
  std::vector<HostTensor> got = run_single_op(c.op, c.inputs, c.attrs);
  ASSERT_EQ(got.size(), c.expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(same_tensor(got[i], c.expected[i], c.ulps)) << "output " << i;
}

INSTANTIATE_TEST_SUITE_P(Ref, OpTableTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return fmt::format("{:03}_{}", info.index, info.param.label);
                         });

TEST(OpTableCoverageTest, EveryOpHasACase) {
  std::set<OpKind> covered;
  for (const OpCase& c : all_cases())
    covered.insert(c.op);
  for (OpKind op : all_ops())
    EXPECT_TRUE(covered.contains(op)) << "no reference case for op " << op_name(op);
}

TEST(OpTableCoverageTest, EveryElementwiseOpHasEveryDTypeItAccepts) {
  std::set<std::pair<OpKind, DType>> covered;
  for (const OpCase& c : all_cases())
    if (!c.inputs.empty())  // where's value dtype is that of its second input
      covered.insert({c.op, c.inputs[c.op == OpKind::Where ? 1 : 0].dtype()});
  for (OpKind op : all_ops()) {
    const OpInfo& info = op_info(op);
    for (DType dt : kAllDTypes) {
      bool accepts = false;
      switch (info.dtype_rule) {
        case DTypeRule::FloatSame:
        case DTypeRule::FloatToBool:
          accepts = is_float(dt);
          break;
        case DTypeRule::NumericSame:
          accepts = is_numeric(dt);
          break;
        case DTypeRule::BoolOrIntSame:
          accepts = is_bool(dt) || is_integer(dt);
          break;
        case DTypeRule::AnyToBool:
          accepts = true;
          break;
        case DTypeRule::Special:
          break;
      }
      if (op == OpKind::Where) accepts = true;  // any value dtype
      if ((op == OpKind::MatMul || op == OpKind::Conv) && is_float8(dt))
        accepts = false;  // inference refuses it
      if (accepts) {
        EXPECT_TRUE(covered.contains({op, dt}))
            << "no reference case for " << op_name(op) << " on " << dtype_name(dt);
      }
    }
  }
}

TEST(OpTableCoverageTest, LabelsAreUnique) {
  std::set<std::string> seen;
  for (const OpCase& c : all_cases())
    EXPECT_TRUE(seen.insert(c.label).second) << c.label;
}

TEST(OpTableCoverageTest, CastCoversEveryDTypePair) {
  // Not every pair has a hand case; each dtype appears as a source and a target.
  std::set<DType> from, to;
  for (const OpCase& c : all_cases()) {
    if (c.op != OpKind::Cast) continue;
    from.insert(c.inputs.front().dtype());
    to.insert(c.expected.front().dtype());
  }
  for (DType dt : kAllDTypes) {
    EXPECT_TRUE(from.contains(dt)) << "no cast from " << dtype_name(dt);
    EXPECT_TRUE(to.contains(dt)) << "no cast to " << dtype_name(dt);
  }
}

}  // namespace op_table_test_local
}  // namespace autofuse::testing
