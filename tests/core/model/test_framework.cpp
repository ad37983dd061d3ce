// Tests for trainclock/framework.hpp: the framework presets, their precedence under explicit keys,
// the GPU generations they pick kernels by, and their round trips through JSON and links.
#include <catch2/catch.hpp>

#include <algorithm>

#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/link.hpp"
#include "trainclock/model/framework.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/communication.hpp"
#include "trainclock/perf/execution.hpp"
#include "trainclock/perf/operators.hpp"
#include "trainclock/perf/prediction.hpp"
#include "trainclock/validation/validation.hpp"

#include "model_fixtures.hpp"

using namespace trainclock;

namespace {

using fixtures::load;

std::string layout(const std::string& gpu, const std::string& framework_json) {
    return R"({"model": "llama3-8b", "gpu": ")" + gpu + R"(", "num_gpus": 8, "parallel": {"tp": 2, "sequence_parallel": true},)" +
           (framework_json.empty() ? "" : R"( "framework": )" + framework_json + ",") +
           R"( "training": {"seq_len": 4096, "global_batch": 64}})";
}

}  // namespace

TEST_CASE("the framework presets are the nine stacks of issue 9 and torchtune (issue 22), each loading with a source per value") {
    const std::vector<std::string> expected = {"deepspeed",   "hf-transformers", "jax",        "llm-foundry", "megatron-core",
                                               "megatron-lm", "pytorch",         "tensorflow", "torchtitan",  "torchtune"};
    CHECK(preset_names(PresetKind::framework) == expected);
    for (const std::string& name : expected) {
        auto preset = framework_preset(name);
        INFO(name);
        REQUIRE(preset.ok());
        CHECK(preset.value().sources.size() >= 11);  // one per value key (presets.cpp refuses a file without)
    }
    CHECK_FALSE(framework_preset("megatron").ok());
}

TEST_CASE("GPU generations follow the formats a part runs") {
    auto generation = [](const char* gpu) { return gpu_kernel_generation(gpu_preset(gpu).value()); };
    CHECK(generation("v100-sxm2-32gb") == GpuGeneration::pre_hopper);
    CHECK(generation("a100-sxm4-80gb") == GpuGeneration::pre_hopper);
    CHECK(generation("l40s") == GpuGeneration::pre_hopper);  // Ada: fp8 but no wgmma, GDDR6
    CHECK(generation("h100-sxm") == GpuGeneration::hopper);
    CHECK(generation("h100-pcie") == GpuGeneration::hopper);
    CHECK(generation("h20") == GpuGeneration::hopper);
    CHECK(generation("b200") == GpuGeneration::blackwell);
    CHECK(generation("mi300x") == GpuGeneration::pre_hopper);  // not NVIDIA: no FA3/cuDNN Hopper kernels
}

TEST_CASE("no framework predicts exactly what megatron-lm's defaults predict, on every validation case") {
    const ValidationSuite suite = load_validation_suite();
    REQUIRE(suite.cases.size() > 100);
    for (const ValidationCase& c : suite.cases) {
        if (!c.config.framework.name.empty()) continue;  // a case that names its stack
        Config with = c.config;
        with.framework = framework_preset(std::string(kDefaultFrameworkEquivalent)).value();
        REQUIRE(validate_config(with).ok());
        with = validate_config(with).value();
        INFO(c.id);
        CHECK(predict(with).iteration_time_s == predict(c.config).iteration_time_s);
    }
}

TEST_CASE("framework defaults apply per GPU generation, below every explicit key") {
    const Config hopper = load(layout("h100-sxm", R"("megatron-core")"));
    CHECK(hopper.training.attention_kernel == AttentionKernel::flash3);  // cuDNN fused attention on Hopper
    CHECK(hopper.parallel.overlap_tp_comm);
    CHECK(hopper.framework_defaults.size() == 6);
    const Config ampere = load(layout("a100-sxm4-80gb", R"("megatron-core")"));
    CHECK(ampere.training.attention_kernel == AttentionKernel::flash2);
    const Config titan = load(layout("h100-sxm", R"("torchtitan")"));
    CHECK(titan.training.attention_kernel == AttentionKernel::flash2);  // SDPA's FA2 backend
    CHECK_FALSE(titan.parallel.overlap_tp_comm);                        // async TP is opt-in

    // Explicit keys win, wherever they appear: in the config, in an inline framework, after or
    // before --framework on a command line.
    Config explicit_off = load(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8, "framework": "megatron-core",
                                   "parallel": {"tp": 2, "sequence_parallel": true, "overlap_tp_comm": false},
                                   "training": {"seq_len": 4096, "global_batch": 64, "attention_kernel": "flash2"}})");
    CHECK_FALSE(explicit_off.parallel.overlap_tp_comm);
    CHECK(explicit_off.training.attention_kernel == AttentionKernel::flash2);
    // overlap_dp_comm, cuda_graphs, compile and host_op_s still from the preset
    CHECK(explicit_off.framework_defaults.size() == 4);
    const Config inline_off = load(layout("h100-sxm", R"({"preset": "megatron-core", "overlap_tp_comm": false})"));
    CHECK_FALSE(inline_off.parallel.overlap_tp_comm);
    CHECK(inline_off.framework.name == "custom");

    const ConfigField* overlap = find_field_by_flag("--overlap-tp");
    const ConfigField* framework = find_field_by_flag("--framework");
    REQUIRE(overlap);
    REQUIRE(framework);
    auto base = parse_config(layout("h100-sxm", ""));
    REQUIRE(base.ok());
    auto first = set_config_field(base.value(), *overlap, "0", "--overlap-tp");
    REQUIRE(first.ok());
    auto second = set_config_field(first.value(), *framework, "megatron-core", "--framework");
    REQUIRE(second.ok());
    auto checked = validate_config(second.value());
    REQUIRE(checked.ok());
    CHECK_FALSE(checked.value().parallel.overlap_tp_comm);

    // The prediction says what the framework set.
    const Prediction p = predict(hopper);
    bool stated = false;
    for (const std::string& warning : p.warnings) stated = stated || warning.find("framework megatron-core defaults") == 0;
    CHECK(stated);
}

TEST_CASE("host cost per op: calibration > framework > default") {
    const Config xla = load(layout("a100-sxm4-80gb", R"("jax")"));
    // Megatron-LM's derived per-step host work off, so both pay the fitted per-step remainder alike, and
    // torch's fused cross-entropy and the optimizer's gradients as jax is costed with.
    const Config eager = load(layout("a100-sxm4-80gb", R"({"preset": "megatron-lm", "step_overhead_fitted": true,
        "vocab_parallel_cross_entropy": false, "fp32_master_grads": false})"));
    // JAX/XLA dispatches no Python per op (5 us vs 60 us): a host-bound small layout is faster.
    CHECK(predict(xla).iteration_time_s <= predict(eager).iteration_time_s);
    Config calibrated = xla;
    calibrated.calibration.host_op_s = 60e-6;
    calibrated.explicit_knobs = xla.explicit_knobs;
    calibrated = validate_config(calibrated).value();
    // calibration wins: jax's host cost no longer applies (its attention kernel on A100 is megatron-lm's too)
    CHECK(predict(calibrated).iteration_time_s == Approx(predict(eager).iteration_time_s).epsilon(1e-12));
}

TEST_CASE("each stack's host cost per op is its own cited figure and the vTrain fit only the Megatron-LM era's") {
    auto host = [](const char* name) { return framework_preset(name).value().host_op_s; };
    // The 2020-2023 eager era (Megatron-LM / Megatron-DeepSpeed, DLE PyTorch 1.x): the vTrain fit.
    CHECK(host("megatron-lm") == Approx(60e-6));
    CHECK(host("pytorch") == Approx(60e-6));
    // Eager PyTorch 2.x: one torch.nn.Linear forward's host side on a Xeon 8480C (TransformerEngine issue 2053).
    for (const char* name : {"hf-transformers", "torchtune", "torchtitan", "llm-foundry", "deepspeed"}) {
        INFO(name);
        CHECK(host(name) == Approx(13.48e-6));
        bool cited = false;
        const FrameworkSpec spec = framework_preset(name).value();
        for (const auto& [key, text] : spec.sources)
            cited = cited || (key == "host_op_s" && text.find("TransformerEngine issue 2053") != std::string::npos);
        CHECK(cited);
    }
    // Transformer Engine modules: te.Linear / torch.nn.Linear on the same Grace hosts (90.53 / 33.17, 99.66 / 37.08).
    const double te_ratio = (90.53 / 33.17 + 99.66 / 37.08) / 2;
    CHECK(host("megatron-core") / host("torchtitan") == Approx(te_ratio).epsilon(0.01));
    CHECK(host("megatron-core") < host("megatron-lm"));
    CHECK(host("jax") < host("torchtitan"));
}

TEST_CASE("a Grace host dispatches each op the node's host_op_scale times slower") {
    // A host-bound layout: 8B at TP 8, 512-token micro-batches, eager Megatron-LM dispatch.
    Config grace = load(R"({"model": "llama3-8b", "gpu": "gb200", "num_gpus": 8, "framework": "megatron-lm",
                             "parallel": {"tp": 8, "sequence_parallel": true}, "training": {"seq_len": 512, "global_batch": 8}})");
    REQUIRE(grace.node.name == "gb200-nvl72");
    CHECK(grace.node.host_op_scale == Approx(37.08 / 13.48).epsilon(0.01));
    Config x86 = grace;
    x86.node.host_op_scale = 1.0;
    const Prediction slow = predict(grace), fast = predict(x86);
    CHECK(slow.breakdown_s[StepPart::overhead] > 1.5 * fast.breakdown_s[StepPart::overhead]);
    CHECK(slow.iteration_time_s > fast.iteration_time_s);
    // A full-iteration graph dispatches no op of the forward-backward: only Megatron-LM's per-step host
    // work outside it (2 syncs at one op's dispatch, main_grad.float() and grad.detach() on each of
    // 32 x 6 + 2 tensors, predict.cpp step_host_s) still runs at the host CPU's speed.
    grace.training.cuda_graphs = CudaGraphs::full;
    x86.training.cuda_graphs = CudaGraphs::full;
    const double step_host_x86_s = 2 * 60e-6 + 2 * (32 * 6 + 2) * 15e-6;
    CHECK(predict(grace).iteration_time_s - predict(x86).iteration_time_s ==
          Approx((grace.node.host_op_scale - 1) * step_host_x86_s).epsilon(1e-9));
    // Bad input names the key.
    auto bad = load_config(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8,
                               "node": {"gpus_per_node": 8, "intra_bw_gbps": 450, "inter_bw_gbps": 50, "host_op_scale": -1},
                               "training": {"seq_len": 512, "global_batch": 8}})");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().key == "node.host_op_scale");
}

TEST_CASE("every framework preset round-trips through config JSON and a link, predicting the same") {
    for (const std::string& name : preset_names(PresetKind::framework)) {
        for (const char* gpu : {"a100-sxm4-80gb", "h100-sxm", "b200"}) {
            const Config config = load(layout(gpu, "\"" + name + "\""));
            INFO(name << " on " << gpu);
            const std::string json = config_to_json(config);
            const Config reread = load(json);
            CHECK(config_to_json(reread) == json);
            CHECK(reread.framework_defaults == config.framework_defaults);
            auto linked = decode_config_link(encode_config_link(config));
            REQUIRE(linked.ok());
            CHECK(config_to_json(linked.value()) == json);
            CHECK(predict(linked.value()).iteration_time_s == predict(config).iteration_time_s);
        }
    }
    // An inline variant too (the link carries a diff against its base preset).
    const Config custom = load(layout("h100-sxm", R"({"preset": "deepspeed", "overlap_dp_comm": false, "host_op_s": 2e-5})"));
    auto linked = decode_config_link(encode_config_link(custom));
    REQUIRE(linked.ok());
    CHECK(config_to_json(linked.value()) == config_to_json(custom));
    CHECK_FALSE(linked.value().parallel.overlap_dp_comm);
}

TEST_CASE("bad framework input names the key") {
    auto unknown = load_config(layout("h100-sxm", R"("megatron")"));
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().key == "framework");
    CHECK(unknown.error().message.find("megatron-core") != std::string::npos);  // did you mean
    auto bad = load_config(layout("h100-sxm", R"({"preset": "jax", "host_op_s": -1})"));
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().key == "framework.host_op_s");
    auto recipe = load_config(layout("h100-sxm", R"({"preset": "jax", "fp8_recipe": "fp8"})"));
    REQUIRE_FALSE(recipe.ok());
    CHECK(recipe.error().key == "framework.fp8_recipe");
    auto partial = load_config(layout("h100-sxm", R"({"overlap_tp_comm": true})"));  // no base: every key needed
    REQUIRE_FALSE(partial.ok());
}

TEST_CASE("FP8 recipes: precision key, framework default, dtype fit, and their quantisation traffic") {
    auto with = [](const std::string& precision, const std::string& framework = "") {
        return R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8, "precision": )" + precision +
               (framework.empty() ? "" : R"(, "framework": ")" + framework + "\"") +
               R"(, "training": {"seq_len": 4096, "global_batch": 64}})";
    };
    // Unset: the dtype's own (fp8: TE's delayed); the framework's when given; the key wins.
    CHECK(effective_fp8_recipe(load(with(R"("fp8-mixed")"))) == Fp8Recipe::delayed);
    CHECK(effective_fp8_recipe(load(with(R"("fp8-mixed")", "torchtitan"))) == Fp8Recipe::tensorwise);
    CHECK(effective_fp8_recipe(load(with(R"({"preset": "fp8-mixed", "fp8_recipe": "rowwise"})", "torchtitan"))) == Fp8Recipe::rowwise);
    CHECK_FALSE(effective_fp8_recipe(load(with(R"("bf16-mixed")"))).has_value());
    CHECK(precision_preset("mxfp8-mixed").value().fp8_recipe == Fp8Recipe::mxfp8);
    CHECK(precision_preset("nvfp4-mixed").value().fp8_recipe == Fp8Recipe::nvfp4);
    // A recipe must scale the gemm dtype it is given with.
    for (const char* bad : {R"({"preset": "fp8-mixed", "fp8_recipe": "mxfp8"})", R"({"preset": "bf16-mixed", "fp8_recipe": "delayed"})"}) {
        auto config = load_config(with(bad));
        REQUIRE_FALSE(config.ok());
        CHECK(config.error().key == "precision.fp8_recipe");
    }
    // Traffic per element of an activation (bf16 in, fp8 out in two layouts): delayed 2 + 2 = 4 bytes,
    // tensorwise and rowwise 2 x 2 + 2 = 6 (a second read), blockwise 2 + 2 (1 + 4/128) = 4.0625.
    const auto cast_bytes = [&](const char* recipe) {
        const Config c = load(with(std::string(R"({"preset": "fp8-mixed", "fp8_recipe": ")") + recipe + "\"}"));
        const Execution x = make_execution(c);
        const PieceOps ops = layer_ops(x, layer_kind_at(c.model, 0));
        for (const Op& op : ops.forward)
            if (std::string(op.name) == "fp8_input_cast_transpose") return op.bytes;
        return 0.0;
    };
    const double delayed = cast_bytes("delayed");
    REQUIRE(delayed > 0);
    CHECK(cast_bytes("tensorwise") == Approx(delayed * 6 / 4));
    CHECK(cast_bytes("rowwise") == Approx(delayed * 6 / 4));
    CHECK(cast_bytes("blockwise") == Approx(delayed * 4.0625 / 4));
    // More quantisation traffic, never less time; delayed (no framework) is today's prediction.
    const double t_delayed = predict(load(with(R"({"preset": "fp8-mixed", "fp8_recipe": "delayed"})"))).iteration_time_s;
    CHECK(t_delayed == predict(load(with(R"("fp8-mixed")"))).iteration_time_s);
    CHECK(predict(load(with(R"({"preset": "fp8-mixed", "fp8_recipe": "tensorwise"})"))).iteration_time_s > t_delayed);
}

TEST_CASE("rowwise FP8 GEMMs run PyTorch's CUTLASS kernel on NVIDIA (slower than cuBLAS tensorwise), hipBLASLt on AMD") {
    auto with = [](const char* gpu, const char* recipe) {
        return R"({"model": "llama3-8b", "gpu": ")" + std::string(gpu) + R"(", "num_gpus": 8, "framework": "torchtitan",)" +
               R"( "precision": {"preset": "fp8-mixed", "fp8_recipe": ")" + recipe +
               R"("}, "training": {"seq_len": 4096, "global_batch": 64}})";
    };
    const size_t fp8 = size_t(DType::fp8), bf16 = size_t(DType::bf16);
    for (const char* gpu : {"h100-sxm", "b200"}) {
        INFO(gpu);
        const Config tensorwise = load(with(gpu, "tensorwise")), rowwise = load(with(gpu, "rowwise"));
        const Execution t = make_execution(tensorwise), r = make_execution(rowwise);
        const double rate = r.cal.gemm_efficiency[fp8] / t.cal.gemm_efficiency[fp8];
        CHECK(rate > 0.5);
        CHECK(rate < 1.0);
        CHECK(r.cal.gemm_efficiency[bf16] == t.cal.gemm_efficiency[bf16]);  // the bf16 LM head keeps cuBLAS
        // A search's shared calibration gets the same rate.
        const Calibration shared =
            resolve_calibration(rowwise.gpu, rowwise.calibration, rowwise.training.attention_kernel, &rowwise.framework);
        CHECK(make_execution(rowwise, shared).cal.gemm_efficiency[fp8] == r.cal.gemm_efficiency[fp8]);
        // Same quantisation traffic: only the GEMMs slow down.
        const Prediction pt = predict(tensorwise), pr = predict(rowwise);
        CHECK(pr.breakdown_s[StepPart::gemm] > pt.breakdown_s[StepPart::gemm]);
        CHECK(pr.breakdown_s[StepPart::precision_overhead] == pt.breakdown_s[StepPart::precision_overhead]);
    }
    CHECK(predict(load(with("mi300x", "rowwise"))).iteration_time_s == predict(load(with("mi300x", "tensorwise"))).iteration_time_s);
    // The rate is a calibration scalar: at 1 the rowwise kernel runs as fast as cuBLAS's.
    std::string at_one = with("h100-sxm", "rowwise");
    at_one.insert(at_one.size() - 1, R"(, "calibration": {"fp8_rowwise_gemm": 1})");
    CHECK(predict(load(at_one)).iteration_time_s == predict(load(with("h100-sxm", "tensorwise"))).iteration_time_s);
}

TEST_CASE("quantize_layouts_one_pass false: torchao's MX casts read the bf16 operand once per layout") {
    auto with = [](const std::string& framework) {
        return R"({"model": "llama3-8b", "gpu": "b200", "num_gpus": 8, "precision": "mxfp8-mixed", "framework": )" + framework +
               R"(, "training": {"seq_len": 4096, "global_batch": 64}})";
    };
    const auto cast_bytes = [&](const std::string& framework, const char* name) {
        const Config c = load(with(framework));
        const Execution x = make_execution(c);
        const PieceOps ops = layer_ops(x, layer_kind_at(c.model, 0));
        double bytes = 0;
        for (const OpList* list : {&ops.forward, &ops.backward})
            for (const Op& op : *list)
                if (std::string(op.name) == name) bytes += op.bytes * op.count;
        return bytes;
    };
    // MXFP8 element: 1 byte + an e8m0 scale per 32 (1/32 byte). TE: read bf16 once, write both layouts:
    // 2 + 2 (1 + 1/32) = 4.0625 bytes; torchao (dim0 and dim1 kernels): 2 (2 + 1 + 1/32) = 6.0625.
    const std::string te = R"({"preset": "megatron-core"})", torchao = R"({"preset": "megatron-core", "quantize_layouts_one_pass": false})";
    for (const char* name : {"fp8_input_cast_transpose", "fp8_weight_cast_transpose", "fp8_grad_cast_transpose"}) {
        REQUIRE(cast_bytes(te, name) > 0);
        CHECK(cast_bytes(torchao, name) == Approx(cast_bytes(te, name) * 6.0625 / 4.0625));
    }
    CHECK_FALSE(framework_preset("torchtitan").value().quantize_layouts_one_pass);
    CHECK(framework_preset("megatron-core").value().quantize_layouts_one_pass);
    // Only block-scaled recipes: a tensorwise run (torchtitan's default) is unchanged.
    const auto tensorwise = [&](const std::string& framework) {
        return predict(load(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8, "precision": "fp8-mixed", "framework": )" +
                            framework + R"(, "training": {"seq_len": 4096, "global_batch": 64}})"))
            .iteration_time_s;
    };
    CHECK(tensorwise(R"({"preset": "torchtitan"})") == tensorwise(R"({"preset": "torchtitan", "quantize_layouts_one_pass": true})"));
    // Round trip: written only when false, read back.
    const Config c = load(with(torchao));
    CHECK(config_to_json(c).find("\"quantize_layouts_one_pass\"") != std::string::npos);
    CHECK_FALSE(load(config_to_json(c)).framework.quantize_layouts_one_pass);
}

TEST_CASE("quantize_lm_head false: the LM head's GEMMs stay 16-bit under an FP8 precision, without casts") {
    auto with = [](const std::string& framework, const std::string& precision) {
        return R"({"model": "llama3-8b", "gpu": "b200", "num_gpus": 8, "precision": ")" + precision + R"(", "framework": )" + framework +
               R"(, "training": {"seq_len": 4096, "global_batch": 64}})";
    };
    struct Head {
        std::vector<DType> gemm_dtypes;
        double casts = 0;
    };
    const auto head = [&](const std::string& framework, const std::string& precision) {
        const Config c = load(with(framework, precision));
        const PieceOps ops = head_ops(make_execution(c));
        Head h;
        for (const OpList* list : {&ops.forward, &ops.backward})
            for (const Op& op : *list) {
                if (op.kind == OpKind::gemm) h.gemm_dtypes.push_back(op.dtype);
                if (op.kind == OpKind::precision_overhead) h.casts += op.bytes * op.count;
            }
        return h;
    };
    const std::string kept = R"({"preset": "megatron-core", "quantize_lm_head": false})";
    const std::string quantised = R"({"preset": "megatron-core", "quantize_lm_head": true})";
    for (const char* precision : {"fp8-mixed", "mxfp8-mixed"}) {
        const Head k = head(kept, precision), q = head(quantised, precision);
        REQUIRE(k.gemm_dtypes.size() == 3);  // fprop, dgrad, wgrad
        for (DType d : k.gemm_dtypes) CHECK(d == DType::bf16);
        for (DType d : q.gemm_dtypes) CHECK(d != DType::bf16);
        CHECK(k.casts == 0);
        CHECK(q.casts > 0);
    }
    // The transformer blocks keep the precision's GEMMs.
    const Config c = load(with(kept, "mxfp8-mixed"));
    const PieceOps block = layer_ops(make_execution(c), layer_kind_at(c.model, 0));
    for (const Op& op : block.forward)
        if (op.kind == OpKind::gemm) CHECK(op.dtype == DType::mxfp8);
    // A 16-bit precision is unchanged by the key.
    CHECK(predict(load(with(kept, "bf16-mixed"))).iteration_time_s == predict(load(with(quantised, "bf16-mixed"))).iteration_time_s);
    // The stacks that keep the head out of FP8 say so; the default quantises it (Accelerate's TE conversion).
    for (const char* name : {"torchtitan", "megatron-core", "megatron-lm", "llm-foundry"})
        CHECK_FALSE(framework_preset(name).value().quantize_lm_head);
    CHECK(framework_preset("hf-transformers").value().quantize_lm_head);
    // Round trip of a stack whose preset quantises the head: the override is written and read back.
    const Config hf = load(with(R"({"preset": "hf-transformers", "quantize_lm_head": false})", "mxfp8-mixed"));
    CHECK(config_to_json(hf).find("\"quantize_lm_head\"") != std::string::npos);
    CHECK_FALSE(load(config_to_json(hf)).framework.quantize_lm_head);
}

TEST_CASE("Megatron's fused causal softmax loads only the unmasked triangle of 16-bit scores, else runs torch ops in fp32") {
    // Materialised attention (flash off): scores b x local heads x s x s per layer (gpt3-1.3b: 24 heads).
    const auto config = [](const std::string& framework, const char* precision, int seq, int tp = 1) {
        return load(R"({"model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": )" + std::to_string(tp) + R"(, "precision": ")" +
                    precision + R"(", "framework": )" + framework + R"(, "parallel": {"tp": )" + std::to_string(tp) +
                    R"(}, "training": {"seq_len": )" + std::to_string(seq) +
                    R"(, "global_batch": 8, "micro_batch": 1, "flash_attention": false}})");
    };
    struct Softmax {
        double bytes = 0, casts = 0;  // the named op's forward + backward bytes; precision casts around it
        int kernels = 0;              // forward kernels from the scores to the probabilities (dropout excluded)
    };
    const auto softmax = [](const Config& c, const char* name) {
        const PieceOps ops = layer_ops(make_execution(c), layer_kind_at(c.model, 0));
        Softmax r;
        for (const OpList* list : {&ops.forward, &ops.backward})
            for (const Op& op : *list) {
                const std::string n = op.name;
                if (n == name || n == std::string(name) + "_bwd") r.bytes += op.bytes * op.count;
                if (n.rfind("softmax_", 0) == 0 && op.kind == OpKind::precision_overhead) r.casts += op.bytes * op.count;
                if (list == &ops.forward &&
                    (n == "softmax" || n.rfind("attn_scale", 0) == 0 || n.rfind("attn_mask", 0) == 0 || n.rfind("softmax_", 0) == 0))
                    ++r.kernels;
            }
        return r;
    };
    const double s = 1024, scores = 24 * s * s, read = (s + 1) / (2 * s);
    // The kernel: forward reads the triangle and writes the whole row, backward reads the triangle of
    // the gradient and the probabilities and writes the whole gradient (2 bytes each); one kernel.
    const Softmax fused = softmax(config(R"("megatron-lm")", "fp16-mixed", 1024), "softmax");
    CHECK(fused.bytes == Approx(scores * (2 * read + 2) + scores * (2 * 2 * read + 2)));
    CHECK(fused.kernels == 1);
    CHECK(fused.casts == 0);
    // A stack without Megatron's kernel reads the whole matrix.
    const Softmax eager = softmax(config(R"("llm-foundry")", "fp16-mixed", 1024), "softmax");
    CHECK(eager.bytes == Approx(scores * 4 + scores * 6));
    // Outside the kernel's shapes forward_torch_softmax runs: cast to fp32, scale, masked_fill_,
    // softmax, cast back (5 kernels), each pass over fp32 scores. TP 8 leaves 3 heads: 3 score
    // matrices per micro-batch, not a multiple of the kernel's 4 rows per block; 8192 keys are past
    // its 4096; fp32 scores are no 16-bit input (and need no casts).
    const double tp8 = scores / 8;
    const Softmax odd = softmax(config(R"("megatron-lm")", "fp16-mixed", 1024, 8), "softmax");
    CHECK(odd.kernels == 5);
    CHECK(odd.bytes == Approx(tp8 * 8 + tp8 * 12));
    CHECK(odd.casts == Approx(4 * tp8 * 6));
    CHECK(softmax(config(R"("megatron-lm")", "fp16-mixed", 1024, 8), "attn_mask_fill").bytes == Approx(2 * (tp8 * 8 + s * s)));
    const double long_scores = 24 * 8192.0 * 8192.0;
    CHECK(softmax(config(R"("megatron-lm")", "fp16-mixed", 8192), "softmax").bytes == Approx(long_scores * 8 + long_scores * 12));
    const Softmax fp32 = softmax(config(R"("megatron-lm")", "fp32", 1024), "softmax");
    CHECK(fp32.kernels == 3);
    CHECK(fp32.casts == 0);
    // With the fusion off (--no-masked-softmax-fusion) the stack's eager path runs instead.
    CHECK(softmax(config(R"({"preset": "megatron-lm", "fused_elementwise": false})", "fp16-mixed", 1024), "softmax").bytes ==
          Approx(scores * 4 + scores * 6));
    // The Megatron stacks state the kernel's limit; the others have none. An override round-trips.
    for (const char* name : {"megatron-lm", "megatron-core"}) CHECK(framework_preset(name).value().fused_causal_softmax_max_keys == 4096);
    for (const char* name : {"hf-transformers", "llm-foundry"}) CHECK(framework_preset(name).value().fused_causal_softmax_max_keys == 0);
    const Config custom = config(R"({"preset": "llm-foundry", "fused_causal_softmax_max_keys": 2048})", "fp16-mixed", 1024);
    CHECK(softmax(custom, "softmax").bytes == Approx(fused.bytes));
    CHECK(load(config_to_json(custom)).framework.fused_causal_softmax_max_keys == 2048);
    for (const char* bad : {"-1", "1.5", "1e9"}) {
        auto r = load_config(
            R"({"model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 1, "framework": {"preset": "megatron-lm", "fused_causal_softmax_max_keys": )" +
            std::string(bad) + "}}");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().key == "framework.fused_causal_softmax_max_keys");
    }
}

TEST_CASE("flag --fp8-recipe and link key f8 change the precision already chosen, in any order") {
    const ConfigField* recipe = find_field_by_flag("--fp8-recipe");
    REQUIRE(recipe);
    CHECK(std::string(recipe->link_key) == "f8");
    auto decoded = decode_config_link("v=1&m=llama3-8b&g=h100-sxm&N=8&p=fp8-mixed&f8=blockwise");
    REQUIRE(decoded.ok());
    CHECK(decoded.value().precision.fp8_recipe == Fp8Recipe::blockwise);
    CHECK(decoded.value().precision.gemm == DType::fp8);
    auto again = decode_config_link(encode_config_link(decoded.value()));
    REQUIRE(again.ok());
    CHECK(config_to_json(again.value()) == config_to_json(decoded.value()));
    CHECK(load(config_to_json(decoded.value())).precision.fp8_recipe == Fp8Recipe::blockwise);
    auto mismatched = decode_config_link("v=1&m=llama3-8b&g=h100-sxm&N=8&p=fp8-mixed&f8=nvfp4");
    REQUIRE_FALSE(mismatched.ok());
    CHECK(mismatched.error().key == "precision.fp8_recipe");
}

namespace {

double op_bytes(const OpList& ops, const std::string& name) {
    double bytes = 0;
    for (const Op& op : ops)
        if (name == op.name) bytes += op.bytes * op.count;
    return bytes;
}

int ops_starting(const OpList& ops, const std::string& prefix) {
    int n = 0;
    for (const Op& op : ops) n += std::string(op.name).rfind(prefix, 0) == 0;
    return n;
}

}  // namespace

TEST_CASE("fused_optimizer false: torch.optim's foreach AdamW, pass by pass") {
    // Hand count of _multi_tensor_adamw at fp32 everything: mul_(p) 8, lerp_(m, g) 12, mul_(v) 8,
    // addcmul_(v, g, g) 12, sqrt 8, div_ 8, add_ 8, addcdiv_(p, m, d) 16 = 80 bytes per parameter.
    CHECK(foreach_adamw_bytes_per_param(4, 4, 4) == 80);
    const auto step_bytes = [&](const std::string& framework) {
        const Config c = load(layout("h100-sxm", framework));
        const Execution x = make_execution(c);
        return op_bytes(step_ops(x, 1e9, 1e9), "optimizer_step");
    };
    const Config c = load(layout("h100-sxm", R"("hf-transformers")"));
    const PrecisionSpec& p = c.precision;
    const double wg = dtype_storage_bytes(p.grads), wu = 4, ws = dtype_storage_bytes(p.optimizer_states);
    CHECK(step_bytes(R"("hf-transformers")") == Approx(1e9 * foreach_adamw_bytes_per_param(wg, wu, ws)));
    CHECK(step_bytes(R"({"preset": "hf-transformers", "fused_optimizer": true})") == Approx(1e9 * (wg + 2 * wu + 4 * ws)));
    CHECK(step_bytes(R"("megatron-core")") == Approx(1e9 * (wg + 2 * wu + 4 * ws)));
    CHECK(predict(load(layout("h100-sxm", R"("hf-transformers")"))).breakdown_s[StepPart::optimizer] >
          predict(load(layout("h100-sxm", R"({"preset": "hf-transformers", "fused_optimizer": true})"))).breakdown_s[StepPart::optimizer]);
}

TEST_CASE("fused_norms false: RMSNorm as six eager kernels, LayerNorm stays one ATen kernel") {
    const Config c = load(layout("h100-sxm", R"("hf-transformers")"));
    const Execution x = make_execution(c);
    const PieceOps ops = layer_ops(x, layer_kind_at(c.model, 0));
    CHECK(ops_starting(ops.forward, "rmsnorm_") == 12);  // two norms per layer
    CHECK(ops_starting(ops.backward, "rmsnorm_") == 12);
    CHECK(ops_starting(ops.forward, "norm") == 0);
    // Forward bytes per element (bf16 stream, bf16 out): (2 + 4) + 8 + 4 + 8 + (4 + 2) + (2 + 2) = 36
    // against 2 + 2 = 4 fused.
    double unfused = 0;
    for (const Op& op : ops.forward)
        if (std::string(op.name).rfind("rmsnorm_", 0) == 0) unfused += op.bytes;
    const Config fused_c = load(layout("h100-sxm", R"({"preset": "hf-transformers", "fused_norms": true})"));
    const Execution fx = make_execution(fused_c);
    const double fused = op_bytes(layer_ops(fx, layer_kind_at(fused_c.model, 0)).forward, "norm");
    CHECK(unfused == Approx(fused * 36 / 4));
    // GPT-2 (LayerNorm) under the same stack: no composite kernels.
    const Config gpt2 =
        load(R"({"model": "gpt2", "gpu": "h100-sxm", "framework": "hf-transformers", "training": {"seq_len": 1024, "global_batch": 8}})");
    const Execution gx = make_execution(gpt2);
    CHECK(ops_starting(layer_ops(gx, layer_kind_at(gpt2.model, 0)).forward, "rmsnorm_") == 0);
}

TEST_CASE("CP ring: only the exchange the previous step's attention cannot cover is exposed") {
    // Event simulation of Transformer Engine's P2P ring: step i computes a = A / cp while the chunk
    // of step i + 1 (issued when step i starts) takes m = C / (cp - 1).
    const auto simulate = [](double C, double A, int cp) {
        const double a = A / cp, m = C / (cp - 1);
        double t = a, start = 0;  // end of step 0, start of step 0
        for (int i = 1; i < cp; ++i) {
            const double ready = start + m;  // chunk i, sent at the start of step i - 1
            start = std::max(t, ready);
            t = start + a;
        }
        return t - A;
    };
    for (int cp : {2, 3, 4, 8, 16})
        for (double C : {0.0, 0.1, 1.0, 3.0})
            for (double A : {0.05, 1.0, 4.0}) {
                INFO("cp " << cp << " C " << C << " A " << A);
                CHECK(cp_exposed_s(C, A, cp, true) == Approx(simulate(C, A, cp)).margin(1e-12));
                CHECK(cp_exposed_s(C, A, cp, false) == C);
            }
    CHECK(cp_exposed_s(1.0, 1.0, 2, true) == Approx(0.5));  // cp 2: C - A / 2
    // In a prediction: a stack that overlaps the ring exposes less CP time than one that does not.
    const auto cp_comm = [&](const std::string& framework) {
        return predict(load(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8, "framework": )" + framework +
                            R"(, "parallel": {"cp": 2}, "training": {"seq_len": 8192, "global_batch": 8}})"))
            .breakdown_s[StepPart::cp_comm];
    };
    CHECK(cp_comm(R"({"preset": "megatron-core", "overlap_cp_comm": false})") > cp_comm(R"("megatron-core")"));
}

TEST_CASE("EP all-to-all overlap and ZeRO-3 gather prefetch follow the framework") {
    const auto run = [&](const std::string& framework, int zero) {
        return predict(load(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 64, "framework": )" + framework +
                            R"(, "parallel": {"ep": 8, "zero": )" + std::to_string(zero) +
                            R"(}, "training": {"seq_len": 4096, "global_batch": 256}})"));
    };
    const Prediction exposed = run(R"("megatron-core")", 1), hidden = run(R"({"preset": "megatron-core", "overlap_ep_comm": true})", 1);
    REQUIRE(exposed.breakdown_s[StepPart::ep_comm] > 0);
    CHECK(hidden.breakdown_s[StepPart::ep_comm] < exposed.breakdown_s[StepPart::ep_comm]);
    CHECK(hidden.iteration_time_s < exposed.iteration_time_s);
    // On-demand ZeRO-3 gathers wait in full: more exposed DP time than the per-layer prefetch, and
    // ZeRO-3 is never faster than ZeRO-1 on the same layout either way.
    const Prediction prefetch = run(R"("megatron-core")", 3),
                     on_demand = run(R"({"preset": "megatron-core", "gather_prefetch": "none"})", 3);
    CHECK(on_demand.breakdown_s[StepPart::dp_comm] > prefetch.breakdown_s[StepPart::dp_comm]);
    CHECK(prefetch.iteration_time_s >= exposed.iteration_time_s);
    CHECK(on_demand.iteration_time_s >= run(R"({"preset": "megatron-core", "gather_prefetch": "none"})", 1).iteration_time_s);
}

TEST_CASE("the longest op lists (MLA + MoE, QLoRA, fp8, full recompute, composite norms) fit their fixed capacity") {
    // FixedList drops what exceeds its capacity: a layer's list must never reach it.
    const int capacity = int(OpList{}.items.size());
    for (const char* framework : {"megatron-core", "hf-transformers"})
        for (const char* precision : {"bf16-amp", "fp8-mixed", "nvfp4-mixed"}) {
            const Config c = load(
                std::string(R"({"model": "deepseek-v3", "gpu": "b200", "num_gpus": 8, "framework": ")") + framework +
                R"(", "precision": ")" + precision +
                R"(", "training": {"seq_len": 4096, "global_batch": 8, "recompute": "full", "finetune": {"method": "qlora", "lora_rank": 16, "lora_targets": "all-linear"}}})");
            const Execution x = make_execution(c);
            for (int64_t i = 0; i < total_layers(c.model); ++i) {
                const PieceOps ops = layer_ops(x, layer_kind_at(c, i));
                INFO(framework << " " << precision << " layer " << i);
                CHECK(ops.backward.size < capacity);
                CHECK(ops.forward.size < capacity);
            }
        }
}

TEST_CASE("fused_elementwise false: eager scale and mask passes over the scores, dropout apart from the residual add") {
    const auto bert = [&](const std::string& framework) {
        return load(
            R"({"model": "bert-large", "gpu": "a100-sxm4-80gb", "framework": )" + framework +
            R"(, "precision": "fp16-mixed", "training": {"seq_len": 512, "global_batch": 32, "micro_batch": 32, "flash_attention": false}})");
    };
    const Config eager = bert(R"("pytorch")"), fused = bert(R"({"preset": "pytorch", "fused_elementwise": true})");
    const Execution ex = make_execution(eager), fx = make_execution(fused);
    const PieceOps e = layer_ops(ex, layer_kind_at(eager.model, 0)), f = layer_ops(fx, layer_kind_at(fused.model, 0));
    // Hand count, fp16 scores (2 bytes): scale and mask each read and write b h s s elements forward,
    // the scale once more backward; each of the two residuals' dropout output is written and read
    // again (2 x 2 bytes per element of the b s h stream).
    const double scores = 32.0 * 16 * 512 * 512, stream = 32.0 * 512 * 1024;
    CHECK(op_bytes(e.forward, "attn_scale") == Approx(scores * 4));
    CHECK(op_bytes(e.forward, "attn_mask_add") == Approx(scores * 4));
    CHECK(op_bytes(e.backward, "attn_scale_bwd") == Approx(scores * 4));
    CHECK(op_bytes(e.forward, "dropout") + op_bytes(e.forward, "residual_add") ==
          Approx(op_bytes(f.forward, "dropout_residual") + 2 * (2 * 2) * stream));
    CHECK(op_bytes(f.forward, "attn_scale") == 0);
    CHECK(predict(eager).iteration_time_s > predict(fused).iteration_time_s);
    // Megatron-LM (no framework) keeps its fused kernels: today's prediction.
    CHECK(framework_preset("megatron-lm").value().fused_elementwise);
}

namespace {

// A layout with little work per GPU (GPT-2 small, one 1024-token sequence per micro-batch): each
// op's GPU time is below a 60 us dispatch (the Megatron-LM era's figure, given here: the test is about
// graphs, not about the preset's own figure), so without graphs the step is host-bound.
std::string small_per_gpu(const std::string& training_keys) {
    return R"({"model": "gpt2", "gpu": "h100-sxm", "framework": {"preset": "megatron-core", "host_op_s": 6e-5}, "num_gpus": 8,
               "training": {"seq_len": 1024, "global_batch": 8, "micro_batch": 1)" +
           training_keys + "}}";
}

// Much work per GPU (Llama 3 70B, 8 sequences of 8192 tokens per micro-batch on 8-way TP): every
// phase's kernels run far longer than their dispatch.
std::string large_per_gpu(const std::string& training_keys) {
    return R"({"model": "llama3-70b", "gpu": "h100-sxm", "framework": "megatron-core", "num_gpus": 8,
               "parallel": {"tp": 8, "sequence_parallel": true},
               "training": {"seq_len": 8192, "global_batch": 16, "micro_batch": 8, "recompute": "full")" +
           training_keys + "}}";
}

}  // namespace

TEST_CASE("CUDA graphs: a host-bound step gets faster, a GPU-bound one does not move") {
    const Prediction eager = predict(load(small_per_gpu("")));
    const Prediction layers = predict(load(small_per_gpu(R"(, "cuda_graphs": "layers")")));
    const Prediction full = predict(load(small_per_gpu(R"(, "cuda_graphs": "full")")));
    // The host's dispatch bounds the eager step from below (the excess is overhead); per-layer graphs
    // leave the embedding, head and loss dispatched; a full-iteration graph leaves none.
    CHECK(eager.breakdown_s[StepPart::overhead] > 0.3 * eager.iteration_time_s);
    CHECK(layers.iteration_time_s < eager.iteration_time_s);
    CHECK(full.iteration_time_s < layers.iteration_time_s);
    CHECK(full.breakdown_s[StepPart::overhead] < layers.breakdown_s[StepPart::overhead]);
    // What remains is the fixed per-step cost and the GPU side of each launch, not the host's dispatch.
    CHECK(eager.breakdown_s[StepPart::overhead] - full.breakdown_s[StepPart::overhead] > 0.25 * eager.iteration_time_s);
    // The GPU's own work is the same: graphs change who issues the kernels, not what they cost.
    CHECK(full.breakdown_s[StepPart::gemm] == Approx(eager.breakdown_s[StepPart::gemm]));
    CHECK(full.breakdown_s[StepPart::elementwise] == Approx(eager.breakdown_s[StepPart::elementwise]));

    const Prediction big = predict(load(large_per_gpu("")));
    const Prediction big_full = predict(load(large_per_gpu(R"(, "cuda_graphs": "full")")));
    CHECK(big_full.iteration_time_s == Approx(big.iteration_time_s).epsilon(1e-9));
}

TEST_CASE("torch.compile launches a compiled layer's kernels from Inductor's wrapper and not at the framework's eager cost") {
    // An eager dispatch of 1 ms per op (far above any kernel here) makes the eager step host-bound;
    // a compiled layer launches its kernels at inductor_kernel_host_s (tritonbench PR 1017), so only
    // the embedding, head and loss, which stay eager, pay the framework's figure.
    auto step = [](bool compile) {
        return predict(load(std::string(R"({"model": "gpt2", "gpu": "h100-sxm", "framework": {"preset": "torchtitan", "host_op_s": 1e-3},
                                           "num_gpus": 8, "training": {"seq_len": 1024, "global_batch": 8, "micro_batch": 1, "compile": )") +
                            (compile ? "true" : "false") + "}}"));
    };
    const Prediction eager = step(false), compiled = step(true);
    CHECK(compiled.iteration_time_s < 0.3 * eager.iteration_time_s);
    CHECK(compiled.breakdown_s[StepPart::overhead] > 0);  // the eager embedding and head still bound their phases
}

TEST_CASE("CUDA graphs per layer skip dropless MoE layers (data-dependent shapes), capture drop-and-pad ones") {
    auto moe = [](const std::string& capacity, const std::string& graphs) {
        return predict(load(
            R"({"model": {"preset": "mixtral-8x7b", "layers": 2, "moe": {"experts": 8, "top_k": 2,
                                   "expert_ffn_hidden": 1024)" +
            capacity +
            R"(}}, "gpu": "h100-sxm", "framework": {"preset": "megatron-core", "host_op_s": 6e-5}, "num_gpus": 8, "parallel": {"ep": 8},
                                   "training": {"seq_len": 512, "global_batch": 8, "cuda_graphs": ")" +
            graphs + R"("}})"));
    };
    CHECK(moe("", "layers").iteration_time_s == Approx(moe("", "none").iteration_time_s));
    CHECK(moe(R"(, "capacity_factor": 1.25)", "layers").iteration_time_s < moe(R"(, "capacity_factor": 1.25)", "none").iteration_time_s);
}

TEST_CASE("Dropless MoE routing syncs the host once per MoE layer forward and drop-and-pad does not") {
    // Mixtral-like layers (8 experts, top 2) on 8-way EP: the same balanced expert load either way
    // (a capacity of 8x the mean never drops), so only the host sync of dropless routing and the
    // router's token-dropping kernels differ; sequences long enough that the GPU, not the host's
    // dispatch, sets each phase's pace.
    auto config = [](const std::string& moe_keys, const std::string& training_keys) {
        return load(R"({"model": {"preset": "mixtral-8x7b", "layers": 2, "moe": {"experts": 8, "top_k": 2,
                                   "expert_ffn_hidden": 1024)" +
                    moe_keys + R"(}}, "gpu": "h100-sxm", "framework": "megatron-core", "num_gpus": 8, "parallel": {"ep": 8},
                                   "training": {"seq_len": 4096, "global_batch": 8)" +
                    training_keys + "}}");
    };
    auto syncs = [](const OpList& ops) { return std::count_if(ops.begin(), ops.end(), [](const Op& op) { return is_host_sync(op); }); };
    const Config dropless = config("", ""), padded = config(R"(, "capacity_factor": 8)", "");
    const Execution dx = make_execution(dropless), px = make_execution(padded);
    const PieceOps d = layer_ops(dx, layer_kind_at(dropless.model, 0)), p = layer_ops(px, layer_kind_at(padded.model, 0));
    CHECK(syncs(d.forward) == 1);
    CHECK(syncs(d.backward) == 0);  // the backward all-to-all reuses the forward's splits
    CHECK(syncs(p.forward) == 0);
    const Config recomputed = config("", R"(, "recompute": "full")");
    CHECK(syncs(layer_ops(make_execution(recomputed), layer_kind_at(recomputed.model, 0)).backward) == 1);  // re-run forward
    const Config deepep = config("", R"(, "moe_dispatcher": "deepep")");
    CHECK(syncs(layer_ops(make_execution(deepep), layer_kind_at(deepep.model, 0)).forward) == 0);

    // The GPU does the same GEMM work; after each sync it waits at least one op's dispatch. Token
    // dropping runs its own router kernels (the capacity top-k and masks), GPU seconds `dropping_s`
    // per layer and micro-batch.
    double dropping_s = 0;
    auto router_kernels_s = [&](const OpList& ops, double sign) {
        for (const Op& op : ops)
            if (std::string(op.name) == "router_elementwise")
                dropping_s += sign * (op_time_s(op, dropless.gpu, dx.cal) + dx.cal.kernel_launch_s);
    };
    router_kernels_s(p.forward, 1), router_kernels_s(p.backward, 1), router_kernels_s(d.forward, -1), router_kernels_s(d.backward, -1);
    CHECK(dropping_s > 0);
    const Prediction pd = predict(dropless), pp = predict(padded);
    CHECK(pd.breakdown_s[StepPart::gemm] == Approx(pp.breakdown_s[StepPart::gemm]));
    const double mb_layers = 2 /* MoE layers */ * double(dx.micro_batches);
    const double waits = mb_layers * dx.cal.host_op_s;
    CHECK(pd.iteration_time_s - pp.iteration_time_s >= 0.99 * waits - mb_layers * dropping_s);
    // A full-iteration graph holds no host sync: only the counts' copy kernel remains per MoE layer.
    const Prediction gd = predict(config("", R"(, "cuda_graphs": "full")")),
                     gp = predict(config(R"(, "capacity_factor": 8)", R"(, "cuda_graphs": "full")"));
    CHECK(gd.iteration_time_s - gp.iteration_time_s == Approx(mb_layers * (dx.cal.kernel_launch_s - dropping_s)).epsilon(1e-3));
}

TEST_CASE("torch.compile fuses norms and elementwise chains: fewer kernels, less elementwise traffic") {
    // hf-transformers runs eager composite RMSNorms and separate dropout / add kernels.
    const Config eager = load(layout("h100-sxm", R"("hf-transformers")"));
    REQUIRE_FALSE(eager.training.compile);  // the Trainer's default
    const Config compiled = load(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8, "framework": "hf-transformers",
                                     "parallel": {"tp": 2, "sequence_parallel": true},
                                     "training": {"seq_len": 4096, "global_batch": 64, "compile": true}})");
    const Execution ex = make_execution(eager), cx = make_execution(compiled);
    const PieceOps e = layer_ops(ex, layer_kind_at(eager.model, 0)), c = layer_ops(cx, layer_kind_at(compiled.model, 0));
    CHECK(ops_starting(c.forward, "rmsnorm_") == 0);
    CHECK(ops_starting(c.backward, "rmsnorm_") == 0);
    CHECK(ops_starting(c.forward, "norm") == 0);  // computed in the residual add's kernel
    CHECK(ops_starting(c.forward, "residual_add") == 0);
    CHECK(c.forward.size < e.forward.size - 12);
    const Prediction pe = predict(eager), pc = predict(compiled);
    CHECK(pc.breakdown_s[StepPart::elementwise] < 0.7 * pe.breakdown_s[StepPart::elementwise]);
    CHECK(pc.breakdown_s[StepPart::gemm] == Approx(pe.breakdown_s[StepPart::gemm]));
    // A stack with fused kernels already gains the norm-into-residual fusion only: the residual sum
    // is not read back by the norm.
    const Config mc = load(layout("h100-sxm", R"("megatron-core")"));
    const Config mc_compiled = load(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8, "framework": "megatron-core",
                                        "parallel": {"tp": 2, "sequence_parallel": true},
                                        "training": {"seq_len": 4096, "global_batch": 64, "compile": true}})");
    const Execution mx = make_execution(mc), mcx = make_execution(mc_compiled);
    const OpList& m_fwd = layer_ops(mx, layer_kind_at(mc.model, 0)).forward;
    const OpList& mc_fwd = layer_ops(mcx, layer_kind_at(mc_compiled.model, 0)).forward;
    const double saved = op_bytes(m_fwd, "norm") + op_bytes(m_fwd, "dropout_residual") - op_bytes(mc_fwd, "dropout_residual");
    const double stream = 4096.0 / 2 * 4096 * 2;  // one read of the residual stream: T/tp tokens x h x bf16
    CHECK(saved == Approx(2 * stream));           // two norms per layer
    CHECK(predict(mc_compiled).breakdown_s[StepPart::elementwise] < predict(mc).breakdown_s[StepPart::elementwise]);
}

TEST_CASE("cuda_graphs and compile: framework defaults with sources, explicit keys win, bad values name the key") {
    for (const std::string& name : preset_names(PresetKind::framework)) {
        INFO(name);
        const Config c = load(layout("h100-sxm", "\"" + name + "\""));
        bool graphs_stated = false, compile_stated = false;
        for (const std::string& d : c.framework_defaults) {
            graphs_stated = graphs_stated || d == "training.cuda_graphs = " + std::string(enum_name(c.framework.cuda_graphs));
            compile_stated = compile_stated || d == std::string("training.compile = ") + (c.framework.compile ? "true" : "false");
        }
        CHECK(graphs_stated);
        CHECK(compile_stated);
    }
    const Config set = load(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8, "framework": "torchtitan",
                               "training": {"seq_len": 4096, "global_batch": 64, "cuda_graphs": "full", "compile": true}})");
    CHECK(set.training.cuda_graphs == CudaGraphs::full);
    CHECK(set.training.compile);
    for (const std::string& d : set.framework_defaults) CHECK(d.find("training.c") != 0);
    const std::string text = config_to_json(set);
    CHECK(text.find("\"cuda_graphs\": \"full\"") != std::string::npos);
    CHECK(text.find("\"compile\": true") != std::string::npos);
    auto reread = load_config(text);
    REQUIRE(reread.ok());
    CHECK(reread.value().framework_defaults == set.framework_defaults);

    auto bad_graphs = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "training": {"cuda_graphs": "all"}})");
    REQUIRE_FALSE(bad_graphs.ok());
    CHECK(bad_graphs.error().key == "training.cuda_graphs");
    auto bad_compile = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "training": {"compile": "yes"}})");
    REQUIRE_FALSE(bad_compile.ok());
    CHECK(bad_compile.error().key == "training.compile");
    auto bad_preset = load_config(layout("h100-sxm", R"({"preset": "jax", "cuda_graphs": "some"})"));
    REQUIRE_FALSE(bad_preset.ok());
    CHECK(bad_preset.error().key == "framework.cuda_graphs");
}

TEST_CASE("torch_grouped_mm: torchtitan's routed experts run at the torch._grouped_mm rate, CUTLASS-class stacks at the dense rate") {
    const FrameworkSpec torchtitan = framework_preset("torchtitan").value(), megatron = framework_preset("megatron-core").value();
    CHECK(torchtitan.torch_grouped_mm);
    CHECK_FALSE(megatron.torch_grouped_mm);
    const GpuSpec b200 = gpu_preset("b200").value();
    CHECK(resolve_calibration(b200, {}, AttentionKernel::flash2, &torchtitan).grouped_gemm_rate < 1.0);
    CHECK(resolve_calibration(b200, {}, AttentionKernel::flash2, &megatron).grouped_gemm_rate == 1.0);
}

TEST_CASE("flash_attention false: tensorflow materialises the scores unless the config names fused attention") {
    const Config tf = load(layout("a100-sxm4-80gb", "\"tensorflow\""));
    CHECK_FALSE(tf.framework.flash_attention);
    CHECK_FALSE(tf.training.flash_attention);
    CHECK(std::find(tf.framework_defaults.begin(), tf.framework_defaults.end(), "training.flash_attention = false") !=
          tf.framework_defaults.end());
    const Config named = load(R"({"model": "llama3-8b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "framework": "tensorflow",
                                 "parallel": {"tp": 2, "sequence_parallel": true},
                                 "training": {"seq_len": 4096, "global_batch": 64, "flash_attention": true}})");
    CHECK(named.training.flash_attention);
    // s x s scores through HBM at seq 4096 cost more than the fused kernel
    CHECK(predict(tf).iteration_time_s > predict(named).iteration_time_s);
    // the config's text keeps the difference: the default is left out, the named key stays (JSON and link)
    CHECK(config_to_json(tf).find("flash_attention") == std::string::npos);
    auto linked = decode_config_link(encode_config_link(named));
    REQUIRE(linked.ok());
    CHECK(linked.value().training.flash_attention);
    // stacks with a fused kernel leave the config's choice
    for (const std::string& name : preset_names(PresetKind::framework)) {
        if (name == "tensorflow") continue;
        INFO(name);
        const Config c = load(layout("a100-sxm4-80gb", "\"" + name + "\""));
        CHECK(c.framework.flash_attention);
        CHECK(c.training.flash_attention);
    }
}

TEST_CASE("torch_grouped_mm: few rows per group lose m / (m + m_half) of the grouped rate, CUTLASS-class kernels only tile rounding") {
    const FrameworkSpec torchtitan = framework_preset("torchtitan").value(), megatron = framework_preset("megatron-core").value();
    const GpuSpec h100 = gpu_preset("h100-sxm").value();
    const Calibration titan = resolve_calibration(h100, {}, AttentionKernel::flash2, &torchtitan);
    const Calibration mcore = resolve_calibration(h100, {}, AttentionKernel::flash2, &megatron);
    REQUIRE(titan.grouped_m_half_rows > 0);
    CHECK(mcore.grouped_m_half_rows == 0);
    Calibration flat = titan;
    flat.grouped_m_half_rows = 0;
    // Qwen3-30B-A3B's up projection per expert: 704 and 2112 rows (VeOmni rows), 128 groups.
    for (const double rows : {704.0, 2112.0}) {
        Op up = linear_fprop_op("mlp_up", DType::bf16, rows, 2048, 1536, 2, 2, 128);
        up.grouped = true;
        const double h = titan.grouped_m_half_rows;
        CHECK(gemm_efficiency(up, h100, titan, kAlone) == Approx(gemm_efficiency(up, h100, flat, kAlone) * rows / (rows + h)));
        // The weight gradient's token rows are its K.
        Op wgrad = linear_wgrad_op(DType::bf16, rows, 2048, 1536, 2, 4, 128);
        wgrad.grouped = true;
        CHECK(gemm_efficiency(wgrad, h100, titan, kAlone) == Approx(gemm_efficiency(wgrad, h100, flat, kAlone) * rows / (rows + h)));
        // A dense GEMM of the same shape is untouched.
        Op dense = up;
        dense.grouped = false;
        CHECK(gemm_efficiency(dense, h100, titan, kAlone) == gemm_efficiency(dense, h100, flat, kAlone));
    }
}

TEST_CASE("moe_dispatcher: framework defaults with sources for MoE models, explicit keys win, the pattern changes the EP traffic") {
    const std::string moe = R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 16, "precision": "bf16-mixed",
        "parallel": {"tp": 1, "pp": 1, "dp": 16, "ep": 8}, "training": {"seq_len": 4096, "global_batch": 64, "micro_batch": 1)";
    for (const std::string& name : preset_names(PresetKind::framework)) {
        INFO(name);
        const FrameworkSpec f = framework_preset(name).value();
        const Config c = load(moe + R"(}, "framework": ")" + name + "\"}");
        CHECK(c.training.moe_dispatcher == f.moe_dispatcher);
        bool stated = false;
        for (const std::string& d : c.framework_defaults)
            stated = stated || d == "training.moe_dispatcher = " + std::string(enum_name(f.moe_dispatcher));
        CHECK(stated);
        // A dense model does not state it (its warnings stay as they were).
        for (const std::string& d : load(layout("h100-sxm", "\"" + name + "\"")).framework_defaults)
            CHECK(d.find("training.moe_dispatcher") != 0);
    }
    // Megatron-Core's TransformerConfig default is the all-gather dispatcher; torchtitan's EP is all-to-all.
    CHECK(framework_preset("megatron-core").value().moe_dispatcher == MoeDispatcher::allgather);
    CHECK(framework_preset("torchtitan").value().moe_dispatcher == MoeDispatcher::alltoall);
    const Config a2a = load(moe + R"(, "moe_dispatcher": "alltoall"}, "framework": "megatron-core"})");
    const Config ag = load(moe + R"(, "moe_dispatcher": "allgather"}, "framework": "megatron-core"})");
    CHECK(a2a.training.moe_dispatcher == MoeDispatcher::alltoall);
    for (const std::string& d : a2a.framework_defaults) CHECK(d.find("training.moe_dispatcher") != 0);
    const std::string text = config_to_json(a2a);
    CHECK(text.find("\"moe_dispatcher\": \"alltoall\"") != std::string::npos);
    auto reread = load_config(text);
    REQUIRE(reread.ok());
    CHECK(reread.value().training.moe_dispatcher == MoeDispatcher::alltoall);
    // Mixtral routes each token to 2 of 8 experts: the all-gather moves all ep x tokens, the
    // all-to-all top_k copies, so the all-gather dispatcher spends longer on EP traffic at ep 8.
    CHECK(predict(ag).breakdown_s[StepPart::ep_comm] > predict(a2a).breakdown_s[StepPart::ep_comm]);
    auto bad = load_config(moe + R"(, "moe_dispatcher": "flex"}})");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().key == "training.moe_dispatcher");
    auto bad_preset = load_config(layout("h100-sxm", R"({"preset": "jax", "moe_dispatcher": "ring"})"));
    REQUIRE_FALSE(bad_preset.ok());
    CHECK(bad_preset.error().key == "framework.moe_dispatcher");
}

// Issue 25 item 9: a config that names no framework runs a current stack (megatron-core), not the
// knobs' own defaults (Megatron-LM 2020-23, now "framework": "none"), and the config JSON names it.
TEST_CASE("a config without a framework runs megatron-core, and framework none keeps the old defaults") {
    CHECK(kDefaultFramework == "megatron-core");
    const Config plain = load(layout("h100-sxm", ""));
    const Config core = load(layout("h100-sxm", R"("megatron-core")"));
    const Config none = load(layout("h100-sxm", R"("none")"));
    CHECK(plain.framework.name == "megatron-core");
    CHECK(none.framework.name.empty());
    CHECK(predict(plain).iteration_time_s == predict(core).iteration_time_s);
    CHECK(predict(none).iteration_time_s > predict(core).iteration_time_s);  // the old default is the slower stack
    CHECK(config_to_json(plain) == config_to_json(core));
    // The writer names the framework, "none" too, so the JSON reads back the same in any version.
    CHECK(config_to_json(core).find("\"framework\": \"megatron-core\"") != std::string::npos);
    CHECK(config_to_json(none).find("\"framework\": \"none\"") != std::string::npos);
    const Config none_again = load(config_to_json(none));
    CHECK(none_again.framework.name.empty());
    CHECK(config_to_json(none_again) == config_to_json(none));
    CHECK(predict(none_again).iteration_time_s == predict(none).iteration_time_s);
}

TEST_CASE("a version-1 link without fw decodes to framework none, version-2 links always carry fw") {
    const Config none = load(layout("h100-sxm", R"("none")"));
    const Config core = load(layout("h100-sxm", ""));
    // A link made before the default changed: no fw meant none.
    const auto old_link = decode_config_link("v=1&m=llama3-8b&g=h100-sxm&N=8&p=bf16-mixed&tp=2&sp=1&seq=4096&gbs=64");
    REQUIRE(old_link.ok());
    CHECK(old_link.value().framework.name.empty());
    CHECK(config_to_json(old_link.value()) == config_to_json(none));
    const auto old_core = decode_config_link("v=1&m=llama3-8b&g=h100-sxm&N=8&p=bf16-mixed&fw=megatron-core&tp=2&sp=1&seq=4096&gbs=64");
    REQUIRE(old_core.ok());
    CHECK(config_to_json(old_core.value()) == config_to_json(core));
    // New links carry the framework, none included, and read back to the same config.
    CHECK(kLinkVersion == 2);
    const std::string none_link = encode_config_link(none), core_link = encode_config_link(core);
    CHECK(none_link.rfind("v=2&", 0) == 0);
    CHECK(none_link.find("&fw=none") != std::string::npos);
    CHECK(core_link.find("&fw=megatron-core") != std::string::npos);
    for (const Config* c : {&none, &core}) {
        const auto back = decode_config_link(encode_config_link(*c));
        REQUIRE(back.ok());
        CHECK(config_to_json(back.value()) == config_to_json(*c));
    }
    // A version-2 link without fw (written by hand) is the default framework.
    const auto by_hand = decode_config_link("v=2&m=llama3-8b&g=h100-sxm&N=8&p=bf16-mixed&tp=2&sp=1&seq=4096&gbs=64");
    REQUIRE(by_hand.ok());
    CHECK(config_to_json(by_hand.value()) == config_to_json(core));
}
