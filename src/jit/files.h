// Small file helpers of the JIT's cache folder: whole-file writes and reads,
// unique temporary names (mkstemps) and the compiler output shown in errors.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace autofuse::jit {

/// Writes `text` to `path` (created or truncated). UserError naming the file.
void write_file(const std::string& path, std::string_view text);

/// The bytes of `path`; nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);

/// Creates a unique empty file from a mkstemps template ("...XXXXXX<suffix>",
/// `suffix_len` the length of <suffix>) and returns its path.
std::string make_temp_file(std::string pattern, int suffix_len);

bool file_exists(const std::string& path);

/// The first `max_lines` lines of a compiler's output (what an error shows),
/// with a note when cut.
std::string first_lines(const std::string& text, int max_lines = 50);

}  // namespace autofuse::jit
