// Fuzz target: a Megatron-LM / NeMo launch command line (split_command_line + import_megatron).
#include "fuzz_target.hpp"

TRAINCLOCK_FUZZ_TEXT(text) {
    using namespace trainclock;
    fuzz::check_imported(import_megatron(split_command_line(text), R"({"gpu": "h100-sxm"})"), fuzz::whole_config);
}
