// `chakrasim chakra jsonize` (ET -> JSON) and `chakrasim chakra dejsonize` (JSON -> ET).
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "core/output_path.h"
#include "tools/json/jsonizer.h"

namespace chakrasim::cli {

Command add_jsonize(CLI::App& chakra) {
  struct JsonizeArgs {
    std::string input, output;
    bool compat = false;
  };
  auto args = std::make_shared<JsonizeArgs>();

  CLI::App* jsonize = chakra.add_subcommand("jsonize", "Write a Chakra ET as JSON (protobuf canonical JSON)");
  jsonize->footer("Example:\n"
                  "  chakrasim chakra jsonize trace.0.et trace.0.json\n"
                  "writes {\"metadata\": {...}, \"nodes\": [{...}, ...]}: protobuf's JSON names and encodings\n"
                  "(\"dataDeps\", 64-bit integers as strings, enum names, default values left out).\n"
                  "With --compat it writes what the reference chakra_jsonizer writes instead: the\n"
                  "GlobalMetadata and each Node as separate objects back to back (\"}{\"), not one JSON document.\n"
                  "`chakrasim chakra dejsonize` turns either back into the identical .et.");
  jsonize->add_option("input", args->input, "Chakra ET file (.et)")->required();
  jsonize->add_option("output,--out", args->output, "JSON file to write")->required();
  jsonize->add_flag("--compat", args->compat,
                    "The reference's concatenated objects (GlobalMetadata, then each Node) instead of one document");

  CLI::App* dejsonize = chakra.add_subcommand("dejsonize", "Turn JSON written by `chakra jsonize` back into a Chakra "
                                                           "ET");
  dejsonize->footer("Example:\n"
                    "  chakrasim chakra dejsonize trace.0.json trace.0.et\n"
                    "reads either form `chakra jsonize` writes (one document, or --compat's concatenated objects)\n"
                    "and writes the .et; an unedited file gives back the original .et byte for byte.");
  dejsonize->add_option("input", args->input, "JSON file")->required();
  dejsonize->add_option("output,--out", args->output, "Chakra ET file to write (.et)")->required();

  return [jsonize, dejsonize, args]() -> int {
    if (jsonize->parsed()) {
      prepare_output_file(args->output, "--out");
      tools::jsonize_file(args->input, args->output,
                          args->compat ? tools::JsonForm::kCompat : tools::JsonForm::kDocument);
      std::cout << "wrote " << args->output << "\n";
      return 0;
    }
    if (dejsonize->parsed()) {
      prepare_output_file(args->output, "--out");
      tools::dejsonize_file(args->input, args->output);
      std::cout << "wrote " << args->output << "\n";
      return 0;
    }
    return -1;
  };
}

}  // namespace chakrasim::cli
