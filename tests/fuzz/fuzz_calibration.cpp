// Fuzz target: a calibration JSON file (validate --calibration, parse_calibration_json); a valid
// one, set on a valid config, must survive the config's JSON round trip.
#include "fuzz_target.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/validation/validation.hpp"

TRAINCLOCK_FUZZ_TEXT(text) {
    using namespace trainclock;
    static const Config base = load_config(R"({"model": "gpt2", "gpu": "h100-sxm"})").value();
    const Result<CalibrationSpec> calibration = parse_calibration_json(text);
    if (!fuzz::ok_or_well_formed_error(calibration)) return;
    Config config = base;
    config.calibration = calibration.value();
    fuzz::check_round_trip(config);
}
