// trainclock: enum spellings by config key (spellings.hpp).
#include "trainclock/model/spellings.hpp"

namespace trainclock {

namespace {

template <class E>
std::vector<std::string_view> names_in_order(const Spellings<E>& spellings) {
    std::vector<std::string_view> out(spellings.count);
    for (size_t i = 0; i < spellings.count; ++i) out[static_cast<size_t>(spellings.names[i].value)] = spellings.names[i].name;
    return out;
}

}  // namespace

std::string_view fp8_recipe_name(Fp8Recipe value) { return enum_name(value); }
std::string_view gpu_generation_name(GpuGeneration value) { return enum_name(value); }

std::vector<std::string_view> enum_names(std::string_view path) {
    std::vector<std::string_view> out;
    if (path.empty()) return out;  // "" marks a table no config key reads
    std::apply([&](const auto&... spellings) { ((spellings.path == path ? void(out = names_in_order(spellings)) : void()), ...); },
               kSpellings);
    return out;
}

}  // namespace trainclock
