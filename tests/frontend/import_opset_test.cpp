// Which opsets the importer reads (opset 22, older opsets through the
// reviewed version table) and which of its errors are typed "unsupported"
// (UnsupportedError) rather than "wrong input".
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/onnx/import_state.h"
#include "frontend/onnx/opset_versions.h"
#include "onnx_test_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_opset_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

enum class Outcome { imported, user_error, unsupported };

struct Result {
  Outcome outcome = Outcome::imported;
  std::string message;
};

Result try_import(const ModelBuilder& m) {
  try {
    m.import();
  } catch (const UnsupportedError& e) {
    return {Outcome::unsupported, e.what()};
  } catch (const UserError& e) {
    return {Outcome::user_error, e.what()};
  }
  return {};
}

TEST(ImportOpset22, OpsWhoseVersion22OnlyAddedTypesImport) {
  ModelBuilder m(22);
  m.input("x", kF32, {4});
  const char* ops[] = {"Cos",       "Sin",  "Elu",   "Selu",    "HardSigmoid",
                       "HardSwish", "Mish", "Round", "Softplus"};
  for (const char* op : ops)
    m.node(op, {"x"}, {std::string("y_") + op}).output(std::string("y_") + op);
  m.node("Dropout", {"x"}, {"d", "mask"}).output("d").output("mask");
  const OnnxModel model = m.import();
  EXPECT_EQ(model.opset, 22);
  const std::vector<HostTensor> out = run(model, {host(DType::f32, {4}, {-1, -0.5, 0.5, 2.5})});
  EXPECT_NEAR(out[0].get_f64(0), std::cos(-1.0), 1e-6);             // Cos
  EXPECT_NEAR(out[2].get_f64(0), std::exp(-1.0) - 1, 1e-6);         // Elu
  EXPECT_THAT(values_of(out[7]), ElementsAre(-1, -0, 0, 2));        // Round: half to even
  EXPECT_THAT(values_of(out[9]), ElementsAre(-1, -0.5, 0.5, 2.5));  // Dropout
}

TEST(ImportOpset22, TheVersionTableNamesSemanticChanges) {
  using onnx_import::unreviewed_opset22_version;
  EXPECT_EQ(unreviewed_opset22_version("Cos"), std::nullopt);
  EXPECT_EQ(unreviewed_opset22_version("Dropout"), std::nullopt);
  EXPECT_EQ(unreviewed_opset22_version("Relu"), std::nullopt);  // no version 22
  // The pools' version 22 changed ceil_mode; convert_pool.cpp implements it.
  EXPECT_EQ(unreviewed_opset22_version("MaxPool"), std::nullopt);
  EXPECT_EQ(unreviewed_opset22_version("AveragePool"), std::nullopt);
}

TEST(ImportOldOpsets, TheVersionTableListsOnlyReviewedVersions) {
  using onnx_import::old_version_matches;
  EXPECT_TRUE(old_version_matches("Xor", 7, 7));   // the same version
  EXPECT_TRUE(old_version_matches("Div", 7, 13));  // only bfloat16 added
  EXPECT_TRUE(old_version_matches("Dropout", 10, 13));
  EXPECT_FALSE(old_version_matches("Dropout", 7, 13));   // its mask has the data's type
  EXPECT_FALSE(old_version_matches("Softmax", 11, 13));  // coerced to 2-D
  EXPECT_FALSE(old_version_matches("Div", 6, 13));       // broadcast attribute
}

TEST(ImportOldOpsets, CeluFunctionBodyOfOpset12) {
  // test_celu_expanded: Constant-12, Div-7, Elu-6, Mul-7.
  ModelBuilder m(12);
  m.input("x", kF32, {3})
      .constant(tensor("alpha", kF32, {}, {2}))
      .node("Div", {"x", "alpha"}, {"scaled"})
      .node("Elu", {"scaled"}, {"elu"}, {attr("alpha", 1.0f)})
      .node("Mul", {"alpha", "elu"}, {"y"})
      .output("y");
  const OnnxModel model = m.import();
  EXPECT_EQ(model.opset, 12);
  const std::vector<HostTensor> out = run(model, {host(DType::f32, {3}, {-2, 0, 3})});
  EXPECT_NEAR(out[0].get_f64(0), 2 * (std::exp(-1.0) - 1), 1e-6);
  EXPECT_EQ(out[0].get_f64(1), 0);
  EXPECT_EQ(out[0].get_f64(2), 3);
}

TEST(ImportOldOpsets, Dropout10IsInferenceAndDropout7IsRefused) {
  // test_dropout_random_old: Dropout-10 with a ratio attribute; an inference
  // engine copies the input.
  ModelBuilder m(11);
  m.input("x", kF32, {3})
      .node("Dropout", {"x"}, {"y", "mask"}, {attr("ratio", 0.2f)})
      .output("y")
      .output("mask");
  const std::vector<HostTensor> out = run(m.import(), {host(DType::f32, {3}, {1, -2, 3})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(1, -2, 3));
  ASSERT_EQ(out[1].dtype(), DType::boolean);
  EXPECT_THAT(values_of(out[1]), ElementsAre(1, 1, 1));

  ModelBuilder old(7);
  old.input("x", kF32, {3}).node("Dropout", {"x"}, {"y"}, {}, "drop").output("y");
  const Result r = try_import(old);
  EXPECT_EQ(r.outcome, Outcome::unsupported);
  EXPECT_THAT(r.message, HasSubstr("Dropout-7 (nodes: drop)"));
}

TEST(ImportUnsupported, ModelLevelDecisionsAreTyped) {
  ModelBuilder unknown;
  unknown.input("x", kF32, {2}).node("StringNormalizer", {"x"}, {"y"}).output("y");
  EXPECT_EQ(try_import(unknown).outcome, Outcome::unsupported);

  ModelBuilder sequence;
  sequence.input("x", kF32, {2}).node("Relu", {"x"}, {"y"}).output("y");
  sequence.graph()->mutable_input(0)->mutable_type()->mutable_sequence_type();
  const Result seq = try_import(sequence);
  EXPECT_EQ(seq.outcome, Outcome::unsupported);
  EXPECT_THAT(seq.message, HasSubstr("input 'x' is not a tensor"));

  ModelBuilder string_input;
  string_input.input("s", onnx::TensorProto::STRING, {2})
      .node("Identity", {"s"}, {"y"})
      .output("y");
  EXPECT_EQ(try_import(string_input).outcome, Outcome::unsupported);

  ModelBuilder no_shape;
  no_shape.input("x", kF32, {2}).node("Relu", {"x"}, {"y"}).output("y");
  no_shape.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  EXPECT_EQ(try_import(no_shape).outcome, Outcome::unsupported);

  ModelBuilder old_ir;
  old_ir.input("x", kF32, {2}).node("Relu", {"x"}, {"y"}).output("y");
  old_ir.proto().set_ir_version(2);
  EXPECT_EQ(try_import(old_ir).outcome, Outcome::unsupported);

  ModelBuilder sparse;
  sparse.input("x", kF32, {2}).node("Relu", {"x"}, {"y"}).output("y");
  sparse.graph()->add_sparse_initializer()->mutable_values()->set_name("s");
  EXPECT_EQ(try_import(sparse).outcome, Outcome::unsupported);
}

TEST(ImportUnsupported, ConverterDecisionsStayTypedThroughTheNodeLocation) {
  ModelBuilder strings(17);
  onnx::AttributeProto s;
  s.set_name("value_string");
  s.set_type(onnx::AttributeProto::STRING);
  s.set_s("hello");
  strings.node("Constant", {}, {"c"}, {s}, "const_s").output("c");
  const Result r = try_import(strings);
  EXPECT_EQ(r.outcome, Outcome::unsupported);
  EXPECT_THAT(r.message, HasSubstr("node 'const_s' (Constant)"));

  // Wrong input stays a plain UserError, whatever its text says.
  ModelBuilder wrong;
  wrong.input("a", kF32, {2, 3})
      .input("b", kF32, {4})
      .node("Add", {"a", "b"}, {"not_supported"})
      .output("not_supported");
  const Result w = try_import(wrong);
  EXPECT_EQ(w.outcome, Outcome::user_error);
  EXPECT_THAT(w.message, HasSubstr("cannot broadcast"));
  ModelBuilder bad_attr;
  bad_attr.node("Constant", {}, {"c"}, {attr("colour", 1)}).output("c");
  EXPECT_EQ(try_import(bad_attr).outcome, Outcome::user_error);
}

TEST(ImportUnsupported, RethrowKeepsTheKind) {
  SourceLocation here;
  here.node = "n";
  EXPECT_THROW(onnx_import::rethrow_at(UnsupportedError("a"), here, "b"), UnsupportedError);
  try {
    onnx_import::rethrow_at(UserError("a"), here, "b");
  } catch (const UnsupportedError&) {
    FAIL() << "a UserError became an UnsupportedError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "b");
    EXPECT_EQ(e.where().node, "n");
  }
}

}  // namespace import_opset_test_local
}  // namespace autofuse::frontend::testing
