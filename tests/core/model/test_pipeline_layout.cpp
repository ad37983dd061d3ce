// Tests for parallel.pipeline_layout (stage_split.hpp parse_pipeline_layout, pipeline_layout_error):
// Megatron-Core's --pipeline-model-parallel-layout (NVIDIA/Megatron-LM@d98e8a64
// megatron/core/transformer/pipeline_parallel_layer_layout.py; its examples from the argument's help,
// parse_str_to_list's docstring and docs/user-guide/features/pipeline_parallel_layout.md), the
// config's rules, the stage split, per-stage memory and the schedule that follow it, the importer
// flag and the link.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "../model_fixtures.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/import.hpp"
#include "trainclock/formats/link.hpp"
#include "trainclock/model/stage_split.hpp"
#include "trainclock/perf/prediction.hpp"

using namespace trainclock;

namespace {

std::vector<LayoutStage> parsed(const std::string& layout) {
    auto stages = parse_pipeline_layout(layout);
    INFO(layout);
    if (!stages) FAIL(stages.error().to_string());
    return stages.value();
}

// The t count of each virtual stage.
std::vector<int64_t> layer_counts(const std::vector<LayoutStage>& stages) {
    std::vector<int64_t> out;
    for (const LayoutStage& s : stages) out.push_back(s.layers);
    return out;
}

// The message of a layout Megatron-Core rejects (fails the test when accepted).
std::string rejected(const std::string& layout, int64_t pp, int64_t v, int64_t layers, int64_t mtp) {
    const auto error = pipeline_layout_error(layout, pp, v, layers, mtp);
    INFO(layout);
    REQUIRE(error);
    CHECK(error->key == "parallel.pipeline_layout");
    return error->message;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// DeepSeek-V3 (61 layers + 1 MTP) on 1024 H100 as NVIDIA's Megatron-Bridge recipe lays it out
// (NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/recipes/deepseek/deepseek_v3.py: TP 2, PP 16,
// EP 64, expert TP 1, MTP 1, global batch 4096, micro-batch 1, seq 4096, selective recompute).
std::string deepseek(const std::string& parallel_extra) {
    return R"("model": "deepseek-v3", "gpu": "h100-sxm", "num_gpus": 1024, "precision": "bf16-mixed",
              "parallel": {"tp": 2, "pp": 16, "ep": 64, "expert_tp": 1, "sequence_parallel": true, "zero": 1)" +
           parallel_extra + R"(}, "training": {"seq_len": 4096, "global_batch": 4096, "micro_batch": 1, "recompute": "selective"})";
}

// Llama 3 8B (32 layers) on 32 H100, PP 4, framework none (the knobs' own defaults, on which the
// ratios below were set: the default megatron-core overlaps more, a heavy stage costs 1.28x there).
std::string llama(const std::string& parallel_extra) {
    return R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 32, "framework": "none", "parallel": {"tp": 1, "pp": 4, "zero": 1)" +
           parallel_extra + R"(}, "training": {"seq_len": 8192, "global_batch": 256, "micro_batch": 1})";
}

// Forward seconds of micro-batch 0 on each stage (the timeline's spans).
std::vector<double> forward_spans(const Config& c) {
    PredictOptions options;
    options.timeline = true;
    const Prediction p = predict(c, options);
    std::vector<double> out(size_t(c.parallel.pp), 0.0);
    for (const TimelineSpan& s : p.timeline)
        if (s.forward && s.micro_batch == 0) out[size_t(s.stage)] += s.end_s - s.start_s;
    return out;
}

}  // namespace

TEST_CASE("pipeline layout: Megatron-Core's own examples parse as it does", "[pipeline_layout]") {
    // docs/user-guide/features/pipeline_parallel_layout.md: DeepSeek-V3 on PP 16 x VPP 2.
    const auto v3 = parsed("Et*3|(tt|)*29,m|L");
    REQUIRE(v3.size() == 32);
    CHECK(v3[0].embedding);
    CHECK(v3[0].layers == 3);
    for (size_t j = 1; j <= 29; ++j) CHECK(v3[j].layers == 2);
    CHECK(v3[30].mtp == 1);
    CHECK(v3[30].layers == 0);
    CHECK(v3[31].loss);
    CHECK(v3[31].first == 61);
    CHECK(v3[29].first == 3 + 28 * 2);  // t's of the stages before it
    // parse_str_to_list's docstring: "Ettt|(tt|)*29,m|L" is the same list.
    CHECK(layer_counts(parsed("Ettt|(tt|)*29,m|L")) == layer_counts(v3));
    // --pipeline-model-parallel-layout's help: "E|(t|)*3,m|m||L" (an empty stage between the m's and L).
    const auto help = parsed("E|(t|)*3,m|m||L");
    CHECK(layer_counts(help) == std::vector<int64_t>{0, 1, 1, 1, 0, 0, 0, 0});
    CHECK(help[4].mtp == 1);
    CHECK(help[5].mtp == 1);
    // The regex examples: "(|ab)*2,cd" -> "|ab|abcd"; "(ab)*3" -> "ababab"; commas are cosmetic.
    CHECK(layer_counts(parsed("(|tt)*2,tt")) == std::vector<int64_t>{0, 2, 4});
    CHECK(layer_counts(parsed("E(t)*3,t*2|t,t,L")) == std::vector<int64_t>{5, 2});
    // The docs' note: empty stages are allowed.
    CHECK(layer_counts(parsed("E||t|L")) == std::vector<int64_t>{0, 0, 1, 0});
    CHECK_FALSE(pipeline_layout_error("E||t|L", 4, 1, 1, 0));
    CHECK_FALSE(pipeline_layout_error("Et*3|(tt|)*29,m|L", 16, 2, 61, 1));
}

TEST_CASE("pipeline layout: each malformed layout is refused with its reason", "[pipeline_layout]") {
    // Characters: the message names the character and the stage, and the legend.
    auto bad = parse_pipeline_layout("Et|tx|L");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().key == "parallel.pipeline_layout");
    CHECK(has(bad.error().message, "'x' in virtual stage 1 is not a layer"));
    // A group without *N, and nested groups, leave a '(' (Megatron's two regular expressions).
    CHECK(has(parse_pipeline_layout("E(tt)|L").error().message, "groups do not nest"));
    CHECK(has(parse_pipeline_layout("E((t|)*2)*2L").error().message, "'('"));
    CHECK(has(parse_pipeline_layout("Et t|L").error().message, "' '"));
    // Expansion is bounded (no hang, no memory blow-up).
    CHECK(has(parse_pipeline_layout("Et*99999999999999999999|L").error().message, "expand past 65536"));
    CHECK(has(parse_pipeline_layout("E(t*9|)*9999L").error().message, "expand past 65536"));  // the group, then each t*9
    // Stage count: pp x virtual_stages, with the setting that fits.
    CHECK(has(rejected("Et*3|(tt|)*29,m|L", 16, 1, 61, 1), "has 32 stages, not pp x virtual_stages = 16 x 1 = 16"));
    CHECK(has(rejected("Et*3|(tt|)*29,m|L", 16, 1, 61, 1), "set parallel.virtual_stages = 2 and parallel.schedule = interleaved"));
    CHECK(has(rejected("Et*3|(tt|)*29,m|L", 5, 1, 61, 1), "a multiple of pp"));
    // E first, L last, each exactly once.
    CHECK(has(rejected("tE|tL", 2, 1, 2, 0), "must start with the embedding E"));
    CHECK(has(rejected("Et|Lt", 2, 1, 2, 0), "must end with the loss L"));
    CHECK(has(rejected("Et|EtL", 2, 1, 2, 0), "names the embedding E 2 times"));
    CHECK(has(rejected("Et|tLL", 2, 1, 2, 0), "names the loss L more than once"));
    CHECK(has(rejected("Et|t", 2, 1, 2, 0), "names the loss L 0 times"));
    // Layer counts: the model's layers and MTP layers.
    CHECK(has(rejected("Et|tL", 2, 1, 3, 0), "holds 2 transformer layers t, the model has 3 (model.layers)"));
    CHECK(has(rejected("Et|tL", 2, 1, 2, 1), "holds 0 MTP layers m, the model has 1 (model.mtp_layers)"));
    // MTP: after every decoder layer, in one virtual stage, the last chunk of its pipeline stage.
    CHECK(has(rejected("Etm|tL", 2, 1, 2, 1), "decoder layers before MTP layers"));
    CHECK(has(rejected("Et|tm|mL", 3, 1, 2, 2), "over several virtual stages"));
    CHECK(has(rejected("Et|tm|t|tL", 2, 2, 4, 1), "decoder layers before MTP"));
    CHECK(has(rejected("Et|m|t|tL", 2, 2, 3, 1), "decoder layers before MTP"));
    CHECK(has(rejected("Et|tm||||L", 3, 2, 2, 1), "last chunk of their pipeline stage"));
}

TEST_CASE("pipeline layout: the config's rules name the key, and refuse the other split keys", "[pipeline_layout]") {
    const auto good = load_config(R"({"schema": "trainclock/config/v1", )" + llama(R"(, "pipeline_layout": "Et*8|t*8|t*8|t*8L")") + "}");
    REQUIRE(good.ok());
    CHECK(good.value().parallel.stage_split.pipeline_layout == "Et*8|t*8|t*8|t*8L");
    // config/v1 round trip, and configs without a layout keep their canonical text.
    const auto again = load_config(config_to_json(good.value()));
    REQUIRE(again.ok());
    CHECK(again.value().parallel.stage_split == good.value().parallel.stage_split);
    CHECK_FALSE(has(config_to_json(fixtures::config(llama(""))), "pipeline_layout"));
    auto error_of = [](const std::string& body) {
        const auto c = load_config(R"({"schema": "trainclock/config/v1", )" + body + "}");
        INFO(body);
        REQUIRE_FALSE(c.ok());
        return c.error();
    };
    const Error count = error_of(llama(R"(, "pipeline_layout": "Et*8|t*8|t*8|t*7L")"));
    CHECK(count.key == "parallel.pipeline_layout");
    CHECK(has(count.message, "holds 31 transformer layers t, the model has 32"));
    const Error both = error_of(llama(R"(, "pipeline_layout": "Et*8|t*8|t*8|t*8L", "first_stage_layers": 8, "last_stage_layers": 8)"));
    CHECK(both.key == "parallel.pipeline_layout");
    CHECK(has(both.message, "cannot be combined"));
    CHECK(error_of(llama(R"(, "pipeline_layout": 5)")).key == "parallel.pipeline_layout");  // a string
    // Virtual stages need the interleaved schedule, and the layout's stage count.
    CHECK(error_of(llama(R"(, "pipeline_layout": "Et*4|(t*4|)*6,t*4L", "virtual_stages": 2)")).key == "parallel.virtual_stages");
    CHECK(load_config(R"({"schema": "trainclock/config/v1", )" +
                      llama(R"(, "pipeline_layout": "Et*4|(t*4|)*6,t*4L", "virtual_stages": 2, "schedule": "interleaved")") + "}")
              .ok());
    // Encoder-decoder stacks: Megatron-Core's layouts hold one decoder stack.
    const Error t5 =
        error_of(R"("model": "t5-11b", "gpu": "a100-sxm4-80gb", "num_gpus": 2, "parallel": {"pp": 2, "pipeline_layout": "Et|tL"},
                                 "training": {"seq_len": 512, "global_batch": 64})");
    CHECK(t5.key == "parallel.pipeline_layout");
}

TEST_CASE("pipeline layout: the stage split follows it", "[pipeline_layout]") {
    StageSplit split;
    split.pipeline_layout = "Et*3|(tt|)*29,m|L";
    // Virtual stage j = chunk * pp + stage: stage 0 holds layers 0-2 (chunk 0) and 32-33 (chunk 1).
    CHECK(stage_layer_range(61, 16, 2, split, 0).first == 0);
    CHECK(stage_layer_range(61, 16, 2, split, 0).count == 3);
    CHECK(stage_layer_range(61, 16, 2, split, 16).first == 3 + 15 * 2);
    CHECK(stage_layer_range(61, 16, 2, split, 16).count == 2);
    CHECK(stage_layer_range(61, 16, 2, split, 30).count == 0);  // the MTP stage
    CHECK(stage_layer_range(61, 16, 2, split, 31).count == 0);  // the loss stage
    CHECK_FALSE(stage_split_error(61, 16, 2, split));
    split.first_stage_layers = 4;
    CHECK(stage_split_error(61, 16, 2, split)->key == "parallel.pipeline_layout");
}

TEST_CASE("pipeline layout: an even layout costs as the even split, a heavy stage sets the step and the memory", "[pipeline_layout]") {
    const Config none = fixtures::config(llama(""));
    const Config even = fixtures::config(llama(R"(, "pipeline_layout": "Et*8|t*8|t*8|t*8L")"));
    const Prediction p_none = predict(none), p_even = predict(even);
    CHECK(p_even.iteration_time_s == p_none.iteration_time_s);
    CHECK(p_even.memory.per_gpu_gib == p_none.memory.per_gpu_gib);
    // Embedding and loss placement show in the per-stage cost: the last stage (LM head + loss over a
    // 128K vocabulary) is the slowest forward, the first (the embedding) above a middle one.
    const std::vector<double> spans = forward_spans(even);
    CHECK(spans[3] > spans[1]);
    CHECK(spans[0] > spans[1]);
    CHECK(spans[1] == Approx(spans[2]));
    // 14 layers on stage 1: its forward is 14/8 of a middle stage's, it sets the step (slower) and
    // holds the most weights and activations (more memory).
    const Config heavy = fixtures::config(llama(R"(, "pipeline_layout": "Et*2|t*14|t*8|t*8L")"));
    const std::vector<double> heavy_spans = forward_spans(heavy);
    CHECK(heavy_spans[1] / heavy_spans[2] == Approx(14.0 / 8.0).epsilon(0.05));
    const Prediction p_heavy = predict(heavy);
    CHECK(p_heavy.iteration_time_s > p_even.iteration_time_s * 1.3);
    CHECK(p_heavy.memory.per_gpu_gib > p_even.memory.per_gpu_gib);
    // Moving layers off the last stage (the head's) shortens the slowest stage: faster than even.
    const Config lighter_last = fixtures::config(llama(R"(, "pipeline_layout": "Et*8|t*9|t*9|t*6L")"));
    CHECK(predict(lighter_last).iteration_time_s < p_even.iteration_time_s);
}

TEST_CASE("pipeline layout: DeepSeek-V3 with NVIDIA's layouts on 1024 H100 predicts", "[pipeline_layout]") {
    // Megatron-Bridge's PP 16 layout, (16, 1) in its layout_map: E + 4 layers, 14 x 4, 1 layer + MTP + loss.
    const Config bridge = fixtures::config(deepseek(R"(, "pipeline_layout": "Et*4|(t*4|)*14,tmL")"));
    const Prediction p = predict(bridge);
    CHECK(p.iteration_time_s > 0);
    CHECK(std::isfinite(p.iteration_time_s));
    CHECK(p.mfu > 0.05);
    CHECK(p.mfu < 0.7);
    // Megatron-LM's docs: PP 16 x VPP 2, the MTP layer alone on stage 14's second chunk and the loss
    // alone on stage 15's.
    const Config docs =
        fixtures::config(deepseek(R"(, "pipeline_layout": "Et*3|(tt|)*29,m|L", "virtual_stages": 2, "schedule": "interleaved")"));
    const Prediction q = predict(docs);
    CHECK(q.iteration_time_s > 0);
    CHECK(std::isfinite(q.iteration_time_s));
    // Interleaving halves the bubble: faster than PP 16 without it.
    CHECK(q.iteration_time_s < p.iteration_time_s);
    // Stage 14 holds two layers and the MTP module (a MoE layer and its projection), stage 15 two layers
    // and the heads of both (the LM head's and the MTP module's, GPTModel._postprocess): each more than
    // half of a middle stage's four layers, the MTP stage less than all four.
    const std::vector<double> spans = forward_spans(docs);
    CHECK(spans[14] < spans[13]);
    CHECK(spans[14] > 0.6 * spans[13]);
    CHECK(spans[15] > 0.6 * spans[13]);
    // Without a layout the 61 layers do not split over 16 x 2 chunks: the config names the keys.
    const auto plain =
        load_config(R"({"schema": "trainclock/config/v1", )" + deepseek(R"(, "virtual_stages": 2, "schedule": "interleaved")") + "}");
    REQUIRE_FALSE(plain.ok());
    CHECK(plain.error().key == "parallel.virtual_stages");
}

TEST_CASE("pipeline layout: an MTP stage of its own carries the MTP module", "[pipeline_layout]") {
    // DeepSeek-V2-Lite (27 layers) with one MTP layer on PP 4: the MTP layer alone on stage 2's only
    // chunk (Megatron-Core's "standalone" MTP), or with the loss on stage 3.
    const std::string model =
        R"("model": {"preset": "deepseek-v2-lite", "mtp_layers": 1}, "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"pp": 4, "ep": 2, "zero": 1)";
    const std::string training = R"(}, "training": {"seq_len": 4096, "global_batch": 64, "micro_batch": 1})";
    const std::vector<double> standalone = forward_spans(fixtures::config(model + R"(, "pipeline_layout": "Et*9|t*9|t*9m|L")" + training));
    const std::vector<double> with_loss = forward_spans(fixtures::config(model + R"(, "pipeline_layout": "Et*9|t*9|t*9|mL")" + training));
    CHECK(standalone[2] > standalone[1]);  // nine layers and the MTP module
    CHECK(with_loss[2] == Approx(with_loss[1]));
    CHECK(standalone[3] < with_loss[3]);  // the heads alone
}

TEST_CASE("pipeline layout: MTP on the last stage holds an embedding copy beside the output layer", "[pipeline_layout]") {
    // Megatron-Core gpt_model.py builds self.embedding where pre_process or mtp_process: with the MTP
    // on the last stage (24 layers there, so it is the more loaded end), its weights grow by two
    // vocab x hidden matrices per vocabulary row (head and embedding), one without MTP.
    auto weights_gib = [](int mtp, int64_t vocab) {
        const std::string layout = mtp ? "Et|t|t|t*24mL" : "Et|t|t|t*24L";
        const Config c = fixtures::config(
            R"("model": {"preset": "deepseek-v2-lite", "mtp_layers": )" + std::to_string(mtp) + R"(, "vocab": )" + std::to_string(vocab) +
            R"(}, "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"pp": 4, "ep": 2, "zero": 1, "pipeline_layout": ")" + layout +
            R"("}, "training": {"seq_len": 4096, "global_batch": 64, "micro_batch": 1})");
        return predict(c).memory[MemoryPart::weights];
    };
    const double head_only = weights_gib(0, 102400) - weights_gib(0, 51200);
    const double head_and_embedding = weights_gib(1, 102400) - weights_gib(1, 51200);
    CHECK(head_only > 0);
    CHECK(head_and_embedding == Approx(2 * head_only));
}

TEST_CASE("pipeline layout: the Megatron importer reads --pipeline-model-parallel-layout", "[pipeline_layout]") {
    const std::string command =
        "torchrun --nproc-per-node 8 --nnodes 128 pretrain_gpt.py --tensor-model-parallel-size 2 --pipeline-model-parallel-size 16 "
        "--expert-model-parallel-size 64 --expert-tensor-parallel-size 1 --pipeline-model-parallel-layout \"Et*3|(tt|)*29,m|L\" "
        "--num-layers 61 --mtp-num-layers 1 --seq-length 4096 --global-batch-size 4096 --micro-batch-size 1 --bf16";
    const auto imported = import_megatron(split_command_line(command), R"({"model": "deepseek-v3", "gpu": "h100-sxm"})");
    REQUIRE(imported.ok());
    const std::string& json = imported.value().json;
    INFO(json);
    CHECK(has(json, R"("pipeline_layout": "Et*3|(tt|)*29,m|L")"));
    CHECK(has(json, R"("virtual_stages": 2)"));  // arguments.py: the layout's 32 stages / pp 16
    CHECK(has(json, R"("schedule": "interleaved")"));
    const auto config = load_config(json);
    if (!config.ok()) FAIL(config.error().to_string());
    CHECK(config.value().parallel.stage_split.pipeline_layout == "Et*3|(tt|)*29,m|L");
    CHECK(config.value().parallel.expert_tp == 1);
}

TEST_CASE("pipeline layout: links carry it, expert_tp and a node without peer-to-peer", "[pipeline_layout]") {
    Config c = fixtures::config(deepseek(R"(, "pipeline_layout": "Et*3|(tt|)*29,m|L", "virtual_stages": 2, "schedule": "interleaved")"));
    c.node.peer_to_peer = false;
    c.node.name = "custom";
    const std::string link = encode_config_link(c);
    INFO(link);
    CHECK(has(link, "&ppl=Et*3|(tt|)*29,m|L"));
    CHECK(has(link, "&etp=1"));
    auto decoded = decode_config_link(link);
    REQUIRE(decoded.ok());
    const auto validated = load_config(config_to_json(decoded.value()));
    if (!validated.ok()) FAIL(validated.error().to_string());
    CHECK(validated.value().parallel.stage_split.pipeline_layout == "Et*3|(tt|)*29,m|L");
    CHECK(validated.value().parallel.expert_tp == 1);
    CHECK_FALSE(validated.value().node.peer_to_peer);
    CHECK(encode_config_link(validated.value()) == link);
    // A link's layout is checked as the config's: percent-escapes decode, a bad layout names the key.
    const auto escaped = decode_config_link("v=1&m=llama3-8b&g=h100-sxm&N=32&pp=4&ppl=Et*8%7Ct*8%7Ct*8%7Ct*8L");
    REQUIRE(escaped.ok());
    CHECK(escaped.value().parallel.stage_split.pipeline_layout == "Et*8|t*8|t*8|t*8L");
    const auto bad = decode_config_link("v=1&m=llama3-8b&g=h100-sxm&N=32&pp=4&ppl=Et*8|t*8|t*8|t*8");
    REQUIRE_FALSE(bad.ok());
    CHECK(has(bad.error().to_string(), "pipeline_layout"));
}

TEST_CASE("torchtitan: expert_tensor_parallel_degree and the stage split keys", "[pipeline_layout]") {
    // Qwen3-30B-A3B, TP 2 x FSDP 4 with EP 4 on 8 GPUs: torchtitan's EP borrows the TP ranks (expert TP 1).
    const std::string moe = "[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n[parallelism]\ntensor_parallel_degree = 2\n"
                            "data_parallel_shard_degree = 4\nexpert_parallel_degree = 4\n";
    auto borrowed = import_torchtitan(moe, R"({"gpu": "h100-sxm"})");
    REQUIRE(borrowed.ok());
    CHECK(has(borrowed.value().json, R"("expert_tp": 1)"));
    REQUIRE(load_config(borrowed.value().json).ok());
    auto same = import_torchtitan(moe + "expert_tensor_parallel_degree = 2\n", R"({"gpu": "h100-sxm"})");
    REQUIRE(same.ok());
    CHECK_FALSE(has(same.value().json, "expert_tp"));  // = tp, the config's default
    auto odd = import_torchtitan(moe + "expert_tensor_parallel_degree = 4\n", R"({"gpu": "h100-sxm"})");
    REQUIRE_FALSE(odd.ok());
    CHECK(odd.error().key == "parallelism.expert_tensor_parallel_degree");
    // Llama 3 8B (32 layers) on PP 4 with the embedding and the output counted as one layer each:
    // 34 effective layers, 9 9 8 8, less one on the first and the last stage.
    const std::string dense = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nglobal_batch_size = 64\n"
                              "[parallelism]\npipeline_parallel_degree = 4\ndata_parallel_shard_degree = 2\n";
    auto split = import_torchtitan(dense + "pipeline_parallel_first_stage_less_layers = 1\npipeline_parallel_last_stage_less_layers = 1\n",
                                   R"({"gpu": "h100-sxm"})");
    REQUIRE(split.ok());
    CHECK(has(split.value().json, R"("pipeline_layout": "Et*8|t*9|t*8|t*7L")"));
    const auto config = load_config(split.value().json);
    if (!config.ok()) FAIL(config.error().to_string());
    // Interleaved1F1B with 3 layers per stage: ceil(34 / 3) = 12 stages, 3 per rank.
    auto looped = import_torchtitan(dense + "pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_layers_per_stage = 3\n",
                                    R"({"gpu": "h100-sxm"})");
    REQUIRE(looped.ok());
    CHECK(has(looped.value().json, R"("pipeline_layout": "Et*2|t*3|t*3|t*3|t*3|t*3|t*3|t*3|t*3|t*3|t*2|tL")"));
    CHECK(has(looped.value().json, R"("virtual_stages": 3)"));
    // 4 layers per stage: 9 stages, not a multiple of the 4 ranks (torchtitan refuses it).
    auto uneven = import_torchtitan(dense + "pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_layers_per_stage = 4\n");
    REQUIRE_FALSE(uneven.ok());
    CHECK(uneven.error().key == "parallelism.pipeline_parallel_layers_per_stage");
    // Module lists per stage cannot be read: refused with the way to say it.
    auto modules = import_torchtitan(dense + "module_fqns_per_model_part = [[\"tok_embeddings\", \"layers.0\"], [\"layers.1\"]]\n");
    REQUIRE_FALSE(modules.ok());
    CHECK(has(modules.error().message, "--pipeline-layout"));
}
