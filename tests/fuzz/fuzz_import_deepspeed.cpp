// Fuzz target: a DeepSpeed config JSON (import_deepspeed; it names no model, the overrides do).
#include "fuzz_target.hpp"

TRAINCLOCK_FUZZ_TEXT(text) {
    using namespace trainclock;
    fuzz::check_imported(import_deepspeed(text, R"({"model": "gpt2", "gpu": "h100-sxm"})"), fuzz::whole_config);
}
