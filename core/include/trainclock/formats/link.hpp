// trainclock: shareable links (the URL fragment "v=2&m=llama3-70b&g=h100-sxm&N=1024&...") and the
// flat config fields they share with the CLI flags (--model, --tp, ...). DESIGN.md 3.
//
// Fragment grammar: "key=value" pairs joined by '&', optionally after '#' or a whole URL. Keys are
// the `link_key`s of config_fields(); only values that differ from the defaults are written (plus
// v, m, g, N, p and fw always). Presets appear by id; inline objects (a custom model, GPU, node, precision,
// or a calibration) as '~' followed by the base64url (RFC 4648 section 5, unpadded) of their JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainclock/base/names.hpp"
#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock {

// 2: the default framework became kDefaultFramework (model/framework.hpp) and links always carry
// "fw"; a version-1 link without "fw" decodes with framework "none", the default when it was made.
inline constexpr int kLinkVersion = 2;
inline constexpr int kLinkVersionFrameworkDefault = 2;  // the first version whose links always carry "fw"

// Sets one field from its text form (what a link or a flag carries): a preset id or '~'+base64url
// JSON or raw JSON for specs/objects; integers; numbers; 1/0/true/false for booleans.
// Errors are keyed by `error_key` (the flag or link key) for unreadable text, else by config path.
Result<Config> set_config_field(Config base, const ConfigField& field, std::string_view text, std::string_view error_key);

std::string encode_config_link(const Config& config);          // of a validated config
Result<Config> decode_config_link(std::string_view fragment);  // validated; errors name the link key

// The page's A/B link: its own fragment plus "&pin=" and the base64url of the pinned (A) fragment
// (web/panels_compare.cpp). `current` is the fragment without the pin (B, what the page shows).
struct PinnedLink {
    std::string current;
    std::optional<std::string> pinned;  // A's fragment; nullopt when the link pins nothing
};
Result<PinnedLink> split_pinned_link(std::string_view link);  // errors: key "pin"

std::string base64url_encode(std::string_view bytes);
Result<std::string> base64url_decode(std::string_view text);  // error key ""

}  // namespace trainclock
