// ONNX TensorProto (.pb) reading: raw_data and every typed field, the dtype
// mapping both ways, and malformed files as UserErrors naming the problem.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/frontend/tensor_io.h"
#include "autofuse/support/half.h"
#include "frontend/io/tensor_proto.h"
#include "frontend/io_test_util.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace io_pb_test_local {

using frontend::read_tensor_file;
using frontend::read_tensor_pb;
using frontend::tensor_from_proto;
using frontend::tensor_to_proto;
using ::testing::HasSubstr;

std::string serialized(const onnx::TensorProto& proto) {
  std::string bytes;
  EXPECT_TRUE(proto.SerializeToString(&bytes));
  return bytes;
}

TEST(IoPb, RawDataRoundTripsEveryDtype) {
  TempDir dir;
  for (DType dtype : kAllDTypes)
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{}, {5}, {2, 3}, {0, 3}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " rank " + std::to_string(shape.size()));
      HostTensor t = patterned(dtype, shape);
      onnx::TensorProto proto = tensor_to_proto(t, "x");
      EXPECT_EQ(proto.name(), "x");
      EXPECT_EQ(frontend::dtype_from_onnx(proto.data_type()), dtype);
      std::string path = dir.write("t.pb", serialized(proto));
      expect_same_tensor(read_tensor_pb(path), t);
      expect_same_tensor(read_tensor_file(path), t);
    }
}

TEST(IoPb, TypedFields) {
  {
    onnx::TensorProto p;
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.add_dims(2);
    p.add_float_data(1.5f);
    p.add_float_data(-3.0f);
    HostTensor t = tensor_from_proto(p, "f");
    EXPECT_EQ(t.type_string(), "f32[2]");
    EXPECT_EQ(t.get_f64(1), -3.0);
  }
  {
    onnx::TensorProto p;
    p.set_data_type(onnx::TensorProto::DOUBLE);
    p.add_double_data(0.25);  // rank 0: one value
    HostTensor t = tensor_from_proto(p, "d");
    EXPECT_EQ(t.type_string(), "f64[]");
    EXPECT_EQ(t.get_f64(0), 0.25);
  }
  {
    onnx::TensorProto p;
    p.set_data_type(onnx::TensorProto::INT64);
    p.add_dims(1);
    p.add_int64_data(int64_t{1} << 40);
    EXPECT_EQ(tensor_from_proto(p, "i").get_i64(0), int64_t{1} << 40);
  }
  struct Int32Case {
    int32_t type;
    std::vector<int32_t> values;
    std::vector<double> expect;
  };
  std::vector<Int32Case> cases = {
      {onnx::TensorProto::INT32, {-5, 7}, {-5, 7}},
      {onnx::TensorProto::INT8, {-128, 127}, {-128, 127}},
      {onnx::TensorProto::UINT8, {0, 255}, {0, 255}},
      {onnx::TensorProto::BOOL, {0, 3}, {0, 1}},
      {onnx::TensorProto::FLOAT16, {f32_to_f16(1.5f), f32_to_f16(-2.0f)}, {1.5, -2.0}},
      {onnx::TensorProto::BFLOAT16, {f32_to_bf16(0.5f), f32_to_bf16(-4.0f)}, {0.5, -4.0}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(frontend::onnx_type_name(c.type));
    onnx::TensorProto p;
    p.set_data_type(c.type);
    p.add_dims(2);
    for (int32_t v : c.values)
      p.add_int32_data(v);
    HostTensor t = tensor_from_proto(p, "t");
    EXPECT_EQ(t.get_f64(0), c.expect[0]);
    EXPECT_EQ(t.get_f64(1), c.expect[1]);
  }
}

TEST(IoPb, EmptyTensorNeedsNoData) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::INT64);
  p.add_dims(0);
  p.add_dims(4);
  EXPECT_EQ(tensor_from_proto(p, "e").type_string(), "i64[0, 4]");
}

TEST(IoPb, RawBoolBytesAreNormalized) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::BOOL);
  p.add_dims(2);
  p.set_raw_data(std::string("\x00\x05", 2));
  HostTensor t = tensor_from_proto(p, "b");
  EXPECT_EQ(t.data_as<uint8_t>()[1], 1);
}

TEST(IoPb, TypeNames) {
  EXPECT_EQ(frontend::onnx_type_name(onnx::TensorProto::FLOAT16), "FLOAT16");
  EXPECT_EQ(frontend::onnx_type_name(17), "FLOAT8E4M3FN");
  EXPECT_EQ(frontend::onnx_type_name(999), "type 999");
  for (DType d : kAllDTypes)
    EXPECT_EQ(frontend::dtype_from_onnx(frontend::onnx_from_dtype(d)), d);
}

onnx::TensorProto float_proto(std::vector<int64_t> dims) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    p.add_dims(d);
  return p;
}

TEST(IoPb, MalformedTensorsAreUserErrors) {
  auto message = [](const onnx::TensorProto& p) {
    return user_error_of([&] { tensor_from_proto(p, "src.pb"); });
  };
  {
    onnx::TensorProto p = float_proto({2, 3});
    p.set_raw_data(std::string(20, '\0'));
    EXPECT_THAT(message(p), HasSubstr("raw_data has 20 bytes but FLOAT [2, 3] needs 24"));
  }
  {
    onnx::TensorProto p = float_proto({3});
    p.add_float_data(1);
    p.add_float_data(2);
    EXPECT_THAT(message(p), HasSubstr("has 2 value(s), needs 3"));
  }
  {
    onnx::TensorProto p = float_proto({1});
    p.add_float_data(1);
    p.add_float_data(2);
    EXPECT_THAT(message(p), HasSubstr("float_data has 2 value(s) but the shape f32[1] needs 1"));
  }
  {
    onnx::TensorProto p = float_proto({2});
    p.add_int64_data(1);  // the wrong field for FLOAT
    p.add_int64_data(2);
    EXPECT_THAT(message(p), HasSubstr("float_data has 0 value(s)"));
  }
  {
    onnx::TensorProto p = float_proto({2, -1});
    EXPECT_THAT(message(p), HasSubstr("negative dim"));
  }
  {
    onnx::TensorProto p = float_proto({int64_t{1} << 40, int64_t{1} << 40});
    p.set_raw_data("abcd");
    EXPECT_THAT(message(p), HasSubstr("too large"));
  }
  {
    onnx::TensorProto p = float_proto({1 << 20, 1 << 20});  // 4 TiB claimed, no data
    EXPECT_THAT(message(p), HasSubstr("needs 1099511627776"));
  }
  for (int32_t type :
       std::initializer_list<int32_t>{onnx::TensorProto::STRING, onnx::TensorProto::COMPLEX128,
                                      onnx::TensorProto::COMPLEX64, int32_t{23}, int32_t{0}}) {
    onnx::TensorProto p;
    p.set_data_type(type);
    EXPECT_THAT(message(p), HasSubstr(frontend::onnx_type_name(type) + " is not supported"));
  }
  {
    onnx::TensorProto p;
    p.set_data_type(onnx::TensorProto::INT8);
    p.add_int32_data(200);
    EXPECT_THAT(message(p), HasSubstr("out of range for INT8"));
  }
  {
    onnx::TensorProto p = float_proto({2});
    p.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = p.add_external_data();
    entry->set_key("location");
    entry->set_value("weights.bin");
    EXPECT_THAT(message(p), HasSubstr("external data"));
  }
  {
    onnx::TensorProto p = float_proto({2});
    p.mutable_segment()->set_begin(0);
    EXPECT_THAT(message(p), HasSubstr("segmented"));
  }
  EXPECT_THAT(message(float_proto({1})), HasSubstr("src.pb"));
}

TEST(IoPb, MalformedFilesAreUserErrors) {
  TempDir dir;
  onnx::TensorProto good = tensor_to_proto(patterned(DType::f32, {4, 4}), "x");
  std::string bytes = serialized(good);
  // Truncated inside raw_data: protobuf rejects the length-delimited field.
  std::string path = dir.write("trunc.pb", bytes.substr(0, bytes.size() - 10));
  EXPECT_THAT(user_error_of([&] { read_tensor_pb(path); }), HasSubstr("trunc.pb"));
  path = dir.write("garbage.pb", "\xff\xff\xff\xff not a protobuf");
  EXPECT_THAT(user_error_of([&] { read_tensor_pb(path); }), HasSubstr("malformed or truncated"));
  path = dir.write("empty.pb", "");
  EXPECT_THAT(user_error_of([&] { read_tensor_pb(path); }), HasSubstr("UNDEFINED"));
  EXPECT_THAT(user_error_of([] { read_tensor_pb("/nonexistent/t.pb"); }),
              HasSubstr("/nonexistent/t.pb"));
}

}  // namespace io_pb_test_local
}  // namespace autofuse::testing
