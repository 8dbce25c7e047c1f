// FusionConfig::from_flags / from_env.
#include <cstdlib>

#include "fuse_test_util.h"

namespace autofuse::fuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace config_test_local {

using ::testing::HasSubstr;

std::string error_of(std::string_view flags) {
  try {
    FusionConfig::from_flags(flags);
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UserError for '" << flags << "'";
  return "";
}

TEST(FusionConfig, DefaultsFromEmptyFlags) {
  for (std::string_view flags : {"", " ", ";;", " ; \t"}) {
    FusionConfig c = FusionConfig::from_flags(flags);
    EXPECT_TRUE(c.enabled);
    EXPECT_EQ(c.max_fusion_size, 256);
    EXPECT_TRUE(c.fuse_reductions);
    EXPECT_TRUE(c.fuse_broadcasts);
    EXPECT_FALSE(c.log_refusals);
  }
}

TEST(FusionConfig, ParsesEveryFlag) {
  FusionConfig c =
      FusionConfig::from_flags("--max_fusion_size=12;--disable=reduce,broadcast;--log_refusals");
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.max_fusion_size, 12);
  EXPECT_FALSE(c.fuse_reductions);
  EXPECT_FALSE(c.fuse_broadcasts);
  EXPECT_TRUE(c.log_refusals);

  c = FusionConfig::from_flags("  --disable=all   --log_refusals=false\n--max_fusion_size=1 ");
  EXPECT_FALSE(c.enabled);
  EXPECT_TRUE(c.fuse_reductions);
  EXPECT_FALSE(c.log_refusals);
  EXPECT_EQ(c.max_fusion_size, 1);

  c = FusionConfig::from_flags("--disable=broadcast;--disable=reduce");
  EXPECT_FALSE(c.fuse_reductions);
  EXPECT_FALSE(c.fuse_broadcasts);
}

TEST(FusionConfig, ErrorsNameTheFlag) {
  EXPECT_THAT(error_of("--max_fusion_sise=3"), HasSubstr("unknown flag '--max_fusion_sise=3'"));
  EXPECT_THAT(error_of("--log_refusals;verbose"), HasSubstr("unknown flag 'verbose'"));
  EXPECT_THAT(error_of("--max_fusion_size=0"),
              HasSubstr("bad value '0' for --max_fusion_size (expected an integer >= 1)"));
  EXPECT_THAT(error_of("--max_fusion_size=12x"), HasSubstr("bad value '12x'"));
  EXPECT_THAT(error_of("--max_fusion_size=99999999999999"), HasSubstr("--max_fusion_size"));
  EXPECT_THAT(error_of("--max_fusion_size"), HasSubstr("--max_fusion_size"));
  EXPECT_THAT(error_of("--disable=reduce,loops"), HasSubstr("bad value 'loops' for --disable"));
  EXPECT_THAT(error_of("--disable="), HasSubstr("--disable"));
  EXPECT_THAT(error_of("--log_refusals=maybe"), HasSubstr("--log_refusals"));
}

TEST(FusionConfig, FromEnv) {
  ASSERT_EQ(setenv("AUTOFUSE_FLAGS", "--max_fusion_size=5;--log_refusals", 1), 0);
  FusionConfig c = FusionConfig::from_env();
  EXPECT_EQ(c.max_fusion_size, 5);
  EXPECT_TRUE(c.log_refusals);

  ASSERT_EQ(setenv("AUTOFUSE_FLAGS", "--nope", 1), 0);
  try {
    FusionConfig::from_env();
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("AUTOFUSE_FLAGS: unknown flag '--nope'"));
  }

  ASSERT_EQ(unsetenv("AUTOFUSE_FLAGS"), 0);
  EXPECT_EQ(FusionConfig::from_env().max_fusion_size, 256);
}

}  // namespace config_test_local
}  // namespace autofuse::fuse
