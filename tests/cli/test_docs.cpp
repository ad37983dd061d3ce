// Every example of README.md and docs/*.md runs as documented (issue 12): read from the markdown
// at test time, so an edited or added example is covered without touching this file.
//   ```sh blocks: each `build/bin/trainclock ...` or `trainclock ...` line (with `\` continuations,
//     `|` pipes between trainclock commands; a trailing `# ...` is a comment) must exit 0, or as a
//     following `# exit N: <stderr line>` comment says; `make ...` lines are the Makefile's targets
//     (CI runs them) and are skipped; `PYTHONPATH=build/python python3 ...` lines run from the source
//     folder when this build has the Python module; `python3|torchrun ... tools/X.py` (scripts that need a
//     GPU and torch) must at least compile (py_compile); any other line fails. Files the examples name
//     are the test fixtures of kExampleFiles.
//   ```json blocks: `//` comments dropped, each must load as a config (`predict --config FILE`);
//     a block whose lead-in names `FILE.json` is saved under that name for the commands.
//   inline `{"...` spans: JSON objects shown in the text; each must be a calibration the CLI accepts.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

using namespace cli_test;

namespace {

// The files the examples read, as the importer tests' real fixtures (tests/core/hf, tests/core/launch).
const std::pair<const char*, const char*> kExampleFiles[] = {
    {"config.json", "tests/core/hf/llama3-8b.json"},
    {"train_cmd.txt", "tests/core/launch/megatron-llama3-8b-h100-fp8.txt"},
    {"llama3_70b.toml", "tests/core/launch/torchtitan-llama3-70b.toml"},
    {"ds_config.json", "tests/core/launch/deepspeed-zero3.json"},
    {"calib.json", "tests/fuzz/seeds/calibration/readme-example.json"},
    {"runs.json", "docs/examples/calibrate-llm-foundry-h100.json"},
    {"measurements.json", "python/tests/data/measure-gpu-cpu-mode.json"},  // tools/measure_gpu.py --cpu output
    {"docs/examples/calibrate-llm-foundry-h100.json", "docs/examples/calibrate-llm-foundry-h100.json"},
};

struct Block {
    std::string language;  // "sh", "json", ...
    std::string text;
    std::string lead_in;  // the lines before the fence, since the previous block
};

struct Doc {
    std::string name;  // "README.md", "docs/DESIGN.md"
    std::vector<Block> blocks;
    std::string prose;  // the text outside code blocks
};

std::vector<Doc> docs() {
    namespace fs = std::filesystem;
    const fs::path root(TRAINCLOCK_SOURCE_DIR);
    std::vector<fs::path> paths = {root / "README.md"};
    for (const auto& entry : fs::directory_iterator(root / "docs")) {
        if (entry.path().extension() == ".md") paths.push_back(entry.path());
    }
    std::vector<Doc> out;
    for (const fs::path& path : paths) {
        Doc doc;
        doc.name = fs::relative(path, root).string();
        std::istringstream in(slurp(path.string()));
        std::string line, lead_in;
        Block* open = nullptr;
        for (int number = 1; std::getline(in, line); ++number) {
            if (line.rfind("```", 0) == 0) {
                if (open) {
                    open = nullptr;
                } else {
                    doc.blocks.push_back({line.substr(3), "", lead_in});
                    open = &doc.blocks.back();
                    lead_in.clear();
                }
                continue;
            }
            if (open)
                open->text += line + "\n";
            else
                lead_in += line + "\n", doc.prose += line + "\n";
        }
        out.push_back(std::move(doc));
    }
    return out;
}

// JSON with `// ...` comments (DESIGN.md's annotated example) as plain JSON.
std::string drop_comments(const std::string& text) {
    std::string out;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\' && i + 1 < text.size())
                out += text[i++];
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            while (i < text.size() && text[i] != '\n') ++i;
            out += '\n';
            continue;
        }
        out += c;
    }
    return out;
}

// A shell line without its trailing comment (a '#' after a blank, outside quotes).
std::string without_comment(const std::string& line) {
    char quote = 0;
    for (size_t i = 0; i < line.size(); ++i) {
        if (quote) {
            if (line[i] == quote) quote = 0;
        } else if (line[i] == '\'' || line[i] == '"') {
            quote = line[i];
        } else if (line[i] == '#' && (i == 0 || line[i - 1] == ' ')) {
            std::string kept = line.substr(0, i);
            while (!kept.empty() && kept.back() == ' ') kept.pop_back();
            return kept;
        }
    }
    return line;
}

// A documented command line with each `trainclock` / `build/bin/trainclock` of a pipeline replaced
// by the binary under test; "" when it is not a trainclock command.
std::string runnable(const std::string& command) {
    std::string out;
    size_t start = 0;
    while (start <= command.size()) {
        const size_t bar = std::min(command.find(" | ", start), command.size());
        std::string part = command.substr(start, bar - start);
        part.erase(0, part.find_first_not_of(' '));
        bool matched = false;
        for (const std::string prefix : {"build/bin/trainclock ", "trainclock "}) {
            if (part.rfind(prefix, 0) == 0) {
                out += (out.empty() ? "" : " | ") + ("'" + cli_path() + "' ") + part.substr(prefix.size());
                matched = true;
                break;
            }
        }
        if (!matched) return "";
        start = bar + 3;
    }
    return out;
}

struct Example {
    std::string where;    // "README.md: build/bin/trainclock presets gpus"
    std::string command;  // the shell command line to run
    int exit_code = 0;
    std::string error_line;  // expected stderr when documented
};

}  // namespace

TEST_CASE("every command and JSON example of README.md and docs/ runs as documented", "[docs]") {
    const std::string dir = work_path("docs");
    std::filesystem::create_directories(dir);
    for (const auto& [name, fixture] : kExampleFiles) {
        std::filesystem::create_directories(std::filesystem::path(dir + "/" + name).parent_path());
        std::ofstream(dir + "/" + name) << slurp(std::string(TRAINCLOCK_SOURCE_DIR) + "/" + fixture);
    }
    std::vector<Example> examples;
    size_t json_blocks = 0, inline_objects = 0;
    for (const Doc& doc : docs()) {
        for (const Block& block : doc.blocks) {
            if (block.language != "json") continue;
            const std::string json = drop_comments(block.text);
            std::smatch name;
            const std::string file = std::regex_search(block.lead_in, name, std::regex("`([A-Za-z0-9_.-]+\\.json)`"))
                                         ? name[1].str()
                                         : "block" + std::to_string(json_blocks) + ".json";
            std::ofstream(dir + "/" + file) << json;
            INFO(doc.name << ": the json block saved as " << file << ":\n" << json);
            const Run run = trainclock("predict --config '" + file + "'", "", dir);
            CHECK(run.exit_code == 0);
            CHECK(run.err.empty());
            INFO(run.err);
            ++json_blocks;
        }
        for (const Block& block : doc.blocks) {
            if (block.language != "sh") continue;
            std::istringstream in(block.text);
            std::string line, command;
            while (std::getline(in, line)) {
                const size_t first = line.find_first_not_of(' ');
                if (first == std::string::npos) continue;
                line = line.substr(first);
                std::smatch expected;
                if (std::regex_match(line, expected, std::regex("# exit ([0-9]+)(: (.*))?"))) {
                    REQUIRE_FALSE(examples.empty());
                    examples.back().exit_code = std::stoi(expected[1].str());
                    examples.back().error_line = expected[3].str();
                    continue;
                }
                command += without_comment(line);
                if (!command.empty() && command.back() == '\\') {
                    command.pop_back();
                    continue;
                }
                const std::string line_to_run = runnable(command);
                const std::string python = "PYTHONPATH=build/python ";
                if (!line_to_run.empty()) {
                    examples.push_back({doc.name + ": " + command, line_to_run, 0, ""});
                } else if (command.rfind(python, 0) == 0) {
                    // The module of the build under test (the sanitizer build has none).
                    const std::string build = std::filesystem::path(cli_path()).parent_path().parent_path().string();
                    bool module = false;
                    std::error_code ignored;
                    for (const auto& entry : std::filesystem::directory_iterator(build + "/python/trainclock", ignored))
                        module = module || entry.path().filename().string().rfind("_trainclock", 0) == 0;
                    if (module) {
                        examples.push_back(
                            {doc.name + ": " + command, "PYTHONPATH='" + build + "/python' " + command.substr(python.size()), 0, ""});
                    } else {
                        WARN(doc.name << ": no Python module in " << build << ", not run: " << command);
                    }
                } else if (std::smatch tool;
                           std::regex_search(command, tool, std::regex("^(python3|torchrun) .*(tools/[A-Za-z0-9_]+\\.py)"))) {
                    examples.push_back(
                        {doc.name + ": " + command, "cd '" TRAINCLOCK_SOURCE_DIR "' && python3 -m py_compile " + tool[2].str(), 0, ""});
                } else if (command.rfind("make ", 0) != 0) {
                    FAIL(doc.name << ": an example this test cannot run: " << command);
                }
                command.clear();
            }
        }
        // Inline JSON objects of the prose are calibration examples.
        const std::regex span("`(\\{\"[^`]*)`");
        for (auto it = std::sregex_iterator(doc.prose.begin(), doc.prose.end(), span); it != std::sregex_iterator(); ++it) {
            const std::string json = (*it)[1].str();
            INFO(doc.name << ": inline JSON " << json);
            std::ofstream(dir + "/inline.json") << json;
            const Run run = trainclock("predict --model gpt2 --gpu h100-sxm --calibration inline.json", "", dir);
            CHECK(run.exit_code == 0);
            INFO(run.err);
            ++inline_objects;
        }
    }
    CHECK(json_blocks >= 2);      // README's config and DESIGN.md's annotated one
    CHECK(inline_objects >= 1);   // README's calibration example
    CHECK(examples.size() >= 9);  // README's CLI block and its error example
    for (const Example& example : examples) {
        INFO(example.where);
        const Run run = shell(example.command, "", dir);
        CHECK(run.exit_code == example.exit_code);
        INFO(run.err);
        if (!example.error_line.empty()) CHECK(run.err == example.error_line + "\n");
        if (example.exit_code == 0 && example.command.find("py_compile") == std::string::npos) CHECK_FALSE(run.out.empty());
    }
    std::filesystem::remove_all(dir);
}
