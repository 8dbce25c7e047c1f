#include "tools/graph_loading.h"

#include "autofuse/frontend/onnx_import.h"
#include "autofuse/graph/text.h"

namespace autofuse::tools {

LoadedGraph load_graph(const std::string& path) {
  LoadedGraph loaded;
  constexpr std::string_view kOnnx = ".onnx";
  if (path.size() > kOnnx.size() && path.ends_with(kOnnx)) {
    frontend::OnnxModel model = frontend::import_onnx_file(path);
    loaded.graph = std::move(model.graph);
    loaded.input_names = std::move(model.input_names);
    loaded.output_names = std::move(model.output_names);
    loaded.from_onnx = true;
    AF_CHECK(loaded.input_names.size() == loaded.graph->inputs().size() &&
                 loaded.output_names.size() == loaded.graph->outputs().size(),
             "ONNX import of {} gave {} input / {} output names for {} / {} graph values", path,
             loaded.input_names.size(), loaded.output_names.size(), loaded.graph->inputs().size(),
             loaded.graph->outputs().size());
    return loaded;
  }
  loaded.graph = std::make_shared<const Graph>(parse_graph_file(path));
  for (ValueId v : loaded.graph->inputs())
    loaded.input_names.push_back(loaded.graph->value(v).name);
  for (ValueId v : loaded.graph->outputs())
    loaded.output_names.push_back(loaded.graph->value(v).name);
  return loaded;
}

runtime::CompileOptions compile_options(bool fused, const std::string& dump_dir) {
  runtime::CompileOptions options;
  options.fusion = fuse::FusionConfig::from_env();
  if (!fused) options.fusion.enabled = false;
  options.dump_dir = dump_dir;
  return options;
}

}  // namespace autofuse::tools
