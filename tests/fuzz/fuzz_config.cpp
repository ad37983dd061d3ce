// Fuzz target: a config/v1 document, parsed (parse_config) then validated (validate_config).
#include "fuzz_target.hpp"
#include "trainclock/formats/config_json.hpp"

TRAINCLOCK_FUZZ_TEXT(text) { trainclock::fuzz::check_config_result(trainclock::parse_config(text)); }
