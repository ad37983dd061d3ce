// Fuzz target: a torchtitan job config TOML (import_torchtitan).
#include "fuzz_target.hpp"

TRAINCLOCK_FUZZ_TEXT(text) {
    using namespace trainclock;
    fuzz::check_imported(import_torchtitan(text, R"({"gpu": "h100-sxm"})"), fuzz::whole_config);
}
