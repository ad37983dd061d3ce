// trainclock: prediction intervals from cross-source residuals (intervals.hpp).
//
// Index
//   [SECTION] Axes and groups of a config
//   [SECTION] Rows: family-weighted ranges around the estimate
//   [SECTION] The table file
//   [SECTION] Lookup: the row, the nearest evidence, the widening, the reason
//   [SECTION] Widening calibrated on the folds, and coverage
#include "trainclock/catalogue/intervals.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include <simdjson.h>

#include "base/json_writer.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/model/spellings.hpp"

namespace trainclock {

// [SECTION] Axes and groups of a config ----------------------------------------------------------

namespace {

std::string_view precision_family(DType gemm) {
    switch (gemm) {
    case DType::fp32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::fp16:
    case DType::bf16: return "16-bit";
    case DType::fp8:
    case DType::mxfp8: return "fp8";
    case DType::nvfp4: return "fp4";
    }
    return "other";
}

constexpr std::string_view kAxisNames[kIntervalAxisCount] = {"gpu_generation", "framework",       "scale_gpus", "moe",
                                                             "finetune",       "precision_family"};

std::string scale_bucket(int64_t gpus) {
    // Octaves of 8: one node, a rack, a pod, ... (a factor 8 in GPUs changes which links dominate).
    if (gpus <= 1) return "1";
    if (gpus <= 8) return "2-8";
    if (gpus <= 64) return "9-64";
    if (gpus <= 512) return "65-512";
    if (gpus <= 4096) return "513-4096";
    return "4097+";
}

std::string lowercase(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

}  // namespace

std::string_view interval_axis_name(IntervalAxis axis) { return kAxisNames[static_cast<size_t>(axis)]; }

IntervalAxes interval_axes(const Config& config) {
    IntervalAxes axes;
    const bool nvidia = config.gpu.vendor.empty() || config.gpu.vendor == "NVIDIA";
    axes[0] = nvidia ? std::string(gpu_generation_name(gpu_kernel_generation(config.gpu))) : lowercase(config.gpu.vendor);
    axes[1] = config.framework.name.empty() ? std::string(kDefaultFrameworkEquivalent) : config.framework.name;
    axes[2] = scale_bucket(config.num_gpus);
    axes[3] = config.model.is_moe() ? "moe" : "dense";
    const FinetuneMethod method = config.training.finetune.method;
    axes[4] = method == FinetuneMethod::lora               ? "lora"
              : method == FinetuneMethod::qlora            ? "qlora"
              : config.training.finetune.frozen_layers > 0 ? "frozen-layers"
                                                           : "full";
    axes[5] = std::string(precision_family(config.precision.gemm));
    return axes;
}

std::vector<std::string> interval_groups(const Config& config) {
    const IntervalAxes axes = interval_axes(config);
    const std::string generation(gpu_generation_name(gpu_kernel_generation(config.gpu)));
    const std::string& framework = axes[1];
    const std::string& family = axes[5];
    return {framework + "|" + generation + "|" + family, "*|" + generation + "|" + family, "*|*|" + family, "*|*|*"};
}

// [SECTION] Rows: family-weighted ranges around the estimate -----------------------------------

namespace {

struct Weighted {
    double value = 0;  // log(measured / predicted)
    double by_case = 0, by_family = 0;
};

double round_down(double value) { return std::floor(value * 1000.0 + 1e-9) / 1000.0; }  // a stable file that
double round_up(double value) { return std::ceil(value * 1000.0 - 1e-9) / 1000.0; }     // never narrows the range

// A group's range of measured / predicted (low <= 1 <= high), a conformal-style choice over the
// residuals with each family one witness: the shortest range around the estimate that holds
// kIntervalCoverage of the group's cases both per case and per family (a case weighs 1 / its
// family's cases, over the families); if every such range holds more than kIntervalCoverageCap of
// the cases (a small family far off), the range holding 80-85 % of the cases that holds the most
// per family (then the shortest). Ends are residuals or the estimate itself.
std::pair<double, double> group_range(const std::vector<std::pair<double, std::string>>& residuals) {
    std::map<std::string, int64_t> per_family;
    for (const auto& [ratio, family] : residuals) ++per_family[family];
    std::vector<Weighted> points;
    const double n = static_cast<double>(residuals.size()), families = static_cast<double>(per_family.size());
    for (const auto& [ratio, family] : residuals)
        points.push_back({std::log(ratio), 1.0 / n, 1.0 / (families * static_cast<double>(per_family[family]))});
    std::sort(points.begin(), points.end(), [](const Weighted& a, const Weighted& b) { return a.value < b.value; });
    const size_t count = points.size();
    std::vector<double> by_case(count + 1, 0.0), by_family(count + 1, 0.0);  // prefix sums
    for (size_t k = 0; k < count; ++k) {
        by_case[k + 1] = by_case[k] + points[k].by_case;
        by_family[k + 1] = by_family[k] + points[k].by_family;
    }
    // Lower ends: each distinct value <= 0 (from its first index) and the estimate (0); upper ends:
    // each distinct value >= 0 (to its last index) and the estimate. An end holds the points inside
    // the end as the file writes it (round_down / round_up widen it by up to 0.001), so the cases a
    // range is chosen by are the cases the written range holds.
    struct End {
        double value;
        size_t index;  // lower: first point inside; upper: one past the last point inside
    };
    auto value_less = [](const Weighted& point, double value) { return point.value < value; };
    auto less_value = [](double value, const Weighted& point) { return value < point.value; };
    auto low_end = [&](double value) {
        const double written = std::log(round_down(std::exp(value)));
        return End{value, size_t(std::lower_bound(points.begin(), points.end(), written, value_less) - points.begin())};
    };
    auto high_end = [&](double value) {
        const double written = std::log(round_up(std::exp(value)));
        return End{value, size_t(std::upper_bound(points.begin(), points.end(), written, less_value) - points.begin())};
    };
    std::vector<End> lows, highs;
    for (size_t k = 0; k < count; ++k) {
        if (points[k].value <= 0 && (k == 0 || points[k - 1].value < points[k].value)) lows.push_back(low_end(points[k].value));
        if (points[k].value >= 0 && (k + 1 == count || points[k + 1].value > points[k].value)) highs.push_back(high_end(points[k].value));
    }
    lows.push_back(low_end(0.0));
    highs.push_back(high_end(0.0));
    const double cap = std::max(kIntervalCoverageCap, std::ceil(kIntervalCoverage * n - 1e-9) / n);  // one case's step
    const double tolerance = 1e-9;
    std::optional<std::pair<double, double>> best_full, best_capped;
    double best_full_width = 0, best_capped_family = -1, best_capped_width = 0;
    for (const End& lo : lows) {
        for (const End& hi : highs) {
            if (hi.index <= lo.index) continue;
            const double cases = by_case[hi.index] - by_case[lo.index], family = by_family[hi.index] - by_family[lo.index];
            if (cases < kIntervalCoverage - tolerance) continue;
            const double width = hi.value - lo.value;
            if (family >= kIntervalCoverage - tolerance && cases <= cap + tolerance && (!best_full || width < best_full_width)) {
                best_full = std::pair{lo.value, hi.value};
                best_full_width = width;
            }
            if (cases <= cap + tolerance && (family > best_capped_family + tolerance ||
                                             (std::fabs(family - best_capped_family) <= tolerance && width < best_capped_width))) {
                best_capped = std::pair{lo.value, hi.value};
                best_capped_family = family;
                best_capped_width = width;
            }
        }
    }
    std::pair<double, double> range{points.front().value, points.back().value};
    if (best_full)
        range = *best_full;
    else if (best_capped)
        range = *best_capped;
    return {round_down(std::exp(std::min(range.first, 0.0))), round_up(std::exp(std::max(range.second, 0.0)))};
}

}  // namespace

IntervalTable interval_table_base(const std::vector<IntervalResidual>& residuals) {
    IntervalTable table;
    std::map<std::string, std::vector<std::pair<double, std::string>>> by_group;
    std::map<IntervalAxes, std::pair<int64_t, std::set<std::string>>> by_axes;
    for (const IntervalResidual& r : residuals) {
        for (const std::string& group : r.groups) by_group[group].emplace_back(r.ratio, r.family);
        auto& evidence = by_axes[r.axes];
        ++evidence.first;
        evidence.second.insert(r.family);
    }
    for (const auto& [group, ratios] : by_group) {
        if (static_cast<int64_t>(ratios.size()) < kMinIntervalCases) continue;
        std::set<std::string> families;
        for (const auto& entry : ratios) families.insert(entry.second);
        const auto [low, high] = group_range(ratios);
        table.rows.push_back({group, static_cast<int64_t>(ratios.size()), static_cast<int64_t>(families.size()), low, high});
    }
    for (const auto& [axes, evidence] : by_axes)
        table.evidence.push_back({axes, evidence.first, std::vector<std::string>(evidence.second.begin(), evidence.second.end())});
    return table;
}

// [SECTION] The table file -------------------------------------------------------------------------

std::string interval_table_json(const IntervalTable& table) {
    JsonWriter out(2);
    out.begin_object();
    out.field("schema_version", int64_t{2}).field("name", "cross-source");
    out.field("source", "trainclock validate --cross-source over presets/validation (sets public, public-2, vtrain): "
                        "each case predicted at the constants refitted without its source family");
    out.field("notes", "rows: per group (framework|GPU generation|precision family; '*' = any; groups with fewer than 5 "
                       "cases left out), low/high = the ends of the likely range as multiples of the estimate (measured / "
                       "predicted time): the shortest range around the estimate (low <= 1 <= high) holding 80 % of the "
                       "group's cross-source residuals per case and with each source family weighing as one witness, at "
                       "most 85 % of the cases (docs/DESIGN.md 3.1). widening: per axis, the factor (low / factor, high * factor) that "
                       "brought the cases of each "
                       "left-out family that had no validation case with their value on that axis to 80 % coverage. "
                       "evidence: the validated cases per combination of axis values. Regenerate: trainclock validate "
                       "--cross-source --write-intervals presets/intervals/cross-source.json");
    out.object_array("rows", table.rows, [&](const IntervalRow& row) {
        out.field("group", row.group).field("cases", row.cases).field("families", row.families);
        out.field("low", row.low).field("high", row.high);
    });
    out.object_array("widening", table.widening, [&](const IntervalWidening& w) {
        out.field("axis", w.axis).field("factor", w.factor).field("cases", w.cases).field("families", w.families);
    });
    out.object_array("evidence", table.evidence, [&](const IntervalEvidence& e) {
        for (size_t a = 0; a < kIntervalAxisCount; ++a) out.field(kAxisNames[a], e.axes[a]);
        out.field("cases", e.cases);
        out.key("families").begin_array();
        for (const std::string& family : e.families) out.value(family);
        out.end_array();
    });
    out.end_object();
    return out.take() + "\n";
}

Result<IntervalTable> parse_interval_table(std::string_view json) {
    simdjson::dom::parser parser;
    simdjson::dom::element document;
    if (parser.parse(json.data(), json.size()).get(document) != simdjson::SUCCESS) return Error{"", "not JSON"};
    int64_t version = 0;
    if (document["schema_version"].get_int64().get(version) != simdjson::SUCCESS || version != 2)
        return Error{"schema_version", "expected 2 (regenerate: trainclock validate --cross-source --write-intervals FILE)"};
    IntervalTable table;
    simdjson::dom::array array;
    if (document["rows"].get_array().get(array) != simdjson::SUCCESS) return Error{"rows", "expected an array"};
    for (const auto element : array) {
        IntervalRow row;
        std::string_view group;
        const bool complete = element["group"].get_string().get(group) == simdjson::SUCCESS &&
                              element["cases"].get_int64().get(row.cases) == simdjson::SUCCESS &&
                              element["families"].get_int64().get(row.families) == simdjson::SUCCESS &&
                              element["low"].get_double().get(row.low) == simdjson::SUCCESS &&
                              element["high"].get_double().get(row.high) == simdjson::SUCCESS;
        if (!complete) return Error{"rows", "each row needs group, cases, families, low and high"};
        row.group = std::string(group);
        table.rows.push_back(std::move(row));
    }
    if (document["widening"].get_array().get(array) != simdjson::SUCCESS) return Error{"widening", "expected an array"};
    for (const auto element : array) {
        IntervalWidening w;
        std::string_view axis;
        const bool complete = element["axis"].get_string().get(axis) == simdjson::SUCCESS &&
                              element["factor"].get_double().get(w.factor) == simdjson::SUCCESS &&
                              element["cases"].get_int64().get(w.cases) == simdjson::SUCCESS &&
                              element["families"].get_int64().get(w.families) == simdjson::SUCCESS;
        if (!complete) return Error{"widening", "each entry needs axis, factor, cases and families"};
        w.axis = std::string(axis);
        table.widening.push_back(std::move(w));
    }
    if (document["evidence"].get_array().get(array) != simdjson::SUCCESS) return Error{"evidence", "expected an array"};
    for (const auto element : array) {
        IntervalEvidence e;
        for (size_t a = 0; a < kIntervalAxisCount; ++a) {
            std::string_view value;
            if (element[kAxisNames[a]].get_string().get(value) != simdjson::SUCCESS)
                return Error{"evidence." + std::string(kAxisNames[a]), "expected a string"};
            e.axes[a] = std::string(value);
        }
        simdjson::dom::array families;
        if (element["cases"].get_int64().get(e.cases) != simdjson::SUCCESS ||
            element["families"].get_array().get(families) != simdjson::SUCCESS)
            return Error{"evidence", "each entry needs cases and families"};
        for (const auto family : families) {
            std::string_view name;
            if (family.get_string().get(name) == simdjson::SUCCESS) e.families.emplace_back(name);
        }
        table.evidence.push_back(std::move(e));
    }
    return table;
}

const IntervalTable& embedded_interval_table() {
    static const IntervalTable table = [] {
        for (const auto& preset : embedded_presets()) {
            if (preset.kind != PresetKind::interval) continue;
            Result<IntervalTable> parsed = parse_interval_table(preset.json);
            if (parsed) return parsed.value();
        }
        return IntervalTable{};
    }();
    return table;
}

// [SECTION] Lookup: the row, the nearest evidence, the widening, the reason -----------------------

namespace {

const IntervalRow* find_row(const IntervalTable& table, const std::vector<std::string>& groups) {
    for (const std::string& group : groups)
        for (const IntervalRow& row : table.rows)
            if (row.group == group) return &row;
    return nullptr;
}

// "on a blackwell GPU (gb300)", "with framework jax", "at 513-4096 GPUs", "with MoE", ...
std::string axis_phrase(size_t axis, const std::string& value, std::string_view gpu_name) {
    switch (static_cast<IntervalAxis>(axis)) {
    case IntervalAxis::gpu_generation: return "on " + (gpu_name.empty() ? value : std::string(gpu_name) + " (" + value + ")");
    case IntervalAxis::framework: return "with " + value;
    case IntervalAxis::scale_gpus: return "at " + value + " GPUs";
    case IntervalAxis::moe: return value == "moe" ? "with MoE" : "dense";
    case IntervalAxis::finetune: return value == "full" ? "pre-training" : "with " + value + " fine-tuning";
    case IntervalAxis::precision_family: return "in " + value;
    }
    return value;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? std::string(separator) : "") + items[i];
    return out;
}

std::string fixed(double value, int digits) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

}  // namespace

std::optional<LikelyInterval> likely_interval(const IntervalTable& table, const std::vector<std::string>& groups, const IntervalAxes& axes,
                                              std::string_view gpu_name) {
    const IntervalRow* row = find_row(table, groups);
    if (!row) return std::nullopt;
    LikelyInterval out;
    out.row = *row;
    // The nearest evidence (combinations of >= kMinIntervalCases cases): the fewest differing axes,
    // then the most cases (then the first).
    const IntervalEvidence* nearest = nullptr;
    size_t nearest_distance = kIntervalAxisCount + 1;
    for (const IntervalEvidence& e : table.evidence) {
        if (e.cases < kMinIntervalCases) continue;  // a combination of a handful of runs is no evidence yet
        size_t distance = 0;
        for (size_t a = 0; a < kIntervalAxisCount; ++a) distance += e.axes[a] != axes[a];
        if (distance < nearest_distance || (distance == nearest_distance && nearest && e.cases > nearest->cases)) {
            nearest = &e;
            nearest_distance = distance;
        }
    }
    std::vector<std::string> missing;  // phrases of the config's values the nearest evidence lacks
    if (nearest) {
        out.nearest_cases = nearest->cases;
        out.nearest_families = nearest->families;
        for (size_t a = 0; a < kIntervalAxisCount; ++a) {
            if (nearest->axes[a] == axes[a]) continue;
            out.widened_by.emplace_back(kAxisNames[a]);
            missing.push_back(axis_phrase(a, axes[a], gpu_name));
            for (const IntervalWidening& w : table.widening)
                if (w.axis == kAxisNames[a]) out.widening = std::max(out.widening, w.factor);
        }
    }
    out.low = row->low / out.widening;
    out.high = row->high * out.widening;
    out.reason = "80 % range from " + std::to_string(row->cases) + " cross-source errors of " + std::to_string(row->families) +
                 (row->families == 1 ? " source family" : " source families") + " (group " + row->group + ")";
    if (!nearest) return out;
    const std::string nearest_text =
        std::to_string(nearest->cases) + (nearest->cases == 1 ? " case" : " cases") + " of " + join(nearest->families, ", ");
    if (missing.empty()) {
        out.reason += "; validated on " + nearest_text + " with this GPU generation, framework, scale, MoE, fine-tuning and precision";
    } else {
        out.reason += "; no validation case " + join(missing, " ") + ": widened x" + fixed(out.widening, 2) + " (nearest: " + nearest_text +
                      ", differing in " + join(out.widened_by, ", ") + ")";
    }
    return out;
}

std::optional<LikelyInterval> likely_interval(const Config& config) {
    return likely_interval(embedded_interval_table(), interval_groups(config), interval_axes(config), config.gpu.name);
}

const IntervalRow* find_interval(const Config& config) { return find_row(embedded_interval_table(), interval_groups(config)); }

// [SECTION] Widening calibrated on the folds, and coverage --------------------------------------

namespace {

std::vector<std::string> families_of(const std::vector<IntervalResidual>& residuals) {
    std::set<std::string> families;
    for (const IntervalResidual& r : residuals) families.insert(r.family);
    return {families.begin(), families.end()};
}

// Each case against the base table of the other families (no widening): its range and the axes
// its nearest evidence there differs in.
struct FoldCase {
    size_t index = 0;
    double ratio = 1, low = 1, high = 1;
    std::vector<size_t> missing;  // axes
};
std::vector<FoldCase> fold_cases(const std::vector<IntervalResidual>& residuals) {
    std::vector<FoldCase> out;
    for (const std::string& family : families_of(residuals)) {
        std::vector<IntervalResidual> others;
        for (const IntervalResidual& r : residuals)
            if (r.family != family) others.push_back(r);
        const IntervalTable base = interval_table_base(others);
        for (size_t i = 0; i < residuals.size(); ++i) {
            if (residuals[i].family != family) continue;
            const std::optional<LikelyInterval> interval = likely_interval(base, residuals[i].groups, residuals[i].axes);
            if (!interval) continue;
            FoldCase c{i, residuals[i].ratio, interval->low, interval->high, {}};
            for (const std::string& axis : interval->widened_by)
                for (size_t a = 0; a < kIntervalAxisCount; ++a)
                    if (axis == kAxisNames[a]) c.missing.push_back(a);
            out.push_back(std::move(c));
        }
    }
    return out;
}

double widening_of(const FoldCase& c, const std::array<double, kIntervalAxisCount>& factors) {
    double f = 1;
    for (size_t a : c.missing) f = std::max(f, factors[a]);
    return f;
}

bool inside(double ratio, double low, double high) { return ratio >= low * (1 - 1e-9) && ratio <= high * (1 + 1e-9); }

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const size_t mid = values.size() / 2;
    return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

}  // namespace

IntervalTable interval_table(const std::vector<IntervalResidual>& residuals) {
    IntervalTable table = interval_table_base(residuals);
    const std::vector<FoldCase> folds = fold_cases(residuals);
    std::array<double, kIntervalAxisCount> factors;
    factors.fill(1.0);
    std::array<std::vector<const FoldCase*>, kIntervalAxisCount> lacking;
    for (const FoldCase& c : folds)
        for (size_t a : c.missing) lacking[a].push_back(&c);
    // Each axis's factor: the smallest (steps of 0.01, at most 4) that holds kIntervalCoverage of the
    // fold cases lacking that axis, per case and per family (a case takes its largest axis's factor);
    // a few passes, since the factors of a case's other axes move.
    for (int pass = 0; pass < 4; ++pass) {
        for (size_t a = 0; a < kIntervalAxisCount; ++a) {
            if (lacking[a].empty()) continue;
            std::map<std::string, double> per_family;
            for (const FoldCase* c : lacking[a]) per_family[residuals[c->index].family] += 1;
            const double n = static_cast<double>(lacking[a].size()), families = static_cast<double>(per_family.size());
            for (double f = 1.0; f <= 4.0 + 1e-9; f += 0.01) {
                std::array<double, kIntervalAxisCount> trial = factors;
                trial[a] = f;
                double by_case = 0, by_family = 0;
                for (const FoldCase* c : lacking[a]) {
                    const double w = widening_of(*c, trial);
                    if (!inside(c->ratio, c->low / w, c->high * w)) continue;
                    by_case += 1.0 / n;
                    by_family += 1.0 / (families * per_family[residuals[c->index].family]);
                }
                factors[a] = std::round(f * 100.0) / 100.0;
                if (by_case >= kIntervalCoverage - 1e-9 && by_family >= kIntervalCoverage - 1e-9) break;
            }
        }
    }
    double largest = 1;
    for (size_t a = 0; a < kIntervalAxisCount; ++a)
        if (!lacking[a].empty()) largest = std::max(largest, factors[a]);
    for (size_t a = 0; a < kIntervalAxisCount; ++a) {
        std::set<std::string> families;
        for (const FoldCase* c : lacking[a]) families.insert(residuals[c->index].family);
        // An axis never missing in a fold has no calibration: it takes the largest calibrated factor.
        table.widening.push_back({std::string(kAxisNames[a]), lacking[a].empty() ? largest : factors[a],
                                  static_cast<int64_t>(lacking[a].size()), static_cast<int64_t>(families.size())});
    }
    return table;
}

const CoverageGroup* IntervalCoverage::find(const std::vector<CoverageGroup>& groups, std::string_view kind, std::string_view name) const {
    for (const CoverageGroup& g : groups)
        if (g.kind == kind && g.name == name) return &g;
    return nullptr;
}

IntervalCoverage interval_coverage(const std::vector<IntervalResidual>& residuals, const IntervalTable& table) {
    struct Tally {
        int64_t cases = 0, inside = 0;
        std::vector<double> widths, ratios;
        std::map<std::string, std::pair<int64_t, int64_t>> families;  // family -> cases, inside
    };
    using Tallies = std::map<std::pair<std::string, std::string>, Tally>;
    const auto add = [](Tallies& tallies, const std::string& row, const std::string& family, bool in, double width, double ratio) {
        for (const auto& key : {std::pair<std::string, std::string>{"all", "all"}, {"group", row}, {"family", family}}) {
            Tally& t = tallies[key];
            ++t.cases;
            t.inside += in;
            t.widths.push_back(width);
            t.ratios.push_back(ratio);
            auto& f = t.families[family];
            ++f.first;
            f.second += in;
        }
    };
    const auto finish = [](const Tallies& tallies) {
        std::vector<CoverageGroup> out;
        for (const char* kind : {"all", "group", "family"})
            for (const auto& [key, t] : tallies)
                if (key.first == kind) {
                    double by_family = 0;
                    for (const auto& [family, f] : t.families)
                        by_family += static_cast<double>(f.second) / static_cast<double>(f.first) / static_cast<double>(t.families.size());
                    out.push_back({key.first, key.second, t.cases, static_cast<double>(t.inside) / static_cast<double>(t.cases), by_family,
                                   median(t.widths), median(t.ratios) - 1.0});
                }
        return out;
    };
    IntervalCoverage coverage;
    Tallies cross, held;
    for (const IntervalResidual& r : residuals) {
        const std::optional<LikelyInterval> interval = likely_interval(table, r.groups, r.axes);
        if (interval)
            add(cross, interval->row.group, r.family, inside(r.ratio, interval->low, interval->high), interval->high - interval->low,
                r.ratio);
    }
    std::array<double, kIntervalAxisCount> factors;
    factors.fill(1.0);
    for (size_t a = 0; a < table.widening.size() && a < kIntervalAxisCount; ++a) factors[a] = table.widening[a].factor;
    for (const FoldCase& c : fold_cases(residuals)) {
        const double w = widening_of(c, factors);
        const IntervalResidual& r = residuals[c.index];
        const std::optional<LikelyInterval> own = likely_interval(table, r.groups, r.axes);  // group name as in cross
        add(held, own ? own->row.group : "-", r.family, inside(c.ratio, c.low / w, c.high * w), c.high * w - c.low / w, r.ratio);
    }
    coverage.cross_source = finish(cross);
    coverage.held_out = finish(held);
    return coverage;
}

}  // namespace trainclock
