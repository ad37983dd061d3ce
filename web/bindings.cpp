// trainclock: the only Embind file. It forwards the JSON facade of core/include/trainclock/api/api.hpp
// to JavaScript (window.trainclock in site/index.html) and adds nothing else.
#include <emscripten/bind.h>

#include <string>

#include "trainclock/api/api.hpp"

namespace {

std::string predict(const std::string& config_json) { return trainclock::predict_json(config_json); }
std::string compare(const std::string& config_json) { return trainclock::compare_json(config_json); }
std::string scaling(const std::string& config_json) { return trainclock::scaling_json(config_json); }
std::string presets(const std::string& kind) { return trainclock::presets_json(kind); }
std::string encode_link(const std::string& config_json) { return trainclock::encode_link(config_json); }
std::string decode_link(const std::string& fragment) { return trainclock::decode_link(fragment); }
std::string search(const std::string& config_json, const std::string& options_json) {
    return trainclock::search_json(config_json, options_json);
}
std::string plan(const std::string& config_json, const std::string& options_json) {
    return trainclock::plan_json(config_json, options_json);
}

}  // namespace

EMSCRIPTEN_BINDINGS(trainclock) {
    emscripten::function("predict", &predict);
    emscripten::function("compare", &compare);
    emscripten::function("scaling", &scaling);
    emscripten::function("presets", &presets);
    emscripten::function("encodeLink", &encode_link);
    emscripten::function("decodeLink", &decode_link);
    emscripten::function("search", &search);
    emscripten::function("plan", &plan);  // trainclock/plan/v1 in one call; the page's Plan panel steps the core's PlanRun per frame
}
