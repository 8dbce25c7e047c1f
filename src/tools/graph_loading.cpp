#include "tools/graph_loading.h"

#include "autofuse/graph/text.h"

namespace autofuse::tools {

std::shared_ptr<const Graph> load_graph(const std::string& path) {
  return std::make_shared<const Graph>(parse_graph_file(path));
}

runtime::CompileOptions compile_options(bool fused, const std::string& dump_dir) {
  runtime::CompileOptions options;
  options.fusion = fuse::FusionConfig::from_env();
  if (!fused) options.fusion.enabled = false;
  options.dump_dir = dump_dir;
  return options;
}

}  // namespace autofuse::tools
