// `trainclock link encode|decode`: config <-> shareable URL fragment (the web app's #v=1&m=...).
#include <iostream>

#include "cli_common.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/link.hpp"

namespace trainclock::cli {
namespace {

int run(const Args& args) {
    const auto& positionals = args.positionals();
    const std::string action = positionals.empty() ? "" : positionals[0];
    if (action == "encode") {
        if (positionals.size() > 1) return report_error({positionals[1], "unexpected argument"});
        if (args.has("--pinned")) return report_error({"--pinned", "used by `link decode` only"});
        auto config = config_from_args(args);
        if (!config) return report_error(config.error());
        std::cout << encode_config_link(config.value()) << "\n";
        return kExitOk;
    }
    if (action == "decode") {
        if (positionals.size() != 2) return report_error({"link decode", "needs one FRAGMENT (quote it: it contains '&')"});
        for (const auto& [flag, value] : args.flags()) {
            if (flag != "--help" && flag != "--pinned") return report_error({flag, "not used by `link decode`"});
        }
        // The page's A/B link carries A as "&pin=<base64url fragment>" (web/panels_compare.cpp).
        auto parts = split_pinned_link(positionals[1]);
        if (!parts) return report_error(parts.error());
        const bool pinned = args.has("--pinned");
        if (pinned && !parts.value().pinned) return report_error({"--pinned", "the link pins no configuration (no pin= field)"});
        auto config = decode_config_link(pinned ? *parts.value().pinned : parts.value().current);
        if (!config) {
            const Error& error = config.error();
            return report_error(pinned ? Error{"pin: " + error.key, error.message} : error);
        }
        if (parts.value().pinned && !pinned)
            std::cerr << "trainclock: note: the link also pins a configuration A (the page's A/B comparison): "
                         "`link decode --pinned` prints it\n";
        std::cout << config_to_json(config.value());
        return kExitOk;
    }
    return report_error({"link", action.empty() ? "needs encode or decode" : "unknown action '" + action + "' (encode or decode)"});
}

const CommandRegistrar registrar({
    "link",
    "config <-> shareable link fragment (the web calculator's URL)",
    "trainclock link encode [config flags]\n       trainclock link decode 'v=1&m=...' [--pinned]",
    "encode prints the fragment of a config (only non-default values; custom objects as ~base64url JSON);\n"
    "decode prints the config/v1 JSON of a fragment, a '#fragment' or a whole URL. A link of the page's\n"
    "A/B comparison (...&pin=A) decodes to B, the state the page shows; --pinned prints A.",
    {{"--pinned", "", "decode: print the pinned configuration (A) of an A/B link instead"}},
    true,
    run,
});

}  // namespace
}  // namespace trainclock::cli
