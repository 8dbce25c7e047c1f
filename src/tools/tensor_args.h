// The `run` command's real-data options: `--input NAME=FILE` (.npy or .pb)
// and `--output-dir D`.
#pragma once

#include <string>
#include <vector>

#include "autofuse/ref/tensor.h"
#include "autofuse/sym/expr.h"
#include "tools/graph_loading.h"

namespace autofuse::tools {

/// Reads the `--input NAME=FILE` arguments (NAME: the input's user-facing
/// name, see LoadedGraph) into graph-input order. UserError on a malformed
/// argument, an unknown or repeated name, missing inputs (all are listed), an
/// unreadable file, or a tensor whose dtype or shape the input's declared
/// type rules out (naming the input, expected vs got).
std::vector<HostTensor> read_input_args(const LoadedGraph& loaded,
                                        const std::vector<std::string>& args);

/// The symbol values the inputs imply (a dim that is a lone symbol binds it;
/// constant dims and symbols seen before must agree), starting from `given`
/// (from --shape, which must agree too). Then checks everything else
/// (composite dims, guards) through bind_symbols. UserError naming the input.
sym::Binding bind_input_shapes(const LoadedGraph& loaded, const std::vector<HostTensor>& inputs,
                               const sym::Binding& given);

/// Writes output i to `dir`/<file name for output_names[i]>.npy, creating
/// `dir`. bf16 outputs are widened to f32 (.npy has no bf16); returns a note
/// per widened output for the user.
std::vector<std::string> write_output_files(const std::string& dir,
                                            const std::vector<std::string>& output_names,
                                            const std::vector<HostTensor>& outputs);

/// A file name for a tensor name: '/' and NUL become '_', and names that
/// are empty or "." / ".." get a leading '_'.
std::string file_name_for(const std::string& tensor_name);

}  // namespace autofuse::tools
