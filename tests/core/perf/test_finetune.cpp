// Tests of the fine-tuning and offload physics (issue 22 item 3, issue 25 item 3): the optimizer step on
// the CPU, paged optimizers, optimizer-in-backward, activation offload, LoRA backward and NF4
// dequantisation, adapter-only checkpoints and the one-host storage default. Each against a hand count.
#include "model_fixtures.hpp"

#include <string>

#include "perf/constants.hpp"
#include "trainclock/perf/execution.hpp"
#include "trainclock/perf/memory.hpp"
#include "trainclock/perf/operators.hpp"
#include "trainclock/perf/prediction.hpp"
#include "trainclock/perf/run.hpp"

using namespace trainclock;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Llama 3.1 8B full fine-tuning with FSDP CPU offload on one DGX A100 (8 x A100 80GB), torchtune-style pure bf16.
const std::string kOffload8 =
    R"("model": "llama3.1-8b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "precision": "bf16", "parallel": {"zero": 3},
       "training": {"seq_len": 2048, "global_batch": 64, "micro_batch": 2, "recompute": "full", "offload_params": true)";

int count_ops(const OpList& ops, const std::string& name) {
    int n = 0;
    for (const Op& op : ops)
        if (name == op.name) ++n;
    return n;
}

bool has_op_containing(const OpList& ops, const std::string& part) {
    for (const Op& op : ops)
        if (std::string(op.name).find(part) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("the DGX A100 preset carries its host CPUs' DRAM bandwidth: 2 x EPYC 7742, 8 channels DDR4-3200", "[finetune]") {
    const Config c = fixtures::config(kOffload8 + "}");
    CHECK(c.node.name == "dgx-a100");
    CHECK(c.node.host_memory_bw_gbps == Approx(2 * 8 * 3.2 * 8));  // 409.6 GB/s
}

TEST_CASE("CPU offload: the optimizer step runs on the host's CPUs, its own line of the breakdown (hand count)", "[finetune]") {
    const Config on_gpu_step = fixtures::config(kOffload8 + "}");
    const Config c = fixtures::config(kOffload8 + R"(, "offload_optimizer": true})");
    const Prediction p = predict(c);
    // Each of the 8 ranks updates its 1/8 shard of the 8.03 B weights; the host's CPUs do all 8: read the
    // bf16 gradient, read and write the bf16 weight and both bf16 Adam states = 2 + 4 + 8 = 14 B per
    // weight, at the efficiency's share of 409.6 GB/s.
    const double weights = double(parameter_count(c.model));
    const double expected = weights * 14 / (409.6e9 * constant(Constant::cpu_adam_memory_efficiency));
    CHECK(p.cpu_optimizer_s == Approx(expected).epsilon(1e-3));
    CHECK(p.cpu_optimizer_s > 0.1);
    CHECK(p.breakdown_s[StepPart::optimizer] >= p.cpu_optimizer_s);
    // Serial after the backward: the step grows by it (less the GPU step that no longer runs).
    const Prediction gpu_step = predict(on_gpu_step);
    CHECK(p.iteration_time_s - gpu_step.iteration_time_s > 0.9 * p.cpu_optimizer_s);
    // A node without the figure: not costed, and the warning says which key is missing.
    Config unknown = c;
    unknown.node.host_memory_bw_gbps = 0;
    const Prediction u = predict(unknown);
    CHECK(u.cpu_optimizer_s == 0);
    bool warned = false;
    for (const std::string& w : u.warnings) warned = warned || w.find("no host_memory_bw_gbps") != std::string::npos;
    CHECK(warned);
}

TEST_CASE("CPU offload with streamed weights sends no updated weights back after the step", "[finetune]") {
    // ZeRO-Offload without offload_params copies the updated shard back to the GPU; with the weights
    // streamed from host memory the next forward fetches them per layer instead.
    const Config streamed = fixtures::config(kOffload8 + R"(, "offload_optimizer": true})");
    Config resident =
        fixtures::config(R"("model": "llama3.1-8b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "precision": "bf16", "parallel": {"zero": 3},
       "training": {"seq_len": 2048, "global_batch": 64, "micro_batch": 2, "recompute": "full", "offload_optimizer": true})");
    const Prediction s = predict(streamed), r = predict(resident);
    const double shard = double(parameter_count(streamed.model)) / 8;
    const double up_s = shard * 2 / (streamed.gpu.host_link_gbps * 1e9 * constant(Constant::host_link_efficiency));
    CHECK((r.breakdown_s[StepPart::optimizer] - r.cpu_optimizer_s) - (s.breakdown_s[StepPart::optimizer] - s.cpu_optimizer_s) ==
          Approx(up_s).epsilon(0.02));
}

TEST_CASE("a paged optimizer pages the states that do not fit to CPU memory and moves them over the host link", "[finetune]") {
    // Llama 3.1 8B fully fine-tuned on one 40 GB A100 in pure bf16 with AdamW: 15 GiB weights, 15 GiB
    // gradients, 30 GiB states: ~65 GiB with activations, the excess (< the states) pages out.
    const std::string body = R"("model": "llama3.1-8b", "gpu": "a100-sxm4-40gb", "num_gpus": 1, "precision": "bf16",
        "training": {"seq_len": 2048, "global_batch": 1, "micro_batch": 1, "recompute": "full", "optimizer": "adamw")";
    const Config plain = fixtures::config(body + "}");
    const Config paged = fixtures::config(body + R"(, "paged_optimizer": true})");
    const Prediction a = predict(plain), b = predict(paged);
    REQUIRE_FALSE(a.memory.fits);
    const double excess = a.memory.per_gpu_gib - a.memory.capacity_gib;
    REQUIRE(excess < a.memory[MemoryPart::optimizer]);
    CHECK(b.memory.paged_gib == Approx(excess));
    CHECK(b.memory.host_gib == Approx(excess));
    CHECK(b.memory.per_gpu_gib == Approx(b.memory.capacity_gib));
    // Paged back for the update and out again: twice the paged bytes over the host link per step.
    const double link = paged.gpu.host_link_gbps * 1e9 * constant(Constant::host_link_efficiency);
    CHECK(b.breakdown_s[StepPart::optimizer] - a.breakdown_s[StepPart::optimizer] == Approx(2 * excess * kGiB / link).epsilon(1e-6));
    // A config that fits pages nothing.
    const Prediction small =
        predict(fixtures::config(R"("model": "llama3.2-1b", "gpu": "a100-sxm4-80gb", "num_gpus": 1, "precision": "bf16",
        "training": {"seq_len": 2048, "global_batch": 1, "micro_batch": 1, "paged_optimizer": true})"));
    CHECK(small.memory.paged_gib == 0);
}

TEST_CASE("paged optimizers are bitsandbytes' Adam family", "[finetune]") {
    auto c = load_config(R"({"schema": "trainclock/config/v1", "model": "llama3.2-1b", "gpu": "a100-sxm4-80gb", "num_gpus": 1,
        "training": {"optimizer": "sgd", "paged_optimizer": true}})");
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().key == "training.paged_optimizer");
}

TEST_CASE("optimizer in backward keeps one parameter's gradient, and refuses gradient accumulation", "[finetune]") {
    const std::string body = R"("model": "llama3.1-8b", "gpu": "a100-sxm4-80gb", "num_gpus": 1, "precision": "bf16",
        "training": {"seq_len": 2048, "global_batch": 2, "micro_batch": 2, "recompute": "full")";
    const Config plain = fixtures::config(body + "}");
    const Config oib = fixtures::config(body + R"(, "optimizer_in_backward": true})");
    const MemoryBreakdown a = memory_per_gpu(make_execution(plain)), b = memory_per_gpu(make_execution(oib));
    // The largest tensor is the 128256 x 4096 embedding (and the untied LM head), bf16.
    CHECK(b[MemoryPart::grads] == Approx(128256.0 * 4096 * 2 / kGiB));
    CHECK(a[MemoryPart::grads] == Approx(double(parameter_count(plain.model)) * 2 / kGiB));
    CHECK(b[MemoryPart::optimizer] == Approx(a[MemoryPart::optimizer]));
    auto accumulate = load_config(R"({"schema": "trainclock/config/v1", "model": "llama3.1-8b", "gpu": "a100-sxm4-80gb", "num_gpus": 1,
        "training": {"global_batch": 8, "micro_batch": 2, "optimizer_in_backward": true}})");
    REQUIRE_FALSE(accumulate.ok());
    CHECK(accumulate.error().key == "training.optimizer_in_backward");
}

TEST_CASE("activation offload keeps two layers of activations on the GPU and hides the transfers behind compute", "[finetune]") {
    const std::string body = R"("model": "llama3.1-8b", "gpu": "rtx-4090", "num_gpus": 1, "precision": "bf16",
        "training": {"seq_len": 2048, "global_batch": 8, "micro_batch": 2, "recompute": "full", "finetune": {"method": "lora", "lora_rank": 8})";
    const Config plain = fixtures::config(body + "}");
    const Config off = fixtures::config(body + R"(, "offload_activations": true})");
    const Execution x = make_execution(off);
    const double layer = activation_bytes_per_layer(x, layer_kind_at(off, 0));
    const Prediction a = predict(plain), b = predict(off);
    CHECK(b.memory[MemoryPart::activations] < a.memory[MemoryPart::activations]);
    CHECK(b.memory.activations_offloaded_gib == Approx(a.memory[MemoryPart::activations] - b.memory[MemoryPart::activations]));
    CHECK(b.memory.activations_offloaded_gib > 0);
    // Full recompute keeps only each layer's input (4096 x 4096 tokens x 2 B = 32 MiB per layer):
    // 32 layers x 32 MiB = 1 GiB each way per micro-batch, 40 ms at 26.6 GB/s, behind a forward of seconds.
    CHECK(layer == Approx(2.0 * 2048 * 4096 * 2));
    CHECK(b.activation_offload_s == 0);
    CHECK(b.iteration_time_s == Approx(a.iteration_time_s));
}

TEST_CASE("LoRA backward: the frozen base gets activation gradients only, the adapters their dgrad and wgrad", "[finetune]") {
    const std::string body = R"("model": "llama3.1-8b", "gpu": "rtx-4090", "num_gpus": 1, "precision": "bf16",
        "training": {"seq_len": 2048, "global_batch": 8, "micro_batch": 2)";
    const Config full = fixtures::config(body + "}");
    const Config lora = fixtures::config(body + R"(, "finetune": {"method": "lora", "lora_rank": 8}})");
    const Config qlora = fixtures::config(body + R"(, "finetune": {"method": "qlora", "lora_rank": 8}})");
    const PieceOps f = layer_ops(make_execution(full), layer_kind_at(full, 0));
    const PieceOps l = layer_ops(make_execution(lora), layer_kind_at(lora, 0));
    const PieceOps q = layer_ops(make_execution(qlora), layer_kind_at(qlora, 0));
    CHECK(has_op_containing(f.backward, "wgrad"));
    CHECK_FALSE(has_op_containing(f.backward, "lora"));
    // Four linears (qkv, o, up, down) of the base: dgrad everywhere, wgrad only in the adapters.
    CHECK(count_ops(l.backward, "dgrad") == count_ops(f.backward, "dgrad"));
    CHECK(count_ops(l.backward, "wgrad") == 0);
    CHECK(count_ops(l.backward, "lora_a_wgrad") == 4);
    CHECK(count_ops(l.backward, "lora_b_wgrad") == 4);
    // QLoRA dequantises every NF4 linear for the forward GEMM and again for the backward dgrad
    // (bitsandbytes MatMul4Bit: dequantize_4bit in forward and in backward).
    CHECK(count_ops(q.forward, "nf4_dequantize") == 4);
    CHECK(count_ops(q.backward, "nf4_dequantize") == 4);
    CHECK(count_ops(l.forward, "nf4_dequantize") == 0);
}

TEST_CASE("LoRA and QLoRA checkpoints hold the adapters and their optimizer states only", "[finetune]") {
    const std::string body =
        R"("model": "llama3.1-70b", "gpu": "a100-sxm4-80gb", "num_gpus": 2, "precision": "bf16-mixed", "parallel": {"zero": 3},
        "training": {"seq_len": 2048, "global_batch": 16, "micro_batch": 1, "recompute": "full", "tokens": 1e8)";
    const Config q = fixtures::config(body + R"(, "finetune": {"method": "qlora", "lora_rank": 8}})");
    double adapters = 0;
    for (int64_t i = 0; i < total_layers(q.model); ++i) adapters += layer_adapter_params(q, layer_kind_at(q, i));
    // bf16 adapter + fp32 master + two fp32 Adam states = 14 B per adapter weight; nothing of the base.
    CHECK(checkpoint_bytes(q) == Approx(adapters * 14));
    CHECK(checkpoint_bytes(q) < 0.01 * checkpoint_bytes(fixtures::config(body + "}")));
    // Frozen leading layers of a full fine-tuning: every weight, states for those that train.
    const Config frozen = fixtures::config(body + R"(, "finetune": {"frozen_layers": 40}})");
    const double all = double(parameter_count(frozen.model));
    double held = double(frozen.model.vocab) * double(frozen.model.hidden);
    for (int64_t i = 0; i < 40; ++i) held += double(layer_parameter_count(frozen.model, i, false));
    CHECK(checkpoint_bytes(frozen) == Approx(all * 2 + (all - held) * 12));
    // The whole run: QLoRA 70B no longer spends minutes per checkpoint.
    const Prediction p = predict(q);
    CHECK(p.run.checkpoint_write_s < 1.0);
}

TEST_CASE("one host checkpoints to its local NVMe SSD, not to a share of a 16K-GPU cluster's storage", "[finetune]") {
    const std::string body = R"("model": "llama3.1-8b", "gpu": "rtx-4090", "precision": "bf16",
        "training": {"seq_len": 2048, "global_batch": 16, "micro_batch": 2, "recompute": "full", "tokens": 1e8, "finetune": {"method": "lora", "lora_rank": 8})";
    const Prediction one = predict(fixtures::config(R"("num_gpus": 1, )" + body + "}"));
    CHECK(one.run.storage_bw_gbps == Approx(kLocalNvmeWriteGbps));
    CHECK(one.run.storage_local);
    bool stated = false;
    for (const std::string& w : one.warnings) stated = stated || w.find("local PCIe 4.0 NVMe SSD") != std::string::npos;
    CHECK(stated);
    // Two hosts of 4: the cluster share per GPU, as before.
    const Prediction two = predict(fixtures::config(R"("num_gpus": 8, )" + body + "}"));
    CHECK(two.run.storage_bw_gbps == Approx(kLlama3StorageGbpsPerGpu * 8));
    CHECK_FALSE(two.run.storage_local);
    // A given bandwidth wins on one host too.
    const Prediction given = predict(fixtures::config(R"("num_gpus": 1, )" + body + R"(, "storage_bw_gbps": 2})"));
    CHECK(given.run.storage_bw_gbps == 2);
}
