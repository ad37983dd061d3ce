// trainclock (internal): the members of a result/v1 object, into a writer (embedded in API replies
// and search reports); prediction_to_json (trainclock/formats/prediction_json.hpp) wraps them.
#pragma once

#include "base/json_writer.hpp"
#include "trainclock/formats/prediction_json.hpp"

namespace trainclock {

// The members of a result/v1 object (no braces): scalars, memory, breakdown_s, warnings, then
// "config" when given and "timeline" when non-empty. prediction_to_json wraps them in an object.
void write_prediction_members(JsonWriter& out, const Prediction& prediction, const Config* config);

// The value of a result's "calibration" key (issue 25 item 4): null (the shipped constants) or
// {"name", "fitted_on": {frameworks, gpus, precisions, factors, cases} | null, "applied", "outside_scope"}.
void write_calibration_use(JsonWriter& out, const Config& config);

}  // namespace trainclock
