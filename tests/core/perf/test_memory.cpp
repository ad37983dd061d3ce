// Memory per GPU: Korthikanti et al. 2022 activations, ZeRO sharding, fit verdict.
#include "model_fixtures.hpp"

#include "trainclock/perf/memory.hpp"

using namespace trainclock;

namespace {
std::string gpt3_config(const char* parallel, const char* recompute, const char* extra = "") {
    return R"("model": ")" + std::string("gpt3-175b") +
           R"(", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "precision": "fp16-mixed", "parallel": )" + parallel +
           R"(, "training": {"seq_len": 2048, "global_batch": 8, "micro_batch": 1, "flash_attention": false, "recompute": ")" + recompute +
           "\"" + extra + "}";
}
// memory_per_gpu of a config whose execution runs `shape` (checked).
MemoryBreakdown memory_of(const Config& c, const PipelineShape& shape) {
    const Execution x = make_execution(c);
    CHECK(x.shape.schedule == shape.schedule);
    CHECK(x.shape.stages == shape.stages);
    CHECK(x.shape.micro_batches == shape.micro_batches);
    CHECK(x.shape.chunks == shape.chunks);
    return memory_per_gpu(x);
}
}  // namespace

TEST_CASE("Activations per layer match Korthikanti et al. 2022 eqs. for GPT-3 175B", "[memory]") {
    const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
    const Config tp = fixtures::config(gpt3_config(R"({"tp": 8, "sequence_parallel": false})", "none"));
    const LayerKind kind = layer_kind_at(tp.model, 0);
    // Tensor parallel: s b h (10 + 24 / t + 5 a s / (h t)).
    CHECK(activation_bytes_per_layer(make_execution(tp), kind) == Approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t))));
    // + sequence parallel: s b h / t (34 + 5 a s / h).
    const Config sp = fixtures::config(gpt3_config(R"({"tp": 8, "sequence_parallel": true})", "none"));
    CHECK(activation_bytes_per_layer(make_execution(sp), kind) == Approx(s * b * h / t * (34 + 5 * a * s / h)));
    // + selective recompute: 34 s b h / t.
    const Config sel = fixtures::config(gpt3_config(R"({"tp": 8, "sequence_parallel": true})", "selective"));
    CHECK(activation_bytes_per_layer(make_execution(sel), kind) == Approx(34 * s * b * h / t));
    // Full recompute keeps the layer input: 2 s b h (/ t with SP).
    const Config full = fixtures::config(gpt3_config(R"({"tp": 8, "sequence_parallel": true})", "full"));
    CHECK(activation_bytes_per_layer(make_execution(full), kind) == Approx(2 * s * b * h / t));
    // Flash attention removes the 5 a s / h term, like selective recompute.
    const Config flash = fixtures::config(
        R"("model": "gpt3-175b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "precision": "fp16-mixed", "parallel": {"tp": 8, "sequence_parallel": true}, "training": {"seq_len": 2048, "global_batch": 8, "micro_batch": 1, "flash_attention": true, "recompute": "none"})");
    CHECK(activation_bytes_per_layer(make_execution(flash), kind) == Approx(34 * s * b * h / t));
}

TEST_CASE("Per-op SAC keeps the layer input, the saved matmul outputs and the SDPA output with its logsumexp", "[memory]") {
    const Config c = fixtures::config(
        R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16-mixed", "framework": {"preset": "torchtitan", "op_level_sac": true}, "training": {"seq_len": 8192, "global_batch": 1, "micro_batch": 1, "flash_attention": true, "recompute": "selective"})");
    const double T = 8192, h = 4096, kv = 1024, f = 14336, heads = 32, w = 2;
    // input h, wq h, wv kv, w1 f, w2 h (bf16), SDPA output h (bf16) + fp32 logsumexp per head.
    CHECK(activation_bytes_per_layer(make_execution(c), layer_kind_at(c.model, 0)) ==
          Approx(T * (w * (h + h + kv + f + h + h) + 4 * heads)));
}

TEST_CASE("JAX's dots policy keeps the layer input and every weight matmul's output, not the attention output", "[memory]") {
    const Config c = fixtures::config(
        R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16-mixed", "framework": "jax", "training": {"seq_len": 8192, "global_batch": 1, "micro_batch": 1, "flash_attention": true, "recompute": "selective"})");
    const double T = 8192, h = 4096, kv = 1024, f = 14336, w = 2;
    // input h; wq h, wk kv, wv kv, wo h, w1 f, w3 f, w2 h (bf16).
    CHECK(activation_bytes_per_layer(make_execution(c), layer_kind_at(c.model, 0)) == Approx(T * w * (h + h + 2 * kv + h + 2 * f + h)));
}

TEST_CASE("Activation bytes scale with the activation dtype", "[memory]") {
    const std::string body =
        R"("model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 1, "training": {"seq_len": 2048, "global_batch": 8, "micro_batch": 1, "flash_attention": true}, "precision": )";
    const Config half = fixtures::config(body + R"("bf16-mixed")");
    const Config fp32 = fixtures::config(body + R"("fp32")");
    const Config fp8 = fixtures::config(
        R"("model": "gpt3-1.3b", "gpu": "h100-sxm", "num_gpus": 1, "training": {"seq_len": 2048, "global_batch": 8, "micro_batch": 1, "flash_attention": true}, "precision": "fp8-mixed")");
    const LayerKind kind = layer_kind_at(half.model, 0);
    const double a16 = activation_bytes_per_layer(make_execution(half), kind);
    CHECK(activation_bytes_per_layer(make_execution(fp32), kind) > 1.8 * a16);  // masks stay 1 byte; fp32 also loses flash
    CHECK(activation_bytes_per_layer(make_execution(fp8), kind) < a16);         // TE saves FP8 GEMM inputs
}

TEST_CASE("ZeRO stages cut optimizer, gradient and weight memory by DP", "[memory]") {
    const std::string base =
        R"("model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "precision": "bf16-mixed", "training": {"seq_len": 2048, "global_batch": 64, "micro_batch": 1}, "parallel": {"dp": 8, "zero": )";
    const PipelineShape sh{PipelineSchedule::one_f_one_b, 1, 8, 1};
    const MemoryBreakdown z0 = memory_of(fixtures::config(base + "0}"), sh);
    const MemoryBreakdown z1 = memory_of(fixtures::config(base + "1}"), sh);
    const MemoryBreakdown z2 = memory_of(fixtures::config(base + "2}"), sh);
    const MemoryBreakdown z3 = memory_of(fixtures::config(base + "3}"), sh);
    CHECK(z1[MemoryPart::optimizer] == Approx(z0[MemoryPart::optimizer] / 8));
    CHECK(z1[MemoryPart::master] == Approx(z0[MemoryPart::master] / 8));
    CHECK(z1[MemoryPart::grads] == Approx(z0[MemoryPart::grads]));
    CHECK(z2[MemoryPart::grads] == Approx(z0[MemoryPart::grads] / 8));
    CHECK(z3[MemoryPart::weights] == Approx(z0[MemoryPart::weights] / 8));
    // Mixed precision bytes per weight (Rajbhandari et al. 2020 sec. 3.1: 2 + 2(4 here: fp32 grads) + 12).
    const double params = double(parameter_count(fixtures::model("gpt3-1.3b")));
    CHECK((z0[MemoryPart::weights] + z0[MemoryPart::grads] + z0[MemoryPart::master] + z0[MemoryPart::optimizer]) * 1024 * 1024 * 1024 ==
          Approx(params * (2 + 4 + 4 + 8)).epsilon(0.001));
}

TEST_CASE("ZeRO shards over DP x CP: context-parallel ranks hold the same weights", "[memory]") {
    const std::string base =
        R"("model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "precision": "bf16-mixed", "training": {"seq_len": 2048, "global_batch": 64, "micro_batch": 1}, "parallel": {"zero": 1, )";
    const MemoryBreakdown dp8 = memory_of(fixtures::config(base + R"("dp": 8})"), PipelineShape{PipelineSchedule::one_f_one_b, 1, 8, 1});
    const MemoryBreakdown dp4cp2 =
        memory_of(fixtures::config(base + R"("dp": 4, "cp": 2})"), PipelineShape{PipelineSchedule::one_f_one_b, 1, 16, 1});
    CHECK(dp4cp2[MemoryPart::optimizer] == Approx(dp8[MemoryPart::optimizer]));  // 8 shards either way
    CHECK(dp4cp2[MemoryPart::master] == Approx(dp8[MemoryPart::master]));
}

TEST_CASE("MoE folding: expert TP 1 x EP 64 holds the same expert weights as expert TP 2 x EP 32, on half the tokens", "[memory]") {
    // DeepSeek-V3 on TP 2 x PP 8 x DP 32 (NVIDIA's folded recipe shape): 256 experts over EP 64 at
    // full width, or over EP 32 at half width, are the same bytes per GPU; the folded ranks route
    // etp / tp = 1/2 of the TP group's tokens, so the expert activations halve.
    const std::string base =
        R"("model": "deepseek-v3", "gpu": "h100-sxm", "num_gpus": 512, "precision": "bf16-mixed", "training": {"seq_len": 4096, "global_batch": 4096, "micro_batch": 1}, "parallel": {"tp": 2, "pp": 8, "sequence_parallel": true, "zero": 1, )";
    const PipelineShape shape{PipelineSchedule::one_f_one_b, 8, 128, 1};
    const MemoryBreakdown folded = memory_of(fixtures::config(base + R"("ep": 64, "expert_tp": 1})"), shape);
    const MemoryBreakdown classic = memory_of(fixtures::config(base + R"("ep": 32})"), shape);
    CHECK(folded[MemoryPart::weights] == Approx(classic[MemoryPart::weights]));
    CHECK(folded[MemoryPart::optimizer] == Approx(classic[MemoryPart::optimizer]));  // expert-DP 1 either way
    CHECK(folded[MemoryPart::activations] < classic[MemoryPart::activations]);
    // EP 64 cannot fold into TP 2 x DP 32 at expert TP 2 (2 x 64 > 64 ranks).
    CHECK_FALSE(load_config(R"({"schema": "trainclock/config/v1", )" + base + R"("ep": 64}})").ok());
}

TEST_CASE("More GPUs never raise per-GPU weight memory, too big does not fit", "[memory]") {
    double last = 1e300;
    for (int tp : {1, 2, 4, 8}) {
        const Config c = fixtures::config(R"("model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": )" + std::to_string(tp * 4) +
                                          R"(, "precision": "bf16-mixed", "parallel": {"tp": )" + std::to_string(tp) +
                                          R"(, "pp": 4}, "training": {"seq_len": 4096, "global_batch": 32, "micro_batch": 1})");
        const MemoryBreakdown m = memory_of(c, {PipelineSchedule::one_f_one_b, 4, 32, 1});
        CHECK(m[MemoryPart::weights] <= last);
        last = m[MemoryPart::weights];
    }
    const Config one = fixtures::config(
        R"("model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16-mixed", "training": {"seq_len": 4096, "global_batch": 8, "micro_batch": 1})");
    const MemoryBreakdown m = memory_of(one, {PipelineSchedule::one_f_one_b, 1, 8, 1});
    CHECK_FALSE(m.fits);
    CHECK(m.per_gpu_gib > 70e9 * 18 / (1024.0 * 1024 * 1024));
    CHECK(m.capacity_gib == Approx(80));
}

TEST_CASE("Relative-position attention stores its scores even with flash attention asked for", "[memory]") {
    // Transformer-XL's relative scores need the materialised s x s matrix (operators.cpp runs it
    // unfused), so memory must count the 5 a s / h term as without flash (Korthikanti eq. 2).
    const std::string body = R"("model": {"architecture": "decoder", "layers": 4, "hidden": 512, "heads": 8, "kv_heads": 8,
        "ffn_hidden": 2048, "vocab": 32000, "activation": "relu", "norm": "layernorm", "relative_position": true},
        "gpu": "a100-sxm4-80gb", "num_gpus": 1, "precision": "bf16-mixed", "training": {"seq_len": 512, "global_batch": 8, "micro_batch": 8, "flash_attention": )";
    const Config flash = fixtures::config(body + "true}");
    const Config materialised = fixtures::config(body + "false}");
    const LayerKind kind = layer_kind_at(flash.model, 0);
    const double a = activation_bytes_per_layer(make_execution(flash), kind);
    CHECK(a == activation_bytes_per_layer(make_execution(materialised), kind));
    // The score term alone: b a s^2 (2 w + 1) = 8 * 8 * 512^2 * 5 bytes.
    Config absolute = flash;
    absolute.model.relative_position = false;
    CHECK(a - activation_bytes_per_layer(make_execution(absolute), kind) == Approx(8.0 * 8 * 512 * 512 * 5));
}

TEST_CASE("LoRA memory: frozen base weights, adapters with gradients, master copy and Adam states (hand count)", "[memory]") {
    // Llama 3.1 8B, LoRA r = 16 on every linear layer of the blocks (PEFT target_modules q, k, v, o,
    // gate, up, down): r (k + n) per projection, 32 layers:
    // 16 x (2 x 4096 + 2 x (4096 + 1024) + (4096 + 4096) + 3 x (4096 + 14336)) x 32 = 41,943,040
    // (the count PEFT's print_trainable_parameters reports for this setup).
    const Config c = fixtures::config(R"("model": "llama3.1-8b", "gpu": "a100-sxm4-40gb", "num_gpus": 1, "precision": "bf16-mixed",
        "training": {"seq_len": 2048, "global_batch": 16, "micro_batch": 1, "finetune": {"method": "lora", "lora_rank": 16}})");
    const double adapters = 16.0 * (2 * 4096 + 2 * (4096 + 1024) + (4096 + 4096) + 3 * (4096 + 14336)) * 32;
    REQUIRE(adapters == 41943040.0);
    CHECK(layer_adapter_params_local(make_execution(c), layer_kind_at(c, 0)) * 32 == Approx(adapters));
    const PipelineShape sh{PipelineSchedule::one_f_one_b, 1, 16, 1};
    const MemoryBreakdown mem = memory_of(c, sh);
    const double gib = 1024.0 * 1024.0 * 1024.0, base = double(parameter_count(c.model));
    CHECK(mem[MemoryPart::weights] == Approx((base + adapters) * 2 / gib));  // bf16 base + bf16 adapters
    CHECK(mem[MemoryPart::grads] == Approx(adapters * 4 / gib));             // fp32 gradients of the adapters only
    CHECK(mem[MemoryPart::master] == Approx(adapters * 4 / gib));
    CHECK(mem[MemoryPart::optimizer] == Approx(adapters * 8 / gib));  // Adam m and v in fp32
    CHECK(mem.fits);
    // Full fine-tuning of the same model needs 2 + 4 + 4 + 8 bytes per weight: 134 GiB, no fit.
    const Config full = fixtures::config(R"("model": "llama3.1-8b", "gpu": "a100-sxm4-40gb", "num_gpus": 1, "precision": "bf16-mixed",
        "training": {"seq_len": 2048, "global_batch": 16, "micro_batch": 1})");
    CHECK_FALSE(memory_of(full, sh).fits);
    // QLoRA: the linear weights of the blocks as NF4 (4.127 bits), embedding, head and norms bf16.
    const Config q = fixtures::config(R"("model": "llama3.1-8b", "gpu": "a100-sxm4-40gb", "num_gpus": 1, "precision": "bf16-mixed",
        "training": {"seq_len": 2048, "global_batch": 16, "micro_batch": 1, "finetune": {"method": "qlora", "lora_rank": 16}})");
    const double linear = 32.0 * (4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3 * 4096.0 * 14336);
    const MemoryBreakdown qm = memory_of(q, sh);
    CHECK(qm[MemoryPart::weights] == Approx(((base - linear + adapters) * 2 + linear * (4 + 8.0 / 64 + 32.0 / 16384) / 8) / gib));
    CHECK(qm[MemoryPart::grads] == Approx(mem[MemoryPart::grads]));
    // adamw8bit: two 1-byte states per parameter (+ one fp32 absmax per 2048-value block).
    Config eight = c;
    eight.training.optimizer = Optimizer::adamw8bit;
    CHECK(memory_of(eight, sh)[MemoryPart::optimizer] == Approx(adapters * 2 * (1 + 4.0 / 2048) / gib));
}

TEST_CASE("Frozen leading layers keep no activations, gradients or optimizer states", "[memory]") {
    const std::string body = R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16-mixed",
        "training": {"seq_len": 2048, "global_batch": 4, "micro_batch": 1)";
    const Config all = fixtures::config(body + "}");
    const Config half = fixtures::config(body + R"(, "finetune": {"frozen_layers": 16}})");
    const PipelineShape sh{PipelineSchedule::one_f_one_b, 1, 4, 1};
    const MemoryBreakdown a = memory_of(all, sh), f = memory_of(half, sh);
    const double gib = 1024.0 * 1024.0 * 1024.0;
    const double layer = double(layer_parameter_count(all.model, 0, false));
    const double embedding = double(all.model.vocab) * double(all.model.hidden);
    CHECK(f[MemoryPart::weights] == Approx(a[MemoryPart::weights]));
    CHECK(a[MemoryPart::grads] - f[MemoryPart::grads] == Approx((16 * layer + embedding) * 4 / gib));
    CHECK(a[MemoryPart::optimizer] - f[MemoryPart::optimizer] == Approx((16 * layer + embedding) * 8 / gib));
    CHECK(a[MemoryPart::activations] - f[MemoryPart::activations] ==
          Approx(16 * activation_bytes_per_layer(make_execution(all), layer_kind_at(all, 0)) / gib));
}

TEST_CASE("CPU offload moves gradients, master weights and optimizer states (and streamed weights) to host memory", "[memory]") {
    const std::string body = R"("model": "llama3.1-8b", "gpu": "a100-sxm4-40gb", "num_gpus": 1, "precision": "bf16-mixed",
        "training": {"seq_len": 2048, "global_batch": 4, "micro_batch": 1, "recompute": "full")";
    const PipelineShape sh{PipelineSchedule::one_f_one_b, 1, 4, 1};
    const MemoryBreakdown on_gpu = memory_of(fixtures::config(body + "}"), sh);
    const MemoryBreakdown off = memory_of(fixtures::config(body + R"(, "offload_optimizer": true})"), sh);
    CHECK(off[MemoryPart::grads] == 0);
    CHECK(off[MemoryPart::master] == 0);
    CHECK(off[MemoryPart::optimizer] == 0);
    CHECK(off.host_gib == Approx(on_gpu[MemoryPart::grads] + on_gpu[MemoryPart::master] + on_gpu[MemoryPart::optimizer]));
    CHECK(off[MemoryPart::weights] == Approx(on_gpu[MemoryPart::weights]));
    const MemoryBreakdown both = memory_of(fixtures::config(body + R"(, "offload_optimizer": true, "offload_params": true})"), sh);
    CHECK(both[MemoryPart::weights] == 0);
    CHECK(both.host_gib == Approx(off.host_gib + on_gpu[MemoryPart::weights]));
    CHECK(both.fits);  // 8B weights and states in host memory; two gathered layers stay on the GPU
}

TEST_CASE("Memory outside the tensors: CUDA context, one NCCL communicator per group, allocator reserve", "[memory]") {
    // 64 GPUs as tp 8 x pp 2 x dp 4: three communicators (TP, PP, DP) of a dense model.
    const Config c =
        fixtures::config(R"("model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": 64, "parallel": {"tp": 8, "pp": 2, "dp": 4, "zero": 1},
                                         "training": {"seq_len": 4096, "global_batch": 64, "micro_batch": 1})");
    const MemoryBreakdown m = memory_per_gpu(make_execution(c));
    CHECK(m[MemoryPart::other] == Approx(0.5 + 3 * 0.25 + 0.10 * (m[MemoryPart::activations] + m[MemoryPart::grads])));
    // One GPU: no communicator at all.
    const Config one =
        fixtures::config(R"("model": "gpt2", "gpu": "h100-sxm", "num_gpus": 1, "training": {"seq_len": 1024, "global_batch": 8})");
    const MemoryBreakdown s = memory_per_gpu(make_execution(one));
    CHECK(s[MemoryPart::other] == Approx(0.5 + 0.10 * (s[MemoryPart::activations] + s[MemoryPart::grads])));
    // "fits" keeps the reserve: tensors alone at 99.9 % of capacity do not fit.
    const double tensors =
        m[MemoryPart::weights] + m[MemoryPart::grads] + m[MemoryPart::master] + m[MemoryPart::optimizer] + m[MemoryPart::activations];
    CHECK(m.per_gpu_gib > tensors + 0.5);
}
