// The importer core: names, symbols, initializers, constants, declared
// types, and the errors for malformed models.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_core_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// The UserError message of importing `m` ("" when it imports).
std::string import_error(const ModelBuilder& m) {
  try {
    m.import();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(ImportCore, AddWithInitializerRunsAndKeepsNames) {
  ModelBuilder m;
  m.input("x.in", kF32, {2, 3})
      .initializer(tensor("bias", kF32, {3}, {10, 20, 30}))
      .node("Add", {"x.in", "bias"}, {"y:out"})
      .output("y:out", kF32, {2, 3});
  OnnxModel model = m.import();
  EXPECT_EQ(model.opset, 17);
  EXPECT_THAT(model.input_names, ElementsAre("x.in"));
  EXPECT_THAT(model.output_names, ElementsAre("y:out"));
  // Graph names are sanitized identifiers.
  EXPECT_EQ(model.graph->value(model.graph->inputs()[0]).name, "x_in");
  EXPECT_EQ(model.graph->name(), "test");
  auto out = run(model, {iota_host(DType::f32, {2, 3})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(10, 21, 32, 13, 24, 35));
}

TEST(ImportCore, InputThatIsAnInitializerIsAConstant) {
  ModelBuilder m;
  m.input("x", kF32, {2})
      .input("w", kF32, {2})
      .initializer(tensor("w", kF32, {2}, {3, 4}))
      .node("Mul", {"x", "w"}, {"y"})
      .output("y");
  OnnxModel model = m.import();
  EXPECT_THAT(model.input_names, ElementsAre("x"));
  EXPECT_EQ(model.graph->inputs().size(), 1u);
  EXPECT_THAT(values_of(run(model, {host(DType::f32, {2}, {2, 5})})[0]), ElementsAre(6, 20));
}

TEST(ImportCore, DimParamsBecomeSharedSymbolsAndUnknownDimsFreshOnes) {
  ModelBuilder m;
  m.input("a", kF32, {"batch size", "?"})
      .input("b", kF32, {"batch size", 4})
      .node("ReduceSum", {"a"}, {"ra"}, {attr("keepdims", 0)})
      .output("ra")
      .node("Identity", {"b"}, {"ib"})
      .output("ib");
  OnnxModel model = m.import();
  const Graph& g = *model.graph;
  const Shape& sa = g.value(g.inputs()[0]).type.shape;
  const Shape& sb = g.value(g.inputs()[1]).type.shape;
  ASSERT_EQ(sa.size(), 2u);
  EXPECT_EQ(sa[0], sym::Expr::symbol("batch_size"));
  EXPECT_EQ(sb[0], sa[0]);
  EXPECT_TRUE(sa[1].is_symbol());
  EXPECT_NE(sa[1], sa[0]);
  EXPECT_EQ(sb[1], sym::Expr(4));
  auto out = run(model, {iota_host(DType::f32, {2, 5}), iota_host(DType::f32, {2, 4})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(45));
}

TEST(ImportCore, SanitizedNamesStayUnique) {
  // "a.b" and "a_b" sanitize alike; "v1" looks like a builder name; dim
  // params "n-1" and "n_1" are different symbols.
  ModelBuilder m;
  m.input("a.b", kF32, {"n-1"})
      .input("a_b", kF32, {"n_1"})
      .initializer(ints("axes", {0}))
      .node("ReduceSum", {"a.b", "axes"}, {"v1"})
      .node("ReduceSum", {"a_b", "axes"}, {"v0"})
      .node("Add", {"v1", "v0"}, {"3"})
      .output("3");
  OnnxModel model = m.import();
  const Graph& g = *model.graph;
  EXPECT_EQ(g.value(g.inputs()[0]).name, "a_b");
  EXPECT_EQ(g.value(g.inputs()[1]).name, "a_b_2");
  EXPECT_THAT(g.symbols(), ElementsAre("n_1", "n_1_2"));
  auto out = run(model, {iota_host(DType::f32, {3}), iota_host(DType::f32, {2})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(4));
}

TEST(ImportCore, ConstantNodesAndOutputsListedTwice) {
  ModelBuilder m;
  m.input("x", kF32, {2})
      .constant(tensor("c", kF32, {2}, {1.5, -1}))
      .node("Add", {"x", "c"}, {"y"})
      .node("Identity", {"y"}, {"z"})
      .node("Constant", {}, {"k"}, {attr("value_ints", std::vector<int64_t>{7, 8})})
      .output("y")
      .output("z")
      .output("k");
  OnnxModel model = m.import();
  EXPECT_THAT(model.output_names, ElementsAre("y", "z", "k"));
  auto out = run(model, {host(DType::f32, {2}, {1, 2})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(values_of(out[0]), ElementsAre(2.5, 1));
  EXPECT_THAT(values_of(out[1]), ElementsAre(2.5, 1));
  EXPECT_EQ(out[2].dtype(), DType::i64);
  EXPECT_THAT(values_of(out[2]), ElementsAre(7, 8));
}

TEST(ImportCore, SupportedOpsAreSortedAndIncludeTheCore) {
  const std::vector<std::string> ops = supported_onnx_ops();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  for (const char* op : {"Add", "Reshape", "Shape", "ReduceSum", "Slice", "Where", "Pad"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "StringNormalizer"), ops.end());
}

// ---- Errors -------------------------------------------------------------------

TEST(ImportErrors, MalformedBytes) {
  try {
    import_onnx_bytes("\x0a\xff\xff\xff garbage", "bad.onnx");
    FAIL() << "imported garbage";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a valid ONNX model: bad.onnx"));
  }
  EXPECT_THROW(import_onnx_bytes("", "empty.onnx"), UserError);
}

TEST(ImportErrors, TruncatedModelAtEveryLength) {
  ModelBuilder m;
  m.input("x", kF32, {2, 3})
      .initializer(tensor("w", kF32, {3}, {1, 2, 3}))
      .node("Mul", {"x", "w"}, {"y"})
      .output("y");
  const std::string bytes = m.bytes();
  // Every strict prefix is an error (never a crash or a partial model).
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      import_onnx_bytes(std::string_view(bytes).substr(0, n), "cut.onnx");
      ADD_FAILURE() << "a prefix of " << n << " of " << bytes.size() << " bytes imported";
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr("cut.onnx")) << n;
    }
  }
  EXPECT_NO_THROW(import_onnx_bytes(bytes, "whole.onnx"));
}

TEST(ImportErrors, MissingFile) {
  EXPECT_THROW(import_onnx_file("/nonexistent/model.onnx"), UserError);
}

TEST(ImportErrors, InitializerDisagreesWithDeclaredInputShape) {
  ModelBuilder m;
  m.input("x", kF32, {3})
      .input("w", kF32, {3})
      .initializer(tensor("w", kF32, {2}, {1, 2}))
      .node("Add", {"x", "w"}, {"y"})
      .output("y");
  EXPECT_THAT(import_error(m),
              HasSubstr("input 'w' is declared f32[3] but its initializer is f32[2]"));
}

TEST(ImportErrors, DeclaredOutputDisagreesWithInference) {
  ModelBuilder m;
  m.input("x", kF32, {"N", 3}).node("Relu", {"x"}, {"y"}).output("y", kF32, {"N", 4});
  EXPECT_THAT(import_error(m), HasSubstr("graph output 'y' is declared f32[N, 4] but computes to "
                                         "f32[N, 3]"));
  ModelBuilder dtype;
  dtype.input("x", kF32, {3}).node("Relu", {"x"}, {"y"}).output("y", kI64, {3});
  EXPECT_THAT(import_error(dtype), HasSubstr("declared i64[3]"));
  ModelBuilder info;
  info.input("x", kF32, {3}).node("Relu", {"x"}, {"y"}).node("Neg", {"y"}, {"z"}).output("z");
  *info.graph()->add_value_info() = value_info("y", kF32, {5});
  EXPECT_THAT(import_error(info), HasSubstr("value 'y' is declared f32[5] but computes to f32[3]"));
}

TEST(ImportErrors, UnsupportedDtypes) {
  ModelBuilder m;
  m.input("s", onnx::TensorProto::STRING, {2}).node("Identity", {"s"}, {"y"}).output("y");
  EXPECT_THAT(import_error(m), HasSubstr("input 's' has unsupported ONNX dtype STRING"));
  EXPECT_THROW(m.import(), UnsupportedError);
  ModelBuilder init;
  onnx::TensorProto complex;
  complex.set_name("c");
  complex.set_data_type(onnx::TensorProto::COMPLEX64);
  complex.add_dims(1);
  complex.add_float_data(1);
  complex.add_float_data(2);
  init.input("x", kF32, {1}).initializer(complex).node("Add", {"x", "c"}, {"y"}).output("y");
  EXPECT_THAT(import_error(init), HasSubstr("initializer 'c': tensor data type COMPLEX64 is not "
                                            "supported"));
  // The reader's UnsupportedError keeps its kind through the importer.
  EXPECT_THROW(init.import(), UnsupportedError);
  ModelBuilder cast;
  cast.input("x", kF32, {2}).node("Cast", {"x"}, {"y"}, {attr("to", 14)}, "c1").output("y");
  EXPECT_THAT(import_error(cast), HasSubstr("node 'c1' (Cast): attribute 'to': "));
  EXPECT_THAT(import_error(cast), HasSubstr("COMPLEX64"));
  EXPECT_THROW(cast.import(), UnsupportedError);
}

TEST(ImportErrors, UnsupportedOpsAreAllListed) {
  ModelBuilder m;
  m.input("x", kF32, {4})
      .node("TfIdfVectorizer", {"x"}, {"a"}, {}, "tfidf")
      .node("NonMaxSuppression", {"x"}, {"b"}, {}, "nms_1")
      .node("TfIdfVectorizer", {"x"}, {"c"}, {}, "tfidf_2")
      .node("Relu", {"x"}, {"d"})
      .node("StringNormalizer", {"x"}, {"e"})
      .output("d");
  const std::string error = import_error(m);
  EXPECT_THAT(error, HasSubstr("unsupported ONNX ops: NonMaxSuppression (nodes: nms_1), "
                               "StringNormalizer (nodes: #4), TfIdfVectorizer (nodes: tfidf, "
                               "tfidf_2)"));
  EXPECT_THROW(m.import(), UnsupportedError);
}

TEST(ImportErrors, OtherDomainsOnlyWhenUsed) {
  ModelBuilder unused;
  unused.input("x", kF32, {2}).node("Relu", {"x"}, {"y"}).output("y");
  auto* ms = unused.proto().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  EXPECT_NO_THROW(unused.import());
  unused.node("FusedGelu", {"y"}, {"z"}, {}, "fg").output("z");
  unused.graph()->mutable_node(1)->set_domain("com.microsoft");
  EXPECT_THAT(import_error(unused), HasSubstr("com.microsoft.FusedGelu (nodes: fg)"));
}

TEST(ImportCore, OlderOpsetWithUnchangedOpsImports) {
  // Xor and Not are the same ops at opset 7 as at 13.
  ModelBuilder m(7);
  m.input("a", kBool, {2}).input("b", kBool, {2}).node("Xor", {"a", "b"}, {"x"});
  m.node("Not", {"x"}, {"y"}).output("y");
  OnnxModel model = m.import();
  EXPECT_EQ(model.opset, 7);
  auto out = run(model, {host(DType::boolean, {2}, {0, 1}), host(DType::boolean, {2}, {0, 0})});
  EXPECT_THAT(values_of(out[0]), ElementsAre(1, 0));
}

TEST(ImportCore, ConstantInputsOption) {
  // ONNX node tests feed shape arguments as inputs; they can be fixed at import.
  ModelBuilder m;
  m.input("x", kF32, {2, 3})
      .input("shape", kI64, {2})
      .node("Reshape", {"x", "shape"}, {"y"})
      .output("y");
  OnnxImportOptions options;
  options.constant_inputs["shape"] = host(DType::i64, {2}, {3, 2});
  OnnxModel model = import_onnx_bytes(m.bytes(), "test.onnx", options);
  EXPECT_THAT(model.input_names, ElementsAre("x"));
  EXPECT_EQ(run(model, {iota_host(DType::f32, {2, 3})})[0].shape(), (std::vector<int64_t>{3, 2}));
  options.constant_inputs["shape"] = host(DType::i64, {3}, {1, 3, 2});
  try {
    import_onnx_bytes(m.bytes(), "test.onnx", options);
    ADD_FAILURE() << "a constant input of the wrong shape imported";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("input 'shape' is declared i64[2] but its constant value is "
                                    "i64[3]"));
  }
  options.constant_inputs.clear();
  options.constant_inputs["nope"] = host(DType::i64, {1}, {1});
  EXPECT_THROW(import_onnx_bytes(m.bytes(), "test.onnx", options), UserError);
}

TEST(ImportErrors, OpsetAndIrVersion) {
  ModelBuilder old(12);
  old.input("x", kF32, {2, 2}).node("Softmax", {"x"}, {"y"}).output("y");
  EXPECT_THAT(import_error(old), HasSubstr("the model's opset 12 is older than 13, and these ops "
                                           "it uses have changed since (autofuse reads opsets 13 "
                                           "to 22, and older op versions that mean the same): "
                                           "Softmax-11 (nodes: #0)"));
  EXPECT_THROW(old.import(), UnsupportedError);
  ModelBuilder future(23);
  future.input("x", kF32, {2}).node("Relu", {"x"}, {"y"}).output("y");
  EXPECT_THAT(import_error(future), HasSubstr("opsets 13 to 22"));
  EXPECT_THROW(future.import(), UnsupportedError);
  ModelBuilder no_ir;
  no_ir.input("x", kF32, {2}).node("Relu", {"x"}, {"y"}).output("y");
  no_ir.proto().clear_ir_version();
  EXPECT_THAT(import_error(no_ir), HasSubstr("ir_version is missing"));
}

TEST(ImportErrors, UndefinedAndTwiceDefinedValues) {
  ModelBuilder undefined;
  undefined.input("x", kF32, {2})
      .node("Add", {"x", "later"}, {"y"}, {}, "add_1")
      .node("Relu", {"x"}, {"later"})
      .output("y");
  EXPECT_THAT(import_error(undefined),
              HasSubstr("node 'add_1' (Add): input 'later' is not defined before this node"));
  ModelBuilder twice;
  twice.input("x", kF32, {2})
      .node("Relu", {"x"}, {"y"})
      .node("Neg", {"x"}, {"y"}, {}, "neg")
      .output("y");
  EXPECT_THAT(import_error(twice), HasSubstr("node 'neg' (Neg): value 'y' is defined twice"));
  ModelBuilder no_output;
  no_output.input("x", kF32, {2}).output("nowhere");
  EXPECT_THAT(import_error(no_output), HasSubstr("graph output 'nowhere' is not defined"));
}

TEST(ImportErrors, ConverterAndGraphErrorsNameTheOnnxNode) {
  ModelBuilder m;
  m.input("a", kF32, {2, 3}).input("b", kF32, {4}).node("Add", {"a", "b"}, {"y"}).output("y");
  const std::string error = import_error(m);
  EXPECT_THAT(error, HasSubstr("test.onnx: node '#0' (Add)"));
  EXPECT_THAT(error, HasSubstr("cannot broadcast"));
  ModelBuilder attr_type;
  attr_type.input("x", kF32, {2, 3})
      .node("Transpose", {"x"}, {"y"}, {attr("perm", 1)}, "tr")
      .output("y");
  EXPECT_THAT(import_error(attr_type),
              HasSubstr("node 'tr' (Transpose): attribute 'perm' has type INT, expected INTS"));
}

TEST(ImportErrors, InputsNeedARank) {
  ModelBuilder m;
  m.input("x", kF32, {2}).node("Relu", {"x"}, {"y"}).output("y");
  m.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  EXPECT_THAT(import_error(m), HasSubstr("input 'x' declares no shape"));
}

}  // namespace import_core_test_local
}  // namespace autofuse::frontend::testing
