// Reading and writing tensors: NumPy `.npy` (format 1.0-3.0, little-endian,
// C order) and ONNX TensorProto `.pb` files.
#pragma once

#include <string>

#include "autofuse/ref/tensor.h"

namespace autofuse::frontend {

/// UserError on a missing/truncated/malformed file, Fortran order, or a
/// dtype autofuse lacks (naming it).
HostTensor read_npy(const std::string& path);
/// Writes C-order, little-endian, format 1.0. UserError if not writable.
void write_npy(const std::string& path, const HostTensor& tensor);
/// A serialized onnx.TensorProto (raw_data or typed fields). UserError as above.
HostTensor read_tensor_pb(const std::string& path);
/// By extension: `.npy` or `.pb`.
HostTensor read_tensor_file(const std::string& path);

}  // namespace autofuse::frontend
