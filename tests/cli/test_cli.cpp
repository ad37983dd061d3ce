// End-to-end tests of build/bin/trainclock: exit codes, output formats, units, error lines.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_run.hpp"

using namespace cli_test;

namespace {

const std::string kDefault = "--model llama3-70b --gpu h100-sxm --gpus 1024 --precision bf16-mixed --tp 8 --pp 4 --seq 8192 --gbs 1024 "
                             "--mbs 1 --recompute selective --tokens 15e12";

}  // namespace

TEST_CASE("the version and help flags") {
    const Run version = trainclock("--version");
    CHECK(version.exit_code == 0);
    CHECK(version.out.rfind("trainclock ", 0) == 0);
    const Run help = trainclock("--help");
    CHECK(help.exit_code == 0);
    for (const char* command : {"predict", "compare", "presets", "link"}) {
        CHECK(has(help.out, std::string("  ") + command));
        const Run command_help = trainclock(std::string(command) + " --help");
        CHECK(command_help.exit_code == 0);
        CHECK(has(command_help.out, std::string("usage: trainclock ") + command));
    }
    CHECK(has(trainclock("predict --help").out, "--gpus N"));
    CHECK(trainclock("").exit_code == 2);  // no command: usage on stderr
}

TEST_CASE("predict prints a readable table with units") {
    const Run run = trainclock("predict " + kDefault);
    REQUIRE(run.exit_code == 0);
    CHECK(run.err.empty());
    for (const char* text : {"step time", "tokens/s", "TFLOP/s", "MFU", " %", "total time", "days", "GPU-h", "$", "Wh", "GiB", "capacity",
                             "step breakdown", "pipeline bubble", "precision overhead"}) {
        INFO(text);
        CHECK(has(run.out, text));
    }
    CHECK(has(run.out, "llama3-70b"));
    CHECK(has(run.out, "tp 8 x pp 4 x cp 1 x dp 32"));
}

TEST_CASE("predict prints the likely range with its reason, naming the axis that widened it") {
    const Run run = trainclock("predict --model llama3-70b --gpu gb300 --gpus 512 --precision bf16-mixed --framework torchtitan");
    REQUIRE(run.exit_code == 0);
    CHECK(has(run.out, "likely range: 80 % range from"));
    CHECK(has(run.out, "no validation case"));
    CHECK(has(run.out, "widened x"));
}

TEST_CASE("issue 10 layouts predict from the CLI: uneven stages, NVL72 trays, Blackwell Ultra, the whole run") {
    const std::string l405 = "predict --model llama3.1-405b --gpu h100-sxm --gpus 16384 --tp 8 --sp --zero 1 --seq 8192 --gbs 2048 "
                             "--recompute full --tokens 15.6e12";
    const Run pp16 = trainclock(l405 + " --pp 16 --first-stage-layers 7 --last-stage-layers 7 --json");
    REQUIRE(pp16.exit_code == 0);
    CHECK(has(pp16.out, "\"first_stage_layers\": 7"));
    CHECK(has(pp16.out, "\"goodput\": 0.9"));
    CHECK(has(pp16.out, "\"defaults\": ["));
    const Run vp8 = trainclock(l405 + " --pp 8 --vpp 8 --schedule interleaved --embedding-in-stage-split --loss-in-stage-split");
    CHECK(vp8.exit_code == 0);
    CHECK(has(vp8.out, "goodput"));
    const Run rejected = trainclock(l405 + " --pp 8 --vpp 8 --schedule interleaved");
    CHECK(rejected.exit_code == 2);
    CHECK(has(rejected.err, "parallel.first_stage_layers"));
    const Run ideal = trainclock(l405 + " --pp 16 --first-stage-layers 7 --last-stage-layers 7 --ideal --json");
    REQUIRE(ideal.exit_code == 0);
    CHECK(has(ideal.out, "\"goodput\": 1,"));
    for (const char* gpus : {"64", "128", "256", "512"}) {
        INFO(gpus);
        CHECK(trainclock(std::string("predict --model llama3-70b --gpu gb200 --tp 8 --gpus ") + gpus).exit_code == 0);
        CHECK(trainclock(std::string("predict --model llama3-70b --gpu gb300 --tp 8 --gpus ") + gpus).exit_code == 0);
    }
    const Run gb300 = trainclock("predict --model llama3-70b --gpu gb300 --gpus 64 --tp 8 --tokens 1e12 --json");
    REQUIRE(gb300.exit_code == 0);
    CHECK(has(gb300.out, "\"cost_usd\": null"));  // no published price (CoreWeave: contact sales): null, never $0
    CHECK(has(gb300.out, "cost unknown"));
}

TEST_CASE("the moe-dispatcher flag sets training.moe_dispatcher, and a bad value exits 2 naming the key") {
    const std::string base =
        "predict --model mixtral-8x7b --gpu h100-sxm --gpus 16 --ep 8 --framework megatron-core --seq 4096 --gbs 64 --json";
    const Run dflt = trainclock(base);
    const Run a2a = trainclock(base + " --moe-dispatcher alltoall");
    REQUIRE(dflt.exit_code == 0);
    REQUIRE(a2a.exit_code == 0);
    CHECK(has(dflt.out, "training.moe_dispatcher = allgather"));  // Megatron-Core's default, stated
    CHECK(has(a2a.out, "\"moe_dispatcher\": \"alltoall\""));
    CHECK(dflt.out != a2a.out);
    check_rejected(base + " --moe-dispatcher flex", "training.moe_dispatcher");
}

TEST_CASE("the cuda-graphs and compile flags set the training keys, and a bad value exits 2 naming the key") {
    const std::string base = "predict --model gpt2 --gpu h100-sxm --gpus 8 --framework torchtitan --seq 1024 --gbs 8 --json";
    const Run eager = trainclock(base);
    const Run graphs = trainclock(base + " --cuda-graphs full --compile");
    REQUIRE(eager.exit_code == 0);
    REQUIRE(graphs.exit_code == 0);
    CHECK(has(graphs.out, "\"cuda_graphs\": \"full\""));
    CHECK(has(graphs.out, "\"compile\": true"));
    CHECK(has(eager.out, "training.cuda_graphs = none"));  // the framework default, stated
    CHECK(has(eager.out, "training.compile = false"));
    CHECK(eager.out != graphs.out);
    const Run off = trainclock(base + " --compile --no-compile");
    REQUIRE(off.exit_code == 0);
    CHECK(has(off.out, "\"compile\": false"));
    check_rejected(base + " --cuda-graphs all", "training.cuda_graphs");
}

TEST_CASE("predict --json prints the result JSON with the config") {
    const Run run = trainclock("predict " + kDefault + " --json");
    REQUIRE(run.exit_code == 0);
    for (const char* key : {"schema", "iteration_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "samples_per_s", "model_tflops_per_gpu",
                            "hardware_tflops_per_gpu", "mfu", "steps", "total_time_s", "gpu_hours", "cost_usd", "energy_kwh", "memory",
                            "breakdown_s", "warnings", "config"}) {
        INFO(key);
        CHECK(has(run.out, std::string("\"") + key + "\": "));
    }
    CHECK(has(run.out, "\"schema\": \"trainclock/result/v1\""));
}

TEST_CASE("predict --csv prints a header and one row of the same width") {
    const Run run = trainclock("predict " + kDefault + " --csv");
    REQUIRE(run.exit_code == 0);
    REQUIRE(lines(run.out) == 2);
    const std::string header = run.out.substr(0, run.out.find('\n'));
    const std::string row = run.out.substr(header.size() + 1);
    CHECK(header.rfind("model,gpu,", 0) == 0);
    CHECK(row.rfind("llama3-70b,h100-sxm,", 0) == 0);
    size_t header_commas = 0, row_commas = 0;
    bool quoted = false;
    for (const char c : header) header_commas += c == ',';
    for (const char c : row) {
        if (c == '"') quoted = !quoted;
        row_commas += (c == ',' && !quoted) ? 1 : 0;
    }
    CHECK(header_commas == row_commas);
}

TEST_CASE("a config file, stdin and flags give the same prediction, and flags override the file") {
    const Run flags = trainclock("predict " + kDefault + " --json");
    const std::string config = R"({"schema": "trainclock/config/v1", "model": "llama3-70b", "gpu": "h100-sxm",
        "num_gpus": 1024, "precision": "bf16-mixed", "parallel": {"tp": 8, "pp": 4},
        "training": {"seq_len": 8192, "global_batch": 1024, "micro_batch": 1, "recompute": "selective", "tokens": 15e12}})";
    std::ofstream(work_path("config.json")) << config;
    const Run file = trainclock("predict --json --config '" + work_path("config.json") + "'");
    const Run piped = trainclock("predict --json --config -", config);
    REQUIRE(file.exit_code == 0);
    CHECK(file.out == flags.out);
    CHECK(piped.out == flags.out);
    std::remove(work_path("config.json").c_str());
    const Run overridden = trainclock("predict --json --config - --pp 8", config);
    REQUIRE(overridden.exit_code == 0);
    CHECK(has(overridden.out, "\"pp\": 8"));
    CHECK(has(overridden.out, "\"dp\": 16"));
}

TEST_CASE("compare: FP32 is several times slower than bf16-mixed for gpt3-1.3b on A100") {
    const Run run = trainclock("compare --model gpt3-1.3b --gpu a100-sxm4-80gb --gpus 8");
    REQUIRE(run.exit_code == 0);
    std::istringstream table(run.out);
    std::string line;
    double fp32_speedup = 0, bf16_speedup = 0;
    while (std::getline(table, line)) {
        std::istringstream words(line);
        std::string name, gemm, time, unit, speedup;
        words >> name >> gemm >> time >> unit >> speedup;
        if (name == "fp32") fp32_speedup = std::atof(speedup.c_str());
        if (name == "bf16-mixed") bf16_speedup = std::atof(speedup.c_str());
    }
    CHECK(fp32_speedup == 1.0);
    CHECK(bf16_speedup > 3.0);
    for (const char* precision : {"tf32", "fp16-amp", "bf16-amp", "fp16-mixed", "fp16", "bf16"}) CHECK(has(run.out, precision));
    CHECK(has(run.out, "not supported by a100-sxm4-80gb: fp8-mixed"));
    CHECK(has(run.out, "prec.ovh"));  // the breakdown columns that explain the gaps
    const Run json = trainclock("compare --model gpt3-1.3b --gpu a100-sxm4-80gb --gpus 8 --json");
    REQUIRE(json.exit_code == 0);
    CHECK(has(json.out, R"("baseline":"fp32")"));
}

TEST_CASE("presets lists every kind, as text and JSON") {
    const Run all = trainclock("presets");
    REQUIRE(all.exit_code == 0);
    for (const char* id : {"llama3-70b", "h100-sxm", "dgx-h100", "fp8-mixed"}) CHECK(has(all.out, id));
    const Run gpus = trainclock("presets gpus");
    CHECK(has(gpus.out, "a100-sxm4-80gb"));
    CHECK_FALSE(has(gpus.out, "llama3-70b"));
    const Run json = trainclock("presets models --json");
    REQUIRE(json.exit_code == 0);
    CHECK(json.out.rfind("{\"models\":[", 0) == 0);
    check_rejected("presets cpus", "cpus");
}

TEST_CASE("link encode and decode round-trip a config") {
    const Run encoded = trainclock("link encode " + kDefault);
    REQUIRE(encoded.exit_code == 0);
    const std::string fragment = encoded.out.substr(0, encoded.out.find('\n'));
    CHECK(fragment.rfind("v=2&m=llama3-70b&g=h100-sxm&N=1024&p=bf16-mixed&fw=megatron-core&tp=8&pp=4", 0) == 0);
    const Run decoded = trainclock("link decode '" + fragment + "'");
    REQUIRE(decoded.exit_code == 0);
    const Run from_link = trainclock("predict --json --config -", decoded.out);
    const Run from_flags = trainclock("predict --json " + kDefault);
    CHECK(from_link.out == from_flags.out);
    check_rejected("link decode 'v=3&m=gpt2&g=h100-sxm'", "v");
    check_rejected("link decode 'v=1&m=gpt2&g=h100-sxm&bogus=1'", "bogus");
    check_rejected("link decode 'v=1&m=~@@@&g=h100-sxm'", "m");
    check_rejected("link", "link");
}

TEST_CASE("link pairs spelled as flags (the web app's CLI command) give the same config") {
    const std::string args = "--model '{\"preset\": \"llama3-8b\", \"layers\": 8}' --gpu h100-sxm --gpus 8 --tp 2 --sp "
                             "--no-flash --calibration '{\"memory_efficiency\": 0.75}'";
    const Run encoded = trainclock("link encode " + args);
    REQUIRE(encoded.exit_code == 0);
    std::string fragment = encoded.out.substr(0, encoded.out.find('\n'));
    CHECK(has(fragment, "&sp=1"));
    CHECK(has(fragment, "&fa=0"));
    std::string flags;  // "v=1&m=..." -> "--model ... --gpu ..."
    std::istringstream pairs(fragment);
    for (std::string pair; std::getline(pairs, pair, '&');) {
        const std::string key = pair.substr(0, pair.find('=')), value = pair.substr(pair.find('=') + 1);
        const std::pair<const char*, const char*> flag_of[] = {{"m", "--model"},     {"g", "--gpu"},           {"N", "--gpus"},
                                                               {"p", "--precision"}, {"tp", "--tp"},           {"sp", "--sp"},
                                                               {"fa", "--flash"},    {"cal", "--calibration"}, {"fw", "--framework"}};
        for (const auto& [link_key, flag] : flag_of) {
            if (key == link_key) flags += std::string(" ") + flag + " '" + value + "'";
        }
    }
    const Run from_pairs = trainclock("predict --json" + flags);
    const Run from_flags = trainclock("predict --json " + args);
    REQUIRE(from_pairs.exit_code == 0);
    CHECK(from_pairs.out == from_flags.out);
    CHECK(has(from_flags.out, "\"sequence_parallel\": true"));
    CHECK(has(from_flags.out, "\"flash_attention\": false"));
    CHECK(has(from_flags.out, "\"memory_efficiency\": 0.75"));
}

TEST_CASE("bad input: exit code 2 and one line naming the key") {
    check_rejected("predict --model gpt2 --gpu h100-sxm --tpp 2", "--tpp");
    check_rejected("predict --model gpt2 --gpu h100", "gpu");
    check_rejected("predict --model lama3-8b --gpu h100-sxm", "model");
    check_rejected("predict --model llama3-70b --gpu a100-sxm4-80gb --precision fp8-mixed", "precision");
    check_rejected("predict --model llama3-70b --gpu h100-sxm --gpus 64 --tp 3", "parallel.tp");
    check_rejected("predict --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 --pp 4 --dp 4", "num_gpus");
    check_rejected("predict --model gpt2 --gpu h100-sxm --tp abc", "--tp");
    check_rejected("predict --model gpt2 --gpu h100-sxm --zero 7", "parallel.zero");
    check_rejected("predict --model gpt2 --gpu h100-sxm --mbs 3 --gbs 8", "training.global_batch");
    check_rejected("predict --model gpt2 --gpu h100-sxm --tp", "--tp");
    check_rejected("predict --gpu h100-sxm", "model");
    check_rejected("predict --model gpt2 --gpu h100-sxm --json --csv", "--csv");
    check_rejected("predcit", "predcit");
    check_rejected("predict --config -", "<stdin>", "");
    check_rejected("predict --config -", "<stdin>", R"({"model": "gpt2", "gpu": )");
    check_rejected("predict --config -", "<stdin>: parallel.tpp", R"({"model": "gpt2", "gpu": "h100-sxm", "parallel": {"tpp": 2}})");
    check_rejected("predict --config -", "<stdin>: num_gpus", R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": "8"})");
    check_rejected("predict --config /nonexistent/config.json", "/nonexistent/config.json");
    check_rejected("compare --model gpt2 --gpu h100-sxm --tp 5", "parallel.tp");
    // A directory opened fine and then threw from the stream (exit 1, "internal error").
    check_rejected("predict --config /tmp", "/tmp");
    // Creating 100000 threads threw std::system_error and aborted.
    check_rejected("search --model gpt2 --gpu h100-sxm --gpus 8 --threads 100000", "--threads");
    check_rejected("search --model gpt2 --gpu h100-sxm --gpus 1099511627776", "num_gpus");
}

TEST_CASE("import hf prints the model object, --model FILE reads an HF config.json") {
    const std::string hf = std::string(TRAINCLOCK_SOURCE_DIR) + "/tests/core/hf/";
    const Run imported = trainclock("import hf '" + hf + "mixtral-8x7b.json'");
    REQUIRE(imported.exit_code == 0);
    CHECK(imported.err.empty());
    CHECK(has(imported.out, "\"experts\": 8"));
    // The printed object is a valid inline model, and --model FILE gives the same prediction.
    const std::string tail = " --gpu h100-sxm --gpus 16 --ep 8 --json";
    const Run from_file = trainclock("predict --model '" + hf + "mixtral-8x7b.json'" + tail);
    REQUIRE(from_file.exit_code == 0);
    const std::string object = imported.out.substr(0, imported.out.rfind('}') + 1);
    const Run from_object = trainclock("predict --model '" + object + "'" + tail);
    REQUIRE(from_object.exit_code == 0);
    CHECK(from_file.out == from_object.out);
    // stdin, and a warning for what is read but not modelled.
    const Run deepseek = trainclock("import hf -", slurp(hf + "deepseek-v3.json"));
    CHECK(deepseek.exit_code == 0);
    CHECK(has(deepseek.err, "trainclock: warning: quantization_config"));
    check_rejected("import hf -", "<stdin>: model_type", R"({"model_type": "mamba"})");
    check_rejected("import hf -", "<stdin>: n_routed_experts", R"({"model_type": "llama", "n_routed_experts": 4})");
    check_rejected("import yaml x", "import");
    check_rejected("predict --model /nonexistent/config.json --gpu h100-sxm", "/nonexistent/config.json");
    check_rejected("predict --model '{\"model_type\": \"llama\", \"hidden_size\": 64}' --gpu h100-sxm", "model.num_hidden_layers");
}

TEST_CASE("import megatron, torchtitan and deepspeed print a config/v1 document") {
    const std::string launch = std::string(TRAINCLOCK_SOURCE_DIR) + "/tests/core/launch/";
    const Run megatron = trainclock("import megatron --gpu h100-sxm -- --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
                                    "--vocab-size 32000 --tensor-model-parallel-size 2 --bf16 --nproc_per_node 8 --bogus-flag 1");
    REQUIRE(megatron.exit_code == 0);
    CHECK(has(megatron.out, "\"framework\": \"megatron-core\""));
    CHECK(has(megatron.out, "\"num_gpus\": 8"));
    CHECK(megatron.err == "trainclock: warning: not understood, ignored: --bogus-flag\n");
    const Run from_file = trainclock("import megatron --gpu h100-sxm '" + launch + "megatron-llama3-8b-h100-fp8.txt'");
    REQUIRE(from_file.exit_code == 0);
    CHECK(has(from_file.out, "\"fp8-mixed\""));
    const Run titan = trainclock("import torchtitan '" + launch + "torchtitan-llama3-70b.toml' --gpu a100-sxm4-80gb --gpus 64");
    REQUIRE(titan.exit_code == 0);
    CHECK(has(titan.out, "\"model\": \"llama3.1-70b\""));
    const Run ds = trainclock("import deepspeed '" + launch + "deepspeed-zero3.json' --model gpt2-xl --gpu a100-sxm4-80gb --gpus 16");
    REQUIRE(ds.exit_code == 0);
    CHECK(has(ds.out, "\"zero\": 3"));
    check_rejected("import megatron --model gpt2 -- --recompute-granularity some", "megatron arguments: --recompute-granularity");
    check_rejected("import torchtitan '" + launch + "torchtitan-llama3-70b.toml'",
                   launch + "torchtitan-llama3-70b.toml: parallelism.data_parallel_shard_degree");
    check_rejected("import deepspeed - --gpus x", "--gpus", "{}");
    check_rejected("import megatron", "import megatron");
}

TEST_CASE("fine-tuning: LoRA flags predict, link round-trip, and search --smallest finds the fewest GPUs") {
    const std::string lora = "--model llama3.1-8b --gpu a100-sxm4-40gb --gpus 1 --finetune lora --lora-rank 16 --seq 2048 --gbs 16";
    const Run table = trainclock("predict " + lora);
    REQUIRE(table.exit_code == 0);
    CHECK(has(table.out, "fits"));
    const Run encoded = trainclock("link encode " + lora + " --optimizer adamw8bit --frozen-layers 2");
    REQUIRE(encoded.exit_code == 0);
    const std::string fragment = encoded.out.substr(0, encoded.out.find('\n'));
    CHECK(has(fragment, "&ft=lora"));
    CHECK(has(fragment, "&lor=16"));
    CHECK(has(fragment, "&frz=2"));
    const Run decoded = trainclock("link decode '" + fragment + "'");
    REQUIRE(decoded.exit_code == 0);
    CHECK(trainclock("predict --json --config -", decoded.out).out ==
          trainclock("predict --json " + lora + " --optimizer adamw8bit --frozen-layers 2").out);
    check_rejected("predict --model llama3.1-8b --gpu a100-sxm4-40gb --finetune lora", "training.finetune.lora_rank");
    // Full fine-tuning of an 8B model needs ~16 bytes per weight: more than one or two 40 GB GPUs.
    const Run full =
        trainclock("search --model llama3.1-8b --gpu a100-sxm4-40gb --gpus 64 --smallest --seq 2048 --gbs 64 --top 1 --threads 1");
    REQUIRE(full.exit_code == 0);
    CHECK(has(full.out, "smallest setup that fits: 4 x a100-sxm4-40gb"));
    std::string lora64 = lora;  // a flag is given once (issue 25): --gpus 64 in place of --gpus 1
    lora64.replace(lora64.find("--gpus 1"), 8, "--gpus 64");
    const Run small = trainclock("search " + lora64 + " --smallest --top 1 --threads 1");
    REQUIRE(small.exit_code == 0);
    CHECK(has(small.out, "smallest setup that fits: 1 x a100-sxm4-40gb"));
}

TEST_CASE("fine-tuning with FSDP CPU offload on 8 A100: the CPU optimizer step has its own line, table and JSON") {
    const std::string offload = "--model llama3.1-8b --gpu a100-sxm4-80gb --gpus 8 --framework torchtune --precision bf16 --zero 3 "
                                "--offload-params --offload-optimizer --seq 2048 --gbs 64 --mbs 2 --recompute full";
    const Run table = trainclock("predict " + offload);
    REQUIRE(table.exit_code == 0);
    CHECK(has(table.out, "of which CPU step"));
    const Run json = trainclock("predict --json " + offload);
    REQUIRE(json.exit_code == 0);
    CHECK(has(json.out, "\"cpu_optimizer_s\""));
    // New switches round-trip through a link, and bad combinations name their key.
    const std::string qlora = "--model llama3.1-8b --gpu rtx-4090 --gpus 1 --precision bf16 --finetune qlora --lora-rank 8 --gbs 2 --mbs 2 "
                              "--paged-optimizer --optimizer-in-backward --offload-activations";
    const Run encoded = trainclock("link encode " + qlora);
    REQUIRE(encoded.exit_code == 0);
    const std::string fragment = encoded.out.substr(0, encoded.out.find('\n'));
    CHECK(has(fragment, "&pgo=1"));
    const Run decoded = trainclock("link decode '" + fragment + "'");
    REQUIRE(decoded.exit_code == 0);
    CHECK(trainclock("predict --json --config -", decoded.out).out == trainclock("predict --json " + qlora).out);
    check_rejected("predict --model llama3.1-8b --gpu rtx-4090 --gpus 1 --gbs 8 --mbs 2 --optimizer-in-backward",
                   "training.optimizer_in_backward");
}

TEST_CASE("calibrate: measured runs in, a calibration that predict and validate read out") {
    const std::string runs = R"({"schema_version":1,"name":"runs","set":"public","source":"test","cases":[
{"id":"R-1","config":{"schema":"trainclock/config/v1","model":"gpt2-medium","gpu":"a100-sxm4-80gb","num_gpus":1,"training":{"seq_len":1024,"global_batch":8,"micro_batch":8}},"measured":{"metric":"iteration_time_s","value":0.9},"citation":"test"},
{"id":"R-2","config":{"schema":"trainclock/config/v1","model":"gpt2-medium","gpu":"a100-sxm4-80gb","num_gpus":1,"training":{"seq_len":2048,"global_batch":8,"micro_batch":4}},"measured":{"metric":"iteration_time_s","value":2.0},"citation":"test"}]})";
    const std::string out = work_path("calibration.json");
    const Run run = trainclock("calibrate --measurements - --out '" + out + "'", runs);
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(has(run.out, "leave-one-out"));
    CHECK(has(run.out, "Not fitted"));
    const std::string calibration = slurp(out);
    CHECK(has(calibration, "\"a100-sxm4-80gb\""));
    const Run predicted =
        trainclock("predict --model gpt2-medium --gpu a100-sxm4-80gb --seq 1024 --gbs 8 --mbs 8 --json --calibration '" + out + "'");
    CHECK(predicted.exit_code == 0);
    std::remove(out.c_str());
    check_rejected("calibrate", "--measurements");
    check_rejected("calibrate --measurements -", "-",
                   R"({"schema_version":1,"name":"x","set":"public","source":"t","cases":[{"id":"B"}]})");
    check_rejected("validate --write-intervals /tmp/x.json", "--write-intervals");
}

TEST_CASE("calibrate: one stack per GPU (--framework picks it), measure_gpu.py's micro-benchmarks") {
    const std::string runs = R"({"schema_version":1,"name":"runs","set":"public","source":"test","cases":[
{"id":"R-1","config":{"schema":"trainclock/config/v1","model":"gpt2-medium","gpu":"a100-sxm4-80gb","framework":"megatron-lm","num_gpus":1,"training":{"seq_len":1024,"global_batch":8,"micro_batch":8}},"measured":{"metric":"iteration_time_s","value":0.9},"citation":"test"},
{"id":"R-2","config":{"schema":"trainclock/config/v1","model":"gpt2-medium","gpu":"a100-sxm4-80gb","framework":"torchtitan","num_gpus":1,"training":{"seq_len":2048,"global_batch":8,"micro_batch":4}},"measured":{"metric":"iteration_time_s","value":2.0},"citation":"test"}]})";
    check_rejected("calibrate --measurements -", "-: framework", runs);
    const Run one = trainclock("calibrate --measurements - --framework torchtitan", runs);
    INFO(one.err);
    REQUIRE(one.exit_code == 0);
    CHECK(has(one.out, "1 measured runs"));
    CHECK(has(one.out, "Fitted on (GPU / framework): a100-sxm4-80gb / torchtitan"));
    check_rejected("calibrate --measurements - --framework deepspeed", "--framework", runs);

    // H100 SXM: bf16 peak 989.5 TFLOP/s, HBM 3,350 GB/s (presets/gpus/h100-sxm.json).
    const std::string micro = R"({"schema": "trainclock/measurements/v1", "gpu": "h100-sxm", "device": "NVIDIA H100",
        "gemm": [{"dtype": "bf16", "tflops": 791.6}], "memory": {"bandwidth_gbps": 2680.0}, "attention": [], "collectives": []})";
    const Run measured = trainclock("calibrate --measurements -", micro);
    INFO(measured.err);
    REQUIRE(measured.exit_code == 0);
    CHECK(has(measured.out, "gemm_efficiency.bf16 = 791.6 TFLOP/s (best shape) / 989.5 peak = 0.8000"));
    CHECK(has(measured.out, "\"bf16\": 0.8"));
    CHECK(has(measured.out, "\"memory_efficiency\": 0.64"));  // 2680 / 3350 = 0.8 of the stream, 0.8 of that in training kernels
    check_rejected("calibrate --measurements - --gpu h100-typo", "-: gpu", micro);
    check_rejected("calibrate --measurements - --framework torchtitan", "--framework", micro);
}

TEST_CASE("validate --components: MAPE per component of the microbenchmarks, text and JSON") {
    const Run text = trainclock("validate --components --worst 3");
    INFO(text.err);
    REQUIRE(text.exit_code == 0);
    for (const char* component : {"collective", "gemm", "grouped_gemm", "attention", "memory"}) CHECK(has(text.out, component));
    CHECK(has(text.out, "MAPE by source"));
    const Run json = trainclock("validate --components --json");
    REQUIRE(json.exit_code == 0);
    CHECK(has(json.out, R"("components":[{"component":"collective","cases":)"));
    CHECK(has(json.out, R"("sources":[)"));
    check_rejected("validate --components --cross-source", "--components");
    check_rejected("validate --components --worst x", "--worst");
}

// Issue 24: plan lists options whose layouts predict reproduces to the digit; bad input exits 2.
TEST_CASE("plan lists the Pareto front, and predict reproduces an option to the digit") {
    using namespace cli_test;
    const std::string args = "--model gpt2 --tokens 1e9 --gpu h100-sxm,a100-sxm4-80gb --max-gpus 8 --seq 1024 --gbs 32";
    const Run table = trainclock("plan " + args);
    REQUIRE(table.exit_code == 0);
    CHECK(has(table.out, "Pareto front"));
    CHECK(has(table.out, "cheapest"));
    const Run csv = trainclock("plan " + args + " --csv");
    REQUIRE(csv.exit_code == 0);
    // The last option (the slowest: the cheapest end of the front): its layout as flags.
    std::vector<std::string> rows;
    std::stringstream lines_of(csv.out);
    for (std::string line; std::getline(lines_of, line);) rows.push_back(line);
    REQUIRE(rows.size() >= 3);
    std::vector<std::string> f;
    std::stringstream cells(rows.back());
    for (std::string cell; std::getline(cells, cell, ',');) f.push_back(cell);
    REQUIRE(f.size() == 23);
    const std::string flags = "--model gpt2 --tokens 1e9 --seq 1024 --gbs " + f[22] + " --gpu " + f[1] + " --gpus " + f[2] +
                              " --precision " + f[3] + " --tp " + f[11] + " --pp " + f[12] + " --cp " + f[13] + " --ep " + f[15] +
                              " --sp " + (f[16] == "true" ? "1" : "0") + " --zero " + f[17] + " --schedule " + f[18] + " --vpp " + f[19] +
                              " --mbs " + f[20] + " --recompute " + f[21];
    const Run predicted = trainclock("predict " + flags + " --json");
    REQUIRE(predicted.exit_code == 0);
    CHECK(json_number(predicted.out, "total_time_s") / 86400 == std::strtod(f[4].c_str(), nullptr));
    CHECK(json_number(predicted.out, "cost_usd") == std::strtod(f[5].c_str(), nullptr));
    const Run json = trainclock("plan " + args + " --json");
    REQUIRE(json.exit_code == 0);
    CHECK(has(json.out, "\"schema\":\"trainclock/plan/v1\""));
    CHECK(has(json.out, "\"cheapest_within_deadline\":"));

    for (const char* bad : {"--days -1", "--gpus 8", "--price nope", "--gpu nope", "--max-gpus 0", "--precision nope"}) {
        INFO(bad);
        const Run run = trainclock("plan " + args + " " + bad);
        CHECK(run.exit_code == 2);
        CHECK(has(run.err, "error: "));
    }
    CHECK(trainclock("plan --model gpt2 --gpu h100-sxm --max-gpus 8").exit_code == 2);  // no --tokens
    // A deadline no count meets: exit 1 with the reason.
    const Run late = trainclock("plan " + args + " --days 0.0001");
    CHECK(late.exit_code == 1);
    CHECK(has(late.err, "0.0001 days"));
}
