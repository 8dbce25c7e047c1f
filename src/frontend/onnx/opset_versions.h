// Which ONNX operator versions the converters implement. The converters
// follow the operator docs of opsets 13..22 (reading ctx.opset() where a
// later version changed an op, e.g. Pad-18 axes). A model of another opset
// is read only op by op, through reviewed tables of versions whose
// semantics equal the ones implemented (checked against the ONNX operator
// changelog; see opset_versions.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace autofuse::frontend::onnx_import {

/// The opsets whose every op means what the converters implement.
inline constexpr int64_t kMinOpset = 13;
inline constexpr int64_t kMaxOpset = 22;

/// For a model of opset `opset` < kMinOpset whose `op` resolves to version
/// `version` (its since_version there) while opset kMinOpset has
/// `version_13`: whether that older version means what the converter
/// implements (the same version, or one the reviewed table lists).
bool old_version_matches(const std::string& op, int version, int version_13);

/// For a model of opset 22: "Op-22" when the op got a new version in opset
/// 22 that changed its semantics, with the change; nullopt when its version
/// 22 only added types, or it has none.
std::optional<std::string> unreviewed_opset22_version(const std::string& op);

}  // namespace autofuse::frontend::onnx_import
