// Fuzz target: a shareable link fragment (decode_config_link); a decoded config must encode to a
// link that decodes to the same config.
#include "fuzz_target.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/link.hpp"

TRAINCLOCK_FUZZ_TEXT(text) {
    using namespace trainclock;
    const Result<Config> decoded = decode_config_link(text);
    if (!fuzz::ok_or_well_formed_error(decoded)) return;
    fuzz::check_round_trip(decoded.value());
    const std::string link = encode_config_link(decoded.value());
    const Result<Config> again = decode_config_link(link);
    if (!again) fuzz::fail("the link of a decoded config does not decode", again.error().to_string() + "\n" + link);
    if (config_to_json(again.value()) != config_to_json(decoded.value()))
        fuzz::fail("a link does not reproduce its config", std::string(text) + "\n---\n" + link);
}
