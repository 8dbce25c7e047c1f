#include "autofuse/graph/ops.h"

#include <set>

#include <gtest/gtest.h>

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace ops_test_local {

TEST(OpsTest, NamesRoundTripAndAreUnique) {
  std::set<std::string_view> names;
  const std::vector<OpKind> ops = all_ops();
  ASSERT_FALSE(ops.empty());
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpInfo& info = op_info(ops[i]);
    EXPECT_EQ(static_cast<size_t>(ops[i]), i) << "all_ops is in list order";
    EXPECT_EQ(info.kind, ops[i]);
    EXPECT_EQ(op_name(ops[i]), info.name);
    EXPECT_EQ(op_from_name(info.name), ops[i]) << info.name;
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name " << info.name;
  }
  EXPECT_EQ(ops.front(), OpKind::Neg);
  EXPECT_EQ(ops.back(), OpKind::Conv);
  EXPECT_EQ(op_from_name("nope"), std::nullopt);
  EXPECT_EQ(op_from_name(""), std::nullopt);
  EXPECT_EQ(op_from_name("Add"), std::nullopt) << "names are case-sensitive";
}

TEST(OpsTest, TableColumns) {
  const OpInfo& add = op_info(OpKind::Add);
  EXPECT_EQ(add.name, "add");
  EXPECT_EQ(add.op_class, OpClass::Binary);
  EXPECT_EQ(add.dtype_rule, DTypeRule::NumericSame);
  EXPECT_EQ(add.attr_kind, AttrKind::None);
  EXPECT_EQ(op_info(OpKind::IsNan).dtype_rule, DTypeRule::FloatToBool);
  EXPECT_EQ(op_info(OpKind::Lt).dtype_rule, DTypeRule::AnyToBool);
  EXPECT_EQ(op_info(OpKind::Slice).attr_kind, AttrKind::Slice);
  EXPECT_EQ(op_info(OpKind::Gather).attr_kind, AttrKind::Axis);
  EXPECT_EQ(op_info(OpKind::ReduceProd).op_class, OpClass::Reduce);
  EXPECT_EQ(op_name(OpKind::BroadcastTo), "broadcast_to");
}

TEST(OpsTest, ArityFollowsOpClass) {
  struct Case {
    OpKind op;
    int min, max;
  };
  const Case cases[] = {
      {OpKind::Exp, 1, 1},         {OpKind::Not, 1, 1},       {OpKind::Add, 2, 2},
      {OpKind::Eq, 2, 2},          {OpKind::Where, 3, 3},     {OpKind::Cast, 1, 1},
      {OpKind::BroadcastTo, 1, 1}, {OpKind::ReduceSum, 1, 1}, {OpKind::Transpose, 1, 1},
      {OpKind::Reshape, 1, 1},     {OpKind::Slice, 1, 1},     {OpKind::Split, 1, 1},
      {OpKind::Concat, 1, -1},     {OpKind::Gather, 2, 2},    {OpKind::Constant, 0, 0},
      {OpKind::Iota, 0, 0},        {OpKind::MatMul, 2, 2},    {OpKind::Conv, 2, 3},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(op_info(c.op).min_inputs, c.min) << op_name(c.op);
    EXPECT_EQ(op_info(c.op).max_inputs, c.max) << op_name(c.op);
  }
  // Every op of a class has that class's arity.
  for (OpKind op : all_ops()) {
    const OpInfo& info = op_info(op);
    if (info.op_class == OpClass::Unary) {
      EXPECT_EQ(info.max_inputs, 1) << info.name;
    }
    if (info.op_class == OpClass::Binary) {
      EXPECT_EQ(info.min_inputs, 2) << info.name;
    }
  }
}

TEST(OpsTest, AttrKindOf) {
  EXPECT_EQ(attr_kind_of(NoAttrs{}), AttrKind::None);
  EXPECT_EQ(attr_kind_of(CastAttrs{DType::f16}), AttrKind::Cast);
  EXPECT_EQ(attr_kind_of(ShapeAttrs{}), AttrKind::Shape);
  EXPECT_EQ(attr_kind_of(ReduceAttrs{}), AttrKind::Reduce);
  EXPECT_EQ(attr_kind_of(TransposeAttrs{}), AttrKind::Transpose);
  EXPECT_EQ(attr_kind_of(SliceAttrs{}), AttrKind::Slice);
  EXPECT_EQ(attr_kind_of(AxisAttrs{}), AttrKind::Axis);
  EXPECT_EQ(attr_kind_of(SplitAttrs{}), AttrKind::Split);
  EXPECT_EQ(attr_kind_of(ConstantAttrs{}), AttrKind::Constant);
  EXPECT_EQ(attr_kind_of(IotaAttrs{}), AttrKind::Iota);
}

}  // namespace ops_test_local
}  // namespace autofuse
