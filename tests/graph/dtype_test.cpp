// The dtype table (names, sizes, classes), every dtype through the text
// format, and cast's `saturate` attribute: printed only when false, parsed
// back, and valid only for float8 targets.
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/error.h"
#include "autofuse/graph/builder.h"
#include "autofuse/graph/text.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace dtype_test_local {

using ::testing::HasSubstr;

TEST(DTypeTest, NamesRoundTripAndAreUnique) {
  std::set<std::string_view> names;
  for (DType t : kAllDTypes) {
    EXPECT_TRUE(names.insert(dtype_name(t)).second) << dtype_name(t);
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
  }
  EXPECT_EQ(dtype_from_name("f8"), std::nullopt);
  EXPECT_EQ(dtype_from_name("int4"), std::nullopt);
}

TEST(DTypeTest, SizesAndClassesOfTheNarrowTypes) {
  struct Want {
    DType t;
    const char* name;
    int bytes;
    bool is_float, is_signed, is_unsigned;
  };
  const Want wants[] = {
      {DType::i4, "i4", 1, false, true, false},
      {DType::u4, "u4", 1, false, false, true},  // unpacked: one per byte
      {DType::i16, "i16", 2, false, true, false},
      {DType::u16, "u16", 2, false, false, true},
      {DType::u32, "u32", 4, false, false, true},
      {DType::u64, "u64", 8, false, false, true},
      {DType::f8e4m3fn, "f8e4m3fn", 1, true, false, false},
      {DType::f8e4m3fnuz, "f8e4m3fnuz", 1, true, false, false},
      {DType::f8e5m2, "f8e5m2", 1, true, false, false},
      {DType::f8e5m2fnuz, "f8e5m2fnuz", 1, true, false, false},
  };
  for (const Want& w : wants) {
    EXPECT_EQ(dtype_name(w.t), w.name);
    EXPECT_EQ(dtype_size(w.t), w.bytes) << w.name;
    EXPECT_EQ(is_float(w.t), w.is_float) << w.name;
    EXPECT_EQ(is_signed_integer(w.t), w.is_signed) << w.name;
    EXPECT_EQ(is_unsigned_integer(w.t), w.is_unsigned) << w.name;
    EXPECT_EQ(is_integer(w.t), w.is_signed || w.is_unsigned) << w.name;
    EXPECT_EQ(is_float8(w.t), std::string(w.name).starts_with("f8")) << w.name;
    EXPECT_EQ(is_int4(w.t), w.bytes == 1 && std::string(w.name).ends_with("4")) << w.name;
  }
  EXPECT_FALSE(is_unsigned_integer(DType::i8));
  EXPECT_TRUE(is_unsigned_integer(DType::u8));
}

TEST(DTypeTest, EveryDTypeParsesAndPrints) {
  for (DType t : kAllDTypes) {
    const std::string text = fmt::format(
        "graph g(x: {0}[N]) {{\n  y = cast(x, to=f32)\n  z = cast(y, to={0})\n  return z\n}}\n",
        dtype_name(t));
    const Graph g = parse_graph(text);
    EXPECT_EQ(g.value(g.outputs()[0]).type.dtype, t);
    const std::string printed = print_graph(g);
    EXPECT_EQ(print_graph(parse_graph(printed)), printed);
  }
}

Graph cast_graph(DType to, bool saturate) {
  GraphBuilder b("g");
  Tensor x = b.input("x", DType::f32, {sym::Expr(4)});
  return std::move(b).build({b.cast(x, CastAttrs{to, saturate}, "y")});
}

TEST(CastSaturateTest, PrintedOnlyWhenFalse) {
  const std::string sat = print_graph(cast_graph(DType::f8e4m3fn, true));
  EXPECT_THAT(sat, HasSubstr("cast(x, to=f8e4m3fn)"));
  EXPECT_THAT(sat, ::testing::Not(HasSubstr("saturate")));
  const std::string no_sat = print_graph(cast_graph(DType::f8e5m2, false));
  EXPECT_THAT(no_sat, HasSubstr("cast(x, to=f8e5m2, saturate=false)"));
  const Graph back = parse_graph(no_sat);
  EXPECT_EQ(std::get<CastAttrs>(back.nodes()[0].attrs), (CastAttrs{DType::f8e5m2, false}));
  EXPECT_EQ(print_graph(back), no_sat);
}

TEST(CastSaturateTest, ParsesBothSpellings) {
  const char* text =
      "graph g(x: f32[4]) {\n  y = cast(x, to=f8e4m3fnuz, saturate=true)\n"
      "  z = cast(x, to=f8e5m2fnuz, saturate=false)\n  return y, z\n}\n";
  const Graph g = parse_graph(text);
  EXPECT_TRUE(std::get<CastAttrs>(g.nodes()[0].attrs).saturate);
  EXPECT_FALSE(std::get<CastAttrs>(g.nodes()[1].attrs).saturate);
}

TEST(CastSaturateTest, OnlyForFloat8Targets) {
  for (DType to : kAllDTypes) {
    if (is_float8(to)) {
      EXPECT_NO_THROW(cast_graph(to, false)) << dtype_name(to);
    } else {
      try {
        cast_graph(to, false);
        ADD_FAILURE() << "saturate=false accepted for " << dtype_name(to);
      } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("saturate=false is for float8 targets only"));
      }
    }
  }
  EXPECT_THROW(parse_graph("graph g(x: f32[4]) {\n  y = cast(x, to=f8e4m3fn, saturate=1)\n"
                           "  return y\n}\n"),
               UserError);
}

TEST(ConstantRangeTest, NarrowIntegers) {
  const auto constant = [](DType t, double v) {
    GraphBuilder b("g");
    return std::move(b).build({b.scalar(v, t)});
  };
  EXPECT_NO_THROW(constant(DType::i4, -8));
  EXPECT_THROW(constant(DType::i4, 8), UserError);
  EXPECT_NO_THROW(constant(DType::u4, 15));
  EXPECT_THROW(constant(DType::u4, -1), UserError);
  EXPECT_THROW(constant(DType::i16, 32768), UserError);
  EXPECT_NO_THROW(constant(DType::u16, 65535));
  EXPECT_NO_THROW(constant(DType::u32, 4294967295.0));
  EXPECT_THROW(constant(DType::u32, 4294967296.0), UserError);
  EXPECT_NO_THROW(constant(DType::u64, 9007199254740992.0));
  EXPECT_THROW(constant(DType::u64, -1), UserError);
}

TEST(DTypeTest, IntegerLimits) {
  EXPECT_EQ(integer_limits(DType::i4), (std::pair<int64_t, int64_t>{-8, 7}));
  EXPECT_EQ(integer_limits(DType::u4), (std::pair<int64_t, int64_t>{0, 15}));
  EXPECT_EQ(integer_limits(DType::i8), (std::pair<int64_t, int64_t>{-128, 127}));
  EXPECT_EQ(integer_limits(DType::u16), (std::pair<int64_t, int64_t>{0, 65535}));
  EXPECT_EQ(integer_limits(DType::i32), (std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX}));
  EXPECT_EQ(integer_limits(DType::u32), (std::pair<int64_t, int64_t>{0, UINT32_MAX}));
  EXPECT_EQ(integer_limits(DType::i64), (std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX}));
  EXPECT_EQ(integer_limits(DType::u64), (std::pair<int64_t, int64_t>{0, INT64_MAX}));
  EXPECT_EQ(integer_limits(DType::boolean), (std::pair<int64_t, int64_t>{0, 1}));
  EXPECT_THROW(integer_limits(DType::f32), InternalError);
}

TEST(MatMulTest, Float8IsUnsupported) {
  GraphBuilder b("g");
  Tensor x = b.input("x", DType::f8e4m3fn, {sym::Expr(2), sym::Expr(2)});
  try {
    b.matmul(x, x);
    ADD_FAILURE() << "matmul of f8e4m3fn accepted";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("matmul: f8e4m3fn is not supported"));
  }
}

}  // namespace dtype_test_local
}  // namespace autofuse
