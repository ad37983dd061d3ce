// trainclock: the flat config field table (read from presets/tables/config-fields.json) and the
// did-you-mean (names.hpp).
#include "trainclock/base/names.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <utility>

#include <simdjson.h>

#include "trainclock/base/embedded.hpp"

namespace trainclock {

namespace {

constexpr std::pair<std::string_view, FieldType> kFieldTypes[] = {
    {"spec", FieldType::spec},     {"integer", FieldType::integer}, {"number", FieldType::number}, {"boolean", FieldType::boolean},
    {"choice", FieldType::choice}, {"object", FieldType::object},   {"text", FieldType::text}};

// The embedded table is part of the build, so a malformed one is a defect of the build, not bad input.
[[noreturn]] void broken_table(std::string_view why) {
    std::fprintf(stderr, "trainclock: presets/tables/config-fields.json: %.*s\n", static_cast<int>(why.size()), why.data());
    std::abort();
}

// One string key of a field row.
std::string_view text(simdjson::dom::object row, std::string_view key) {
    std::string_view value;
    if (row[key].get_string().get(value) != simdjson::SUCCESS) broken_table(std::string(key) + ": expected a string");
    return value;
}

}  // namespace

// presets/tables/config-fields.json, parsed at first use; its strings stay in the parser's buffer,
// which parses nothing else.
const std::vector<ConfigField>& config_fields() {
    static simdjson::dom::parser parser;
    static const std::vector<ConfigField> fields = [] {
        const std::string_view json = embedded_json(PresetKind::table, "config-fields");
        simdjson::dom::array rows;
        if (parser.parse(json.data(), json.size(), true).get_object()["fields"].get_array().get(rows) != simdjson::SUCCESS)
            broken_table("expected an object with a \"fields\" array");
        std::vector<ConfigField> out;
        for (const simdjson::dom::element element : rows) {
            simdjson::dom::object row;
            if (element.get_object().get(row) != simdjson::SUCCESS) broken_table("fields: expected objects");
            const std::string_view type = text(row, "type");
            const auto found =
                std::find_if(std::begin(kFieldTypes), std::end(kFieldTypes), [&](const auto& entry) { return entry.first == type; });
            if (found == std::end(kFieldTypes)) broken_table("unknown type '" + std::string(type) + "'");
            out.push_back({text(row, "link_key"), text(row, "flag"), text(row, "path"), found->second, text(row, "help")});
        }
        return out;
    }();
    return fields;
}

const ConfigField* find_field_by_link_key(std::string_view key) {
    for (const ConfigField& field : config_fields()) {
        if (!field.link_key.empty() && field.link_key == key) return &field;
    }
    return nullptr;
}

const ConfigField* find_field_by_flag(std::string_view flag) {
    for (const ConfigField& field : config_fields()) {
        if (field.flag == flag) return &field;
    }
    return nullptr;
}

namespace {

// ASCII lower case: std::tolower of the "C" locale, which trainclock never changes.
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Levenshtein distance of two lower-cased texts (Wagner & Fischer 1974, two-row form). A row's
// minimum never decreases, so past `limit` it stops and returns limit + 1 (the caller only needs
// distances up to limit: a long unknown key costs no more than a short one).
size_t edit_distance(std::string_view a, std::string_view b, size_t limit, std::vector<size_t>& previous, std::vector<size_t>& current) {
    previous.resize(b.size() + 1);
    current.resize(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        size_t row_min = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            row_min = std::min(row_min, current[j]);
        }
        if (row_min > limit) return limit + 1;
        std::swap(previous, current);
    }
    return previous[b.size()];
}

}  // namespace

// The closest candidates, or "" when none is close: a candidate containing the wanted text
// ("h100" -> "h100-sxm") scores 1, otherwise 2 per edit, accepted up to max(2, length / 3) edits.
// Ties are listed: "h100-nvl, h100-pcie or h100-sxm".
std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates) {
    if (wanted.empty()) return "";
    size_t best_score = 2 * std::max<size_t>(2, wanted.size() / 3) + 1;
    std::vector<std::string> best;
    std::string wanted_lower(wanted), candidate_lower;
    std::transform(wanted_lower.begin(), wanted_lower.end(), wanted_lower.begin(), lower);
    std::vector<size_t> previous, current;  // edit_distance's rows, reused
    for (const std::string& candidate : candidates) {
        const bool contains = wanted.size() >= 3 && candidate.find(wanted) != std::string::npos;
        // The distance is at least the length difference: skip the quadratic count when that
        // alone is past the best score (same answer; a long unknown key costs no more than a short one).
        const size_t gap = wanted.size() > candidate.size() ? wanted.size() - candidate.size() : candidate.size() - wanted.size();
        if (2 * gap > best_score && !contains) continue;
        size_t score = 1;
        if (2 * gap <= best_score) {
            candidate_lower.assign(candidate);
            std::transform(candidate_lower.begin(), candidate_lower.end(), candidate_lower.begin(), lower);
            score = 2 * edit_distance(wanted_lower, candidate_lower, best_score / 2, previous, current);
        }
        if (contains) score = std::min<size_t>(score, 1);
        if (score < best_score) {
            best_score = score;
            best.clear();
        }
        if (score == best_score && std::find(best.begin(), best.end(), candidate) == best.end()) best.push_back(candidate);
    }
    std::string joined;
    const size_t shown = std::min<size_t>(best.size(), 3);
    for (size_t i = 0; i < shown; ++i) joined += (i == 0 ? "" : i + 1 == shown ? " or " : ", ") + best[i];
    return joined;
}

}  // namespace trainclock
