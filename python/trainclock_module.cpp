// trainclock Python binding: forwards JSON text to the core's JSON facade (core/api.hpp) and back;
// python/trainclock/__init__.py turns it into dicts and ValueErrors. No logic lives here.
#include <pybind11/pybind11.h>

#include <string>

#include "trainclock/api/api.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_trainclock, m) {
    m.doc() = "trainclock core (JSON text in, JSON text out); use the trainclock package instead";
    m.attr("version") = TRAINCLOCK_VERSION;
    // Every call releases the GIL: predictions and searches are pure C++ on their own data.
    const auto text = [](std::string (*function)(std::string_view)) {
        return [function](const std::string& json) {
            py::gil_scoped_release release;
            return function(json);
        };
    };
    m.def("predict_json", text(trainclock::predict_json), "result/v1 JSON of a config/v1 JSON");
    m.def("compare_json", text(trainclock::compare_json), "the config across the GPU's precisions");
    m.def("presets_json", text(trainclock::presets_json), "preset catalogue of one kind ('' = all)");
    m.def("import_hf_json", text(trainclock::import_hf_json), "a Hugging Face config.json as a config/v1 model");
    m.def("validate_json", text(trainclock::validate_json), "accuracy against the embedded measurements");
    m.def("calibrate_json", text(trainclock::calibrate_json), "a calibration from measured runs or measure_gpu.py micro-benchmarks");
    m.def(
        "import_launch_json",
        [](const std::string& kind, const std::string& text, const std::string& overrides) {
            py::gil_scoped_release release;
            return trainclock::import_launch_json(kind, text, overrides);
        },
        "a Megatron command line, torchtitan TOML or DeepSpeed JSON as a config/v1 document");
    m.def(
        "search_json",
        [](const std::string& config, const std::string& options) {
            py::gil_scoped_release release;
            return trainclock::search_json(config, options);
        },
        "fastest layouts (single thread)");
    m.def(
        "plan_json",
        [](const std::string& config, const std::string& options) {
            py::gil_scoped_release release;
            return trainclock::plan_json(config, options);
        },
        "which GPUs, how many and in which precision: the days vs cost plan (trainclock/plan/v1)");
}
