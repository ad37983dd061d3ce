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
        auto config = config_from_args(args);
        if (!config) return report_error(config.error());
        std::cout << encode_config_link(config.value()) << "\n";
        return kExitOk;
    }
    if (action == "decode") {
        if (positionals.size() != 2) return report_error({"link decode", "needs one FRAGMENT (quote it: it contains '&')"});
        for (const auto& [flag, value] : args.flags()) {
            if (flag != "--help") return report_error({flag, "not used by `link decode`"});
        }
        auto config = decode_config_link(positionals[1]);
        if (!config) return report_error(config.error());
        std::cout << config_to_json(config.value());
        return kExitOk;
    }
    return report_error({"link", action.empty() ? "needs encode or decode" : "unknown action '" + action + "' (encode or decode)"});
}

const CommandRegistrar registrar({
    "link",
    "config <-> shareable link fragment (the web calculator's URL)",
    "trainclock link encode [config flags]\n       trainclock link decode 'v=1&m=...'",
    "encode prints the fragment of a config (only non-default values; custom objects as ~base64url JSON);\n"
    "decode prints the config/v1 JSON of a fragment, a '#fragment' or a whole URL.",
    {},
    true,
    run,
});

}  // namespace
}  // namespace trainclock::cli
