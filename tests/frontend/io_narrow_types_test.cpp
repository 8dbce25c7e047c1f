// Tensor files with the dtypes ONNX stores specially: 4-bit integers packed
// two per byte (low nibble first) in raw_data and int32_data, float8 bit
// patterns in int32_data, uint32/uint64 in uint64_data, int16/uint16 in
// int32_data; and .npy, which has no float8 or int4.
#include <cstdint>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/frontend/tensor_io.h"
#include "frontend/io/tensor_proto.h"
#include "frontend/io_test_util.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace io_narrow_types_test_local {

using frontend::tensor_from_proto;
using frontend::tensor_to_proto;
using ::testing::HasSubstr;

constexpr int32_t kFloat8E4M3FN = 17, kFloat8E5M2 = 19, kUint4 = 21, kInt4 = 22;

onnx::TensorProto proto(int32_t type, std::vector<int64_t> dims) {
  onnx::TensorProto p;
  p.set_data_type(type);
  for (int64_t d : dims)
    p.add_dims(d);
  return p;
}

std::vector<int64_t> ints(const HostTensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i)
    v.push_back(t.get_i64(i));
  return v;
}

TEST(IoNarrowTypes, Int4RawDataUnpacksLowNibbleFirst) {
  onnx::TensorProto p = proto(kInt4, {3});
  p.set_raw_data(std::string("\x98\x07", 2));  // [8, 9 | 7, pad]
  HostTensor t = tensor_from_proto(p, "i4");
  EXPECT_EQ(t.type_string(), "i4[3]");
  EXPECT_EQ(ints(t), (std::vector<int64_t>{-8, -7, 7}));
  EXPECT_EQ(t.data_as<int8_t>()[0], -8);  // stored sign-extended, one per byte

  p.set_data_type(kUint4);
  HostTensor u = tensor_from_proto(p, "u4");
  EXPECT_EQ(ints(u), (std::vector<int64_t>{8, 9, 7}));
}

TEST(IoNarrowTypes, Int4WritesPacked) {
  HostTensor t(DType::i4, {3});
  t.set_i64(0, -8);
  t.set_i64(1, -7);
  t.set_i64(2, 7);
  onnx::TensorProto p = tensor_to_proto(t);
  EXPECT_EQ(p.data_type(), kInt4);
  EXPECT_EQ(p.raw_data(), std::string("\x98\x07", 2));
  HostTensor u(DType::u4, {2});
  u.set_i64(0, 15);
  u.set_i64(1, 1);
  EXPECT_EQ(tensor_to_proto(u).raw_data(), std::string("\x1f", 1));
}

TEST(IoNarrowTypes, Int4Int32DataAsOnnxTestsWriteIt) {
  // test_cast_INT4_to_FLOAT's input: one packed byte per int32_data entry.
  onnx::TensorProto p = proto(kInt4, {5, 5});
  for (int32_t v : {136, 169, 203, 237, 15, 33, 67, 101, 119, 119, 119, 119, 7})
    p.add_int32_data(v);
  HostTensor t = tensor_from_proto(p, "x");
  std::vector<int64_t> want;
  for (int64_t v = -9; v <= 15; ++v)
    want.push_back(v < -8 ? -8 : v > 7 ? 7 : v);
  EXPECT_EQ(ints(t), want);
  p.add_int32_data(0);  // 14 entries for 25 elements: one too many
  EXPECT_THAT(user_error_of([&] { tensor_from_proto(p, "x"); }),
              HasSubstr("int32_data has 14 value(s) but the shape i4[5, 5] needs 13"));
}

TEST(IoNarrowTypes, Int4RawSizeIsChecked) {
  onnx::TensorProto p = proto(kUint4, {3});
  p.set_raw_data(std::string(3, '\0'));
  EXPECT_THAT(user_error_of([&] { tensor_from_proto(p, "x"); }),
              HasSubstr("raw_data has 3 bytes but UINT4 [3] needs 2"));
}

TEST(IoNarrowTypes, Float8BitPatternsInInt32Data) {
  onnx::TensorProto p = proto(kFloat8E4M3FN, {3});
  for (int32_t v : {0x38, 0xff, 0x7e})
    p.add_int32_data(v);
  HostTensor t = tensor_from_proto(p, "x");
  EXPECT_EQ(t.type_string(), "f8e4m3fn[3]");
  EXPECT_EQ(t.get_f64(0), 1.0);
  EXPECT_TRUE(std::isnan(t.get_f64(1)));
  EXPECT_EQ(t.get_f64(2), 448.0);
  p.set_int32_data(1, 256);
  EXPECT_THAT(user_error_of([&] { tensor_from_proto(p, "x"); }),
              HasSubstr("int32_data value 256 is out of range for FLOAT8E4M3FN"));
  onnx::TensorProto raw = proto(kFloat8E5M2, {1});
  raw.set_raw_data(std::string("\x7c", 1));
  EXPECT_EQ(tensor_from_proto(raw, "x").get_f64(0), INFINITY);
}

TEST(IoNarrowTypes, WideUnsignedInUint64Data) {
  onnx::TensorProto p = proto(onnx::TensorProto::UINT64, {2});
  p.add_uint64_data(UINT64_MAX);
  p.add_uint64_data(5);
  HostTensor t = tensor_from_proto(p, "x");
  EXPECT_EQ(t.data_as<uint64_t>()[0], UINT64_MAX);
  EXPECT_EQ(t.data_as<uint64_t>()[1], 5u);
  onnx::TensorProto q = proto(onnx::TensorProto::UINT32, {2});
  q.add_uint64_data(4294967295u);
  q.add_uint64_data(uint64_t{1} << 32);
  EXPECT_THAT(user_error_of([&] { tensor_from_proto(q, "x"); }),
              HasSubstr("uint64_data value 4294967296 is out of range for UINT32"));
}

TEST(IoNarrowTypes, SixteenBitIntsInInt32Data) {
  onnx::TensorProto p = proto(onnx::TensorProto::INT16, {2});
  p.add_int32_data(-32768);
  p.add_int32_data(32767);
  EXPECT_EQ(ints(tensor_from_proto(p, "x")), (std::vector<int64_t>{-32768, 32767}));
  p.set_int32_data(0, 40000);
  EXPECT_THAT(user_error_of([&] { tensor_from_proto(p, "x"); }),
              HasSubstr("int32_data value 40000 is out of range for INT16"));
  onnx::TensorProto u = proto(onnx::TensorProto::UINT16, {1});
  u.add_int32_data(65535);
  EXPECT_EQ(ints(tensor_from_proto(u, "x")), (std::vector<int64_t>{65535}));
}

TEST(IoNarrowTypes, StringIsUnsupported) {
  onnx::TensorProto p = proto(onnx::TensorProto::STRING, {1});
  p.add_string_data("a");
  EXPECT_THROW(tensor_from_proto(p, "x"), UnsupportedError);
  EXPECT_EQ(frontend::dtype_from_onnx(onnx::TensorProto::STRING), std::nullopt);
  EXPECT_EQ(frontend::dtype_from_onnx(23), std::nullopt);  // FLOAT4E2M1
}

TEST(IoNarrowTypes, NpyHasNoFloat8OrInt4) {
  TempDir dir;
  EXPECT_THAT(
      user_error_of([&] { frontend::write_npy(dir.file("a.npy"), HostTensor(DType::i4, {2})); }),
      HasSubstr("NumPy has no standard 4-bit integer type; cast it to i8/u8 first"));
  EXPECT_THAT(user_error_of(
                  [&] { frontend::write_npy(dir.file("a.npy"), HostTensor(DType::f8e5m2, {2})); }),
              HasSubstr("NumPy has no standard float8 type; cast it to f32 first"));
  // ml_dtypes saves its float8 / int4 arrays as raw bytes.
  const std::string header = "{'descr': '|V1', 'fortran_order': False, 'shape': (2,), }";
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(header.size() + 1));
  file.push_back(0);
  file += header + "\n" + std::string(2, '\0');
  const std::string path = dir.write("v1.npy", file);
  EXPECT_THAT(user_error_of([&] { frontend::read_npy(path); }),
              HasSubstr("NumPy has no float8 or int4"));
}

TEST(IoNarrowTypes, NpyWideAndUnsignedInts) {
  TempDir dir;
  HostTensor t(DType::u64, {2});
  t.data_as<uint64_t>()[0] = UINT64_MAX;
  t.data_as<uint64_t>()[1] = 3;
  frontend::write_npy(dir.file("u.npy"), t);
  HostTensor back = frontend::read_npy(dir.file("u.npy"));
  EXPECT_EQ(back.type_string(), "u64[2]");
  EXPECT_EQ(back.data_as<uint64_t>()[0], UINT64_MAX);
  const std::string bytes = frontend::read_binary_file(dir.file("u.npy"), "test");
  EXPECT_THAT(bytes, HasSubstr("'descr': '<u8'"));
  for (DType d : {DType::i16, DType::u16, DType::u32}) {
    HostTensor x(d, {1});
    x.set_i64(0, 7);
    frontend::write_npy(dir.file("x.npy"), x);
    EXPECT_EQ(frontend::read_npy(dir.file("x.npy")).type_string(),
              std::string(dtype_name(d)) + "[1]");
  }
}

}  // namespace io_narrow_types_test_local
}  // namespace autofuse::testing
