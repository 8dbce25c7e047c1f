// Conversions between onnx.TensorProto and HostTensor, shared by the `.pb`
// reader, the CLI's conformance runner and tests that write ONNX test data.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

#include "autofuse/ref/tensor.h"

namespace autofuse::frontend {

/// The autofuse dtype of an ONNX TensorProto.DataType; nullopt for those
/// autofuse lacks (string, complex, float4, ...).
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
/// The TensorProto.DataType of an autofuse dtype.
int32_t onnx_from_dtype(DType dtype);
/// "FLOAT16", "STRING", ... ("type 42" for values outside the enum), for errors.
std::string onnx_type_name(int32_t onnx_type);

/// The tensor a TensorProto holds, from raw_data or the typed field its dtype
/// uses (float_data, double_data, int64_data, uint64_data for uint32/uint64,
/// or int32_data for the narrower integers, bool and the bit patterns of
/// float16/bfloat16/float8). INT4/UINT4 come packed two per byte (low nibble
/// first) and are unpacked to one per byte. UnsupportedError on a dtype
/// autofuse lacks; UserError, naming `source`, on external or segmented
/// data, a negative dim, or data whose size disagrees with dims.
HostTensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& source);

/// The tensor as a TensorProto with dims, data_type, raw_data (int4 packed
/// two per byte) and `name`.
onnx::TensorProto tensor_to_proto(const HostTensor& tensor, const std::string& name = "");

/// Parses a serialized TensorProto file (UserError if missing or malformed).
onnx::TensorProto read_tensor_proto_file(const std::string& path);

/// The whole file as bytes. UserError (naming `what` and the path) if it
/// cannot be opened or read.
std::string read_binary_file(const std::string& path, std::string_view what);

}  // namespace autofuse::frontend
