// Fuzz target: a Hugging Face config.json (import_hf_config), its model object put in a config.
#include "fuzz_target.hpp"

TRAINCLOCK_FUZZ_TEXT(text) {
    trainclock::fuzz::check_imported(trainclock::import_hf_config(text),
                                     [](const std::string& model) { return "{\"model\": " + model + ", \"gpu\": \"h100-sxm\"}"; });
}
