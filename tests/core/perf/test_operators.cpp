// Operator lists (FLOPs, bytes, precision ops) and the roofline cost of one op.
#include "model_fixtures.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/operators.hpp"
#include "trainclock/perf/prediction.hpp"

using namespace trainclock;

namespace {

double flops(const OpList& ops, OpKind kind) {
    double f = 0;
    for (const Op& op : ops)
        if (op.kind == kind) f += op.count * op.flops;
    return f;
}
double all_flops(const OpList& ops) {
    double f = 0;
    for (const Op& op : ops) f += op.count * op.flops;
    return f;
}
double bytes(const OpList& ops, OpKind kind) {
    double b = 0;
    for (const Op& op : ops)
        if (op.kind == kind) b += op.count * op.bytes;
    return b;
}

std::string gpt3(const char* precision, const char* training) {
    return R"("model": ")" + std::string("gpt3-175b") + R"(", "gpu": "a100-sxm4-80gb", "num_gpus": 1, "precision": ")" + precision +
           R"(", "training": )" + training;
}

// A square 8192 GEMM of `dtype` (large enough that shape losses are small).
Op square_gemm(DType dtype) {
    Op gemm{};
    gemm.kind = OpKind::gemm;
    gemm.dtype = dtype;
    gemm.m = gemm.n = gemm.k = 8192;
    gemm.flops = 2.0 * 8192 * 8192 * 8192;
    return gemm;
}

}  // namespace

TEST_CASE("GPT-3 175B forward FLOPs = 2 N s + attention term + LM head", "[operators]") {
    // Narayanan et al. SC'21 sec. 5.1: per layer 24 b s h^2 (GEMMs) + 4 b s^2 h (QK^T and AV);
    // the logit layer 2 b s h V. Materialised attention computes the full s x s matrix.
    const Config c =
        fixtures::config(gpt3("bf16-mixed", R"({"seq_len": 2048, "global_batch": 1, "micro_batch": 1, "flash_attention": false})"));
    const double s = 2048, h = c.model.hidden, V = c.model.vocab, l = c.model.layers;
    const PieceOps layer = layer_ops(make_execution(c), layer_kind_at(c.model, 0));
    CHECK(flops(layer.forward, OpKind::gemm) == Approx(24 * s * h * h));
    CHECK(flops(layer.forward, OpKind::attention) == Approx(4 * s * s * h));
    const PieceOps head = head_ops(make_execution(c));
    const double model_fwd = l * all_flops(layer.forward) + all_flops(head.forward);
    const double N = 12 * l * h * h;  // non-embedding weights (biases and norms have no GEMM FLOPs)
    CHECK(model_fwd == Approx(2 * N * s + 4 * l * s * s * h + 2 * s * h * V));
}

TEST_CASE("Backward GEMMs cost 2x forward, recompute adds the forward again", "[operators]") {
    const Config none = fixtures::config(
        gpt3("bf16-mixed", R"({"seq_len": 2048, "global_batch": 1, "micro_batch": 1, "flash_attention": false, "recompute": "none"})"));
    const LayerKind kind = layer_kind_at(none.model, 0);
    const PieceOps a = layer_ops(make_execution(none), kind);
    CHECK(flops(a.backward, OpKind::gemm) == Approx(2 * flops(a.forward, OpKind::gemm)));
    CHECK(flops(a.backward, OpKind::attention) == Approx(2 * flops(a.forward, OpKind::attention)));

    const Config full = fixtures::config(
        gpt3("bf16-mixed", R"({"seq_len": 2048, "global_batch": 1, "micro_batch": 1, "flash_attention": false, "recompute": "full"})"));
    const PieceOps f = layer_ops(make_execution(full), kind);
    CHECK(all_flops(f.backward) == Approx(3 * all_flops(f.forward)));  // Korthikanti et al. 2022: 4 passes total

    const Config sel = fixtures::config(gpt3(
        "bf16-mixed", R"({"seq_len": 2048, "global_batch": 1, "micro_batch": 1, "flash_attention": false, "recompute": "selective"})"));
    const PieceOps s = layer_ops(make_execution(sel), kind);
    CHECK(flops(s.backward, OpKind::attention) == Approx(3 * flops(s.forward, OpKind::attention)));
    CHECK(flops(s.backward, OpKind::gemm) == Approx(2 * flops(s.forward, OpKind::gemm)));
}

TEST_CASE("Flash attention skips masked blocks, fp32 falls back to materialised attention", "[operators]") {
    const Config flash =
        fixtures::config(gpt3("bf16-mixed", R"({"seq_len": 2048, "global_batch": 1, "micro_batch": 1, "flash_attention": true})"));
    const PieceOps a = layer_ops(make_execution(flash), layer_kind_at(flash.model, 0));
    const double s = 2048, h = flash.model.hidden;
    CHECK(flops(a.forward, OpKind::attention) == Approx(0.5 * 4 * s * s * h));
    // Flash: memory-bound bytes grow linearly with s; the materialised fp32 softmax grows as s^2.
    auto elementwise_bytes = [](const char* precision, int seq) {
        const Config c = fixtures::config(R"("model": "gpt3-175b", "gpu": "a100-sxm4-80gb", "num_gpus": 1, "precision": ")" +
                                          std::string(precision) + R"(", "training": {"seq_len": )" + std::to_string(seq) +
                                          R"(, "global_batch": 1, "micro_batch": 1, "flash_attention": true})");
        return bytes(layer_ops(make_execution(c), layer_kind_at(c.model, 0)).forward, OpKind::elementwise);
    };
    CHECK(elementwise_bytes("bf16-mixed", 4096) == Approx(2 * elementwise_bytes("bf16-mixed", 2048)));
    CHECK(elementwise_bytes("fp32", 4096) > 3 * elementwise_bytes("fp32", 2048));
}

TEST_CASE("Precision-only ops appear exactly when the precision asks for them", "[operators]") {
    const char* training = R"({"seq_len": 2048, "global_batch": 1, "micro_batch": 1})";
    const Config mixed = fixtures::config(
        R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16-mixed", "training": )" + std::string(training));
    const Config amp = fixtures::config(R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16-amp", "training": )" +
                                        std::string(training));
    const Config fp8 = fixtures::config(
        R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "fp8-mixed", "training": )" + std::string(training));
    const LayerKind kind = layer_kind_at(mixed.model, 0);
    CHECK(bytes(layer_ops(make_execution(mixed), kind).forward, OpKind::precision_overhead) == 0);
    // Autocast: the fp32 weights of every GEMM are re-cast each forward: at least 6 bytes per weight.
    const double weights = layer_params_local(make_execution(amp), kind) - 2 * amp.model.hidden;
    CHECK(bytes(layer_ops(make_execution(amp), kind).forward, OpKind::precision_overhead) >= 6 * weights);
    // FP8: cast-transpose of every GEMM input and weight forward and of the gradients backward.
    const PieceOps f = layer_ops(make_execution(fp8), kind);
    CHECK(bytes(f.forward, OpKind::precision_overhead) > 0);
    CHECK(bytes(f.backward, OpKind::precision_overhead) > 0);
    for (const Op& op : f.forward)
        if (op.kind == OpKind::gemm) CHECK(op.dtype == DType::fp8);
    // Optimizer step: master copy for mixed, unscale/check only with dynamic loss scaling.
    bool master = false, unscale = false;
    for (const Op& op : step_ops(make_execution(mixed), 1e9, 1e9)) {
        master = master || std::string(op.name) == "master_weight_copy";
        unscale = unscale || std::string(op.name) == "loss_scale_unscale_check";
    }
    CHECK(master);
    CHECK_FALSE(unscale);
    const Config fp16 = fixtures::config(
        R"("model": "llama3-8b", "gpu": "a100-sxm4-80gb", "num_gpus": 1, "precision": "fp16-mixed", "training": )" + std::string(training));
    unscale = false;
    for (const Op& op : step_ops(make_execution(fp16), 1e9, 1e9)) unscale = unscale || std::string(op.name) == "loss_scale_unscale_check";
    CHECK(unscale);
}

TEST_CASE("GEMM dtype sets the peak: fp32 on V100 runs on CUDA cores", "[operators]") {
    const GpuSpec v100 = fixtures::gpu("v100-sxm2-32gb");
    CHECK(compute_dtype(v100, DType::fp32) == DType::fp32);
    CHECK(compute_dtype(v100, DType::tf32) == DType::fp32);  // no TF32 tensor cores on Volta
    CHECK(compute_dtype(v100, DType::bf16) == DType::fp16);
    const Calibration cal = resolve_calibration(v100, {});
    const Op gemm = square_gemm(DType::fp32);
    const double eff = gemm_efficiency(gemm, v100, cal);
    CHECK(op_time_s(gemm, v100, cal) == Approx(gemm.flops / (15.7e12 * eff)));
    CHECK(v100.peak_flops(DType::fp32) == Approx(15.7e12));
}

TEST_CASE("Large GEMMs: fp32 slower than tf32 on A100, fp8 faster than bf16 on H100", "[operators]") {
    Op gemm{};
    gemm.kind = OpKind::gemm;
    gemm.m = gemm.n = gemm.k = 8192;
    gemm.flops = 2.0 * 8192 * 8192 * 8192;
    gemm.bytes = 3.0 * 8192 * 8192 * 2;
    const GpuSpec a100 = fixtures::gpu("a100-sxm4-80gb"), h100 = fixtures::gpu("h100-sxm");
    const Calibration ca = resolve_calibration(a100, {}), ch = resolve_calibration(h100, {});
    auto at = [&](const GpuSpec& g, const Calibration& c, DType d) {
        Op o = gemm;
        o.dtype = d;
        return op_time_s(o, g, c);
    };
    CHECK(at(a100, ca, DType::fp32) > 4 * at(a100, ca, DType::tf32));
    CHECK(at(a100, ca, DType::tf32) > 1.5 * at(a100, ca, DType::bf16));
    CHECK(at(h100, ch, DType::fp8) < at(h100, ch, DType::bf16));
    // ...but by less than the 2x of the peaks: FP8 reaches a lower fraction (MAMF 0.709 vs 0.803).
    CHECK(at(h100, ch, DType::bf16) / at(h100, ch, DType::fp8) == Approx(2 * 0.709 / 0.803).epsilon(0.01));
}

TEST_CASE("A measured sustained clock slows compute, not HBM traffic (B200: 1580 MHz of the 1965 MHz boost)", "[operators]") {
    GpuSpec b200 = fixtures::gpu("b200");
    // The ratio scales gemm_efficiency (MAMF / peak), measured in short bursts at the 1965 MHz boost
    // (VeOmni PR #986), not at the datasheet peak's clock 2250 TFLOP/s / (148 SMs x 8192 FLOP per
    // clock) = 1856 MHz; sustained 1580 MHz at ~1000 W (flashinfer PR #2899).
    const double datasheet_clock_hz = 2250e12 / (148 * 8192.0), boost_clock_hz = 1965e6;
    CHECK(b200.measured_sustained_clock == Approx(1580e6 / boost_clock_hz).epsilon(0.001));
    CHECK(b200.measured_sustained_clock < 1580e6 / datasheet_clock_hz - 0.03);
    const Calibration cal = resolve_calibration(b200, {});
    const Op gemm = square_gemm(DType::bf16);
    Op copy{};
    copy.kind = OpKind::elementwise;
    copy.dtype = DType::bf16;
    copy.bytes = 1e9;
    const double gemm_s = op_time_s(gemm, b200, cal), copy_s = op_time_s(copy, b200, cal);
    CHECK(gemm_s == Approx(gemm.flops / (2250e12 * b200.measured_sustained_clock * gemm_efficiency(gemm, b200, cal))));
    b200.measured_sustained_clock = 0;  // no figure: the datasheet (boost-clock) peak
    CHECK(op_time_s(gemm, b200, cal) == Approx(gemm_s * 1580e6 / boost_clock_hz).epsilon(0.001));
    CHECK(op_time_s(copy, b200, cal) == Approx(copy_s));
}

TEST_CASE("A kernel alone runs at boost clock, the large-GEMM figure and the HBM stream figure, plus its device latency", "[operators]") {
    const GpuSpec b200 = fixtures::gpu("b200");
    const Calibration cal = resolve_calibration(b200, {});
    const Op gemm = square_gemm(DType::bf16);
    Op copy{};
    copy.kind = OpKind::elementwise;
    copy.dtype = DType::bf16;
    copy.bytes = 1e9;
    copy.count = 3;
    // Training: sustained clock and gemm_sustained; alone: neither.
    CHECK(op_time_s(gemm, b200, cal, kAlone) ==
          Approx(op_time_s(gemm, b200, cal, kInTraining) * b200.measured_sustained_clock * cal.gemm_sustained));
    CHECK(op_time_s(gemm, b200, cal) == op_time_s(gemm, b200, cal, kInTraining));  // the default is training
    // HBM: a stream alone, the training-kernel fraction of it in training.
    CHECK(op_time_s(copy, b200, cal, kAlone) == Approx(1e9 / (7700e9 * cal.memory_stream_efficiency)));
    CHECK(cal.memory_efficiency < cal.memory_stream_efficiency);
    // One kernel alone: every execution plus one device latency.
    CHECK(cal.kernel_device_latency_s > 0);
    CHECK(kernel_alone_s(copy, b200, cal) == Approx(cal.kernel_device_latency_s + 3 * op_time_s(copy, b200, cal, kAlone)));
}

TEST_CASE("A GEMM alone near its ridge point runs below the roofline max, in training at it", "[operators]") {
    const GpuSpec h200 = fixtures::gpu("h200-sxm");
    const Calibration cal = resolve_calibration(h200, {});
    // The Azure narrow GEMM (802816 x 192 x 768, FP8): compute and memory times of the same order.
    const Op gemm = linear_fprop_op("gemm", DType::fp8, 802816, 768, 192, 1.0, 2.0, 1);
    const double peak = h200.peak_flops(DType::fp8);
    const double compute_alone = gemm.flops / (peak * gemm_efficiency(gemm, h200, cal, kAlone));
    const double memory_alone = gemm.bytes / (h200.memory_bw_gbps * 1e9 * cal.memory_stream_efficiency);
    REQUIRE(std::min(compute_alone, memory_alone) > 0.3 * std::max(compute_alone, memory_alone));
    const double alone = op_time_s(gemm, h200, cal, kAlone);
    CHECK(alone > 1.05 * std::max(compute_alone, memory_alone));  // the exposed fill and stores
    CHECK(alone < compute_alone + memory_alone);                  // the mainloop still overlaps
    // In training: the roofline max of the training figures.
    const double compute_training = gemm.flops / (peak * gemm_efficiency(gemm, h200, cal, kInTraining));
    const double memory_training = gemm.bytes / (h200.memory_bw_gbps * 1e9 * cal.memory_efficiency);
    CHECK(op_time_s(gemm, h200, cal, kInTraining) == Approx(std::max(compute_training, memory_training)));
    // A memory-bound op that is not a GEMM keeps the roofline alone too.
    Op copy{};
    copy.kind = OpKind::elementwise;
    copy.dtype = DType::bf16;
    copy.bytes = 1e9;
    copy.flops = 1e9;
    CHECK(op_time_s(copy, h200, cal, kAlone) == Approx(1e9 / (h200.memory_bw_gbps * 1e9 * cal.memory_stream_efficiency)));
}

TEST_CASE("Stream-K: alone on Hopper a long-K GEMM with a partial last wave keeps its SMs busy", "[operators]") {
    const GpuSpec h100 = fixtures::gpu("h100-sxm");
    const GpuSpec a100 = fixtures::gpu("a100-sxm4-80gb");
    // ml-engineering's best FP8 MAMF shape on H100 (1024 x 9216 x 14336): 576 tiles of 128 x 128 are
    // 4.4 waves over 132 SMs, which a data-parallel grid rounds up to 5.
    Op gemm = linear_fprop_op("gemm", DType::fp8, 1024, 14336, 9216, 1.0, 2.0, 1);
    const Calibration cal = resolve_calibration(h100, {});
    const double base = cal.gemm_efficiency[static_cast<int>(DType::fp8)];
    const double alone = gemm_efficiency(gemm, h100, cal, kAlone) / base;
    const double training = gemm_efficiency(gemm, h100, cal, kInTraining) / (base * cal.gemm_sustained);
    CHECK(alone > 0.95);
    CHECK(training < 0.9);  // in training: the data-parallel grid (stream-K only alone)
    // Ampere (no FP8 units): no stream-K candidate, alone or not.
    gemm.dtype = DType::bf16;
    const Calibration ampere = resolve_calibration(a100, {});
    CHECK(gemm_efficiency(gemm, a100, ampere, kAlone) == Approx(gemm_efficiency(gemm, a100, ampere, kInTraining) / ampere.gemm_sustained));
}

TEST_CASE("A grouped GEMM rounds its padded expert rows to the M tile once, alone and in training", "[operators]") {
    const GpuSpec h800 = fixtures::gpu("h800-sxm");
    const Calibration cal = resolve_calibration(h800, {});
    REQUIRE(cal.grouped_gemm_rate == 1.0);
    REQUIRE(cal.grouped_m_half_rows == 0.0);
    // 4 experts of 256 token rows each, padded by half a 128-row tile (expert_group_rows).
    Op dense = linear_fprop_op("mlp_up", DType::fp8, expert_group_rows(256, 4), 7168, 4096, 1.0, 2.0, 4);
    Op grouped = dense;
    grouped.grouped = true;
    // 2.5 M tiles per expert, not ceil(320 / 128) = 3, in either context.
    CHECK(gemm_efficiency(grouped, h800, cal, kAlone) > 1.1 * gemm_efficiency(dense, h800, cal, kAlone));
    CHECK(gemm_efficiency(grouped, h800, cal, kInTraining) > 1.05 * gemm_efficiency(dense, h800, cal, kInTraining));
}

TEST_CASE("Fused attention: the backward kernel runs slower than the forward, the layer's mean rate is the calibration's", "[operators]") {
    const GpuSpec h100 = fixtures::gpu("h100-sxm");
    const Calibration cal = resolve_calibration(h100, {});
    Op fwd{};
    fwd.name = "flash_attention";
    fwd.kind = OpKind::attention;
    fwd.dtype = DType::bf16;
    fwd.flops = 1e12;
    Op bwd = fwd;
    bwd.name = "flash_attention_bwd";
    bwd.flops = 2.5e12;
    const double t_fwd = op_time_s(fwd, h100, cal), t_bwd = op_time_s(bwd, h100, cal);
    CHECK(bwd.flops / t_bwd < fwd.flops / t_fwd);
    CHECK((fwd.flops + bwd.flops) / (t_fwd + t_bwd) == Approx(989.5e12 * cal.attention_efficiency));
    // Alone, FlashAttention-2 runs faster than the end-to-end-fitted training figure.
    CHECK(op_time_s(fwd, h100, cal, kAlone) < t_fwd);
}

TEST_CASE("Wave quantisation: one tile more than the SMs costs a second wave", "[operators]") {
    const GpuSpec a100 = fixtures::gpu("a100-sxm4-80gb");
    const Calibration cal = resolve_calibration(a100, {});
    Op full{};
    full.kind = OpKind::gemm;
    full.dtype = DType::bf16;
    full.k = 4096;
    full.m = 256.0 * 9;  // 9 x 12 = 108 tiles of 256 x 128 = one full wave on 108 SMs
    full.n = 128.0 * 12;
    Op spill = full;
    spill.n = 128.0 * 12 + 1;  // a sliver more: partial tiles or a second wave
    CHECK(gemm_efficiency(spill, a100, cal) < gemm_efficiency(full, a100, cal));
    // Memory-bound op: time = bytes / (bandwidth x efficiency).
    Op ew{};
    ew.kind = OpKind::elementwise;
    ew.bytes = 1e9;
    CHECK(op_time_s(ew, a100, cal) == Approx(1e9 / (a100.memory_bw_gbps * 1e9 * cal.memory_efficiency)));
}

TEST_CASE("Short K and small tiles cost in proportion to the dtype's peak: fp32 CUDA cores lose less", "[operators]") {
    const GpuSpec v100 = fixtures::gpu("v100-sxm2-32gb");
    const Calibration cal = resolve_calibration(v100, {});
    auto efficiency = [&](DType d, double m, double n, double k) {
        Op op{};
        op.kind = OpKind::gemm;
        op.dtype = d;
        op.m = m, op.n = n, op.k = k;
        return gemm_efficiency(op, v100, cal) / cal.gemm_efficiency[int(compute_dtype(v100, d))] /
               (d == DType::fp32 ? 1.0 : cal.gemm_sustained);
    };
    // One full wave of 256 x 128 tiles (80 SMs = 8 x 10 tiles): only the K prologue/epilogue is lost,
    // at k / (k + k_half) with k_half = 64 on the tensor cores and 64 x 15.7 / 125 = 8 on CUDA cores.
    CHECK(efficiency(DType::fp16, 2048, 1280, 64) == Approx(64.0 / 128.0));
    CHECK(efficiency(DType::fp32, 2048, 1280, 64) == Approx(64.0 / (64.0 + 64.0 * 15.7 / 125.0)));
    // A C 64 wide: best as 40 tiles of 128 x 64 split 2 ways over K (one wave), whose operand-reuse
    // loss (0.85 on tensor cores) shrinks by peak ratio x operand width (15.7 / 125 x 4 / 2 = 0.25)
    // on CUDA cores.
    const double k = 1e6;  // K prologue negligible
    CHECK(efficiency(DType::fp16, 64 * 80, 64, k) == Approx(0.85).epsilon(1e-3));
    CHECK(efficiency(DType::fp32, 64 * 80, 64, k) == Approx(1 - 0.15 * 15.7 / 125 * 2).epsilon(1e-3));
}

TEST_CASE("Split-K fills the SMs for a few output tiles over a long K (weight gradients)", "[operators]") {
    const GpuSpec a100 = fixtures::gpu("a100-sxm4-80gb");  // 108 SMs
    const Calibration cal = resolve_calibration(a100, {});
    Op wgrad{};
    wgrad.kind = OpKind::gemm;
    wgrad.dtype = DType::bf16;
    wgrad.m = 256, wgrad.n = 128 * 27;  // 27 tiles of 256 x 128: a quarter of the SMs without a split
    wgrad.k = 65536;
    const double base = cal.gemm_efficiency[int(DType::bf16)] * cal.gemm_sustained;
    // Split 4 ways: 108 tiles = one full wave, each slice of K = 16384 (its own prologue/epilogue).
    CHECK(gemm_efficiency(wgrad, a100, cal) == Approx(base * 16384.0 / (16384.0 + 64.0)));
    Op short_k = wgrad;
    short_k.k = 256;  // splitting a short K costs more prologue than it wins: still better than a quarter
    CHECK(gemm_efficiency(short_k, a100, cal) > base * 0.25 * 256.0 / (256.0 + 64.0));
}

TEST_CASE("Transformer-XL keys: memory widens Q/K/V and scores, relative position adds BD, adaptive head", "[operators]") {
    // Dai et al. 2019 sec. 3.3: queries of the segment (s) attend over s + mem keys; Q/K/V are projected
    // over the concatenated [memory, segment]; the relative term BD is a second QK^T-sized matmul.
    const std::string base =
        R"("gpu": "v100-sxm2-16gb", "num_gpus": 1, "precision": "fp32", "training": {"seq_len": 192, "global_batch": 16, "micro_batch": 16, "flash_attention": false}, "model": )";
    const std::string txl =
        R"({"architecture": "decoder", "layers": 16, "hidden": 512, "heads": 8, "ffn_hidden": 2048, "vocab": 267735, "activation": "relu", "norm": "layernorm", "tied_embeddings": true)";
    const Config plain = fixtures::config(base + txl + "}");
    const Config mem = fixtures::config(base + txl + R"(, "memory_len": 192})");
    const Config rel = fixtures::config(base + txl + R"(, "memory_len": 192, "relative_position": true, "softmax_head": 20000})");
    const LayerKind kind = layer_kind_at(plain.model, 0);
    const double b = 16, s = 192, m = 192, h = 512;
    const PieceOps p = layer_ops(make_execution(plain), kind), q = layer_ops(make_execution(mem), kind),
                   r = layer_ops(make_execution(rel), kind);
    // QKV over b (s + m) tokens instead of b s: 2 b m h (3h) more forward GEMM FLOPs.
    CHECK(flops(q.forward, OpKind::gemm) - flops(p.forward, OpKind::gemm) == Approx(2 * b * m * h * 3 * h));
    // Scores and context over s + m keys: attention FLOPs scale by (s + m) / s.
    CHECK(flops(q.forward, OpKind::attention) == Approx(flops(p.forward, OpKind::attention) * (s + m) / s));
    // Relative position: BD doubles the QK^T half of the attention FLOPs and adds score-sized copies.
    CHECK(flops(r.forward, OpKind::attention) == Approx(1.5 * flops(q.forward, OpKind::attention)));
    CHECK(bytes(r.forward, OpKind::elementwise) > bytes(q.forward, OpKind::elementwise));
    // Adaptive softmax head: the LM head computes softmax_head logits, not the 267k embedding rows.
    const PieceOps head_full = head_ops(make_execution(mem)), head_adaptive = head_ops(make_execution(rel));
    CHECK(flops(head_adaptive.forward, OpKind::gemm) == Approx(flops(head_full.forward, OpKind::gemm) * 20000.0 / 267735.0));
}

TEST_CASE("A per-tensor optimizer dispatches a fixed number of ops per parameter tensor, per stage", "[operators]") {
    const auto with = [](const char* optimizer, int pp, const char* model) {
        return fixtures::config(std::string(R"("model": ")") + model + R"(", "gpu": "h100-sxm", "num_gpus": )" + std::to_string(pp) +
                                R"(, "precision": "bf16-mixed", "parallel": {"pp": )" + std::to_string(pp) +
                                R"(}, "training": {"seq_len": 2048, "global_batch": 8, "micro_batch": 1, "optimizer": ")" + optimizer +
                                R"("})");
    };
    auto per_tensor_optimizer_kernels = [](const Config& c) { return trainclock::per_tensor_optimizer_kernels(make_execution(c)); };
    CHECK(per_tensor_optimizer_kernels(with("lamb", 1, "llama3-8b")) == 0);  // multi-tensor fused
    CHECK(per_tensor_optimizer_kernels(with("adamw", 1, "llama3-8b")) == 0);
    const double one = per_tensor_optimizer_kernels(with("lamb-per-tensor", 1, "llama3-8b"));
    // Llama: 2 RMSNorm scales + QKV + output + 3 gated FFN matrices = 7 tensors per layer, 32 layers.
    CHECK(one >= 7 * 32);
    CHECK(one < 8 * 32 * 7);
    CHECK(per_tensor_optimizer_kernels(with("lamb-per-tensor", 4, "llama3-8b")) == Approx(one / 4));
}

TEST_CASE("Eager per-tensor loops launch BertAdam's 12 kernels, or the clipping's 2, per parameter tensor, per stage", "[operators]") {
    const auto with = [](const char* optimizer, int pp, const char* model) {
        return fixtures::config(std::string(R"("model": ")") + model + R"(", "gpu": "a100-sxm4-40gb", "num_gpus": )" + std::to_string(pp) +
                                R"(, "precision": "fp32", "parallel": {"pp": )" + std::to_string(pp) +
                                R"(}, "training": {"seq_len": 384, "global_batch": 16, "micro_batch": 16, "optimizer": ")" + optimizer +
                                R"("})");
    };
    auto kernels = [](const Config& c) { return per_tensor_eager_kernels(make_execution(c)); };
    CHECK(kernels(with("adamw", 1, "bert-large")) == 0);
    // Transformer-XL's loop: the clipping's norm and mul_ per tensor (its TorchScript LAMB call is
    // per_tensor_optimizer_kernels); its tensors: 2 LayerNorms (4) + fused QKV + output + 2 FFN
    // matrices with biases (4) = 10 per layer, + embedding + final LayerNorm (3).
    CHECK(kernels(with("lamb-per-tensor", 1, "bert-large")) == Approx((24 * 10 + 3) * 2));
    const Config txl_like = with("lamb-per-tensor", 1, "bert-large");
    CHECK(per_tensor_optimizer_kernels(make_execution(txl_like)) == Approx((24 * 10 + 3) * 3));
    // BERT-large (DLE modeling.py): q, k, v, attention output, intermediate and output Linears with
    // biases (12) + 2 LayerNorms (4) = 16 tensors per layer, 24 layers, + embedding + final LayerNorm (3).
    CHECK(kernels(with("adamw-per-tensor", 1, "bert-large")) == Approx((24 * 16 + 3) * 12));
    // Llama (no biases): 2 RMSNorm scales + q, k, v, o + 3 gated FFN matrices = 9 per layer, 32 layers, + 2.
    CHECK(kernels(with("adamw-per-tensor", 1, "llama3-8b")) == Approx((32 * 9 + 2) * 12));
    CHECK(kernels(with("adamw-per-tensor", 4, "llama3-8b")) == Approx((32 * 9 + 2) * 12 / 4.0));
    // fp32 everything: 24 state + 3 gradient + 3 weight passes of 4 bytes (the comment's hand sum).
    CHECK(eager_adamw_bytes_per_param(4, 4, 4) == Approx(120));
    // The step's optimizer traffic is those 120 bytes per parameter instead of fused Adam's
    // grad + 2 weight + 4 state = 28.
    const auto optimizer_bytes = [](const Config& c) {
        double b = 0;
        for (const Op& op : step_ops(make_execution(c), 1e6, 1e6))
            if (std::string(op.name) == "optimizer_step") b += op.bytes;
        return b;
    };
    CHECK(optimizer_bytes(with("adamw-per-tensor", 1, "bert-large")) == Approx(120e6));
    CHECK(optimizer_bytes(with("adamw", 1, "bert-large")) == Approx(28e6));
}

TEST_CASE("Apex amp O2 allocates each fp32 master gradient from Python every step: one host op per parameter tensor", "[operators]") {
    const auto with = [](const char* precision, const char* framework, int seq, int batch) {
        return fixtures::config(std::string(R"("model": "bert-large", "gpu": "v100-sxm2-16gb", "num_gpus": 1, "precision": ")") +
                                precision + R"(", "framework": )" + framework + R"(, "training": {"seq_len": )" + std::to_string(seq) +
                                R"(, "global_batch": )" + std::to_string(batch) + R"(, "micro_batch": )" + std::to_string(batch) +
                                R"(, "optimizer": "lamb-per-tensor"})");
    };
    const char* apex = R"({"preset": "pytorch", "amp_master_grads_per_tensor": true})";
    const char* plain = R"({"preset": "pytorch", "amp_master_grads_per_tensor": false})";
    auto host_ops = [](const Config& c) { return amp_master_grad_host_ops(make_execution(c)); };
    const double tensors = 24 * 10 + 3;  // the Transformer-XL-style count of the test above
    CHECK(host_ops(with("fp16-mixed", apex, 384, 2)) == Approx(tensors));
    CHECK(host_ops(with("fp16-mixed", plain, 384, 2)) == 0);
    CHECK(host_ops(with("fp16-amp", apex, 384, 2)) == 0);  // torch.cuda.amp: no master copy, GradScaler unscales in one foreach call
    CHECK(host_ops(with("fp32", apex, 384, 2)) == 0);
    const auto extra = [&](int seq, int batch) {
        return predict(with("fp16-mixed", apex, seq, batch)).iteration_time_s -
               predict(with("fp16-mixed", plain, seq, batch)).iteration_time_s;
    };
    // A host-bound backward (8 tokens: dispatch outlasts nearly every phase's kernels) leaves the
    // host (almost) no lead, so the allocations add nearly in full at eager_op_host_s each ...
    CHECK(extra(8, 1) > 0.9 * tensors * 15e-6);
    CHECK(extra(8, 1) <= tensors * 15e-6 + 1e-12);
    // ... while a GPU-bound one (2 x 384 tokens) hides them behind the GPU's queued backward.
    CHECK(extra(384, 2) == Approx(0).margin(1e-12));
    // The DLE stack (framework pytorch) runs Apex O2 for its fp16-mixed rows.
    CHECK(host_ops(with("fp16-mixed", R"("pytorch")", 384, 2)) == Approx(tensors));
    CHECK(host_ops(with("fp16-mixed", R"("megatron-lm")", 384, 2)) == 0);
}

namespace {

double gemm_flops_named(const OpList& ops, const char* prefix) {
    double f = 0;
    for (const Op& op : ops)
        if (op.kind == OpKind::gemm && std::string(op.name).rfind(prefix, 0) == 0) f += op.count * op.flops;
    return f;
}

}  // namespace

TEST_CASE("MLA forward FLOPs follow the DeepSeek-V2 formulas", "[operators]") {
    // arXiv 2405.04434 eqs. 9-19 per token: c^Q = W^DQ h (2 d d_c'), [q^C; q^R] = W^UQ/W^QR c^Q
    // (2 d_c' n_h (d_h + d_h^R)), [c^KV; k^R] (2 d (d_c + d_h^R)), [k^C; v^C] = W^UK/W^UV c^KV
    // (2 d_c n_h (d_h + d_v)), u = W^O o (2 n_h d_v d); attention q k^T over n_h (d_h + d_h^R) and
    // softmax(.) v over n_h d_v per key, s / 2 keys per query when causal (the FLOP convention here).
    const Config c = fixtures::config(R"("model": "deepseek-v3", "gpu": "h800-sxm", "num_gpus": 1, "precision": "bf16-mixed",
                                         "training": {"seq_len": 4096, "global_batch": 1, "micro_batch": 1})");
    const double s = 4096, d = 7168, nh = 128, dh = 128, dr = 64, dv = 128, dc = 512, dq = 1536;
    const LayerKind dense = layer_kind_at(c.model, 0);
    const PieceOps layer = layer_ops(make_execution(c), dense);
    const double projections = 2 * s * (d * dq + dq * nh * (dh + dr) + d * (dc + dr) + dc * nh * (dh + dv));
    CHECK(gemm_flops_named(layer.forward, "mla_") == Approx(projections));
    CHECK(gemm_flops_named(layer.forward, "attn_out") == Approx(2 * s * nh * dv * d));
    CHECK(flops(layer.forward, OpKind::attention) == Approx(2 * s * (s / 2) * nh * (dh + dr + dv)));
    // TP 8 splits the up projections and heads, not the duplicated down projections.
    const Config tp = fixtures::config(R"("model": "deepseek-v3", "gpu": "h800-sxm", "num_gpus": 8, "precision": "bf16-mixed",
                                          "parallel": {"tp": 8}, "training": {"seq_len": 4096, "global_batch": 1, "micro_batch": 1})");
    const PieceOps split = layer_ops(make_execution(tp), dense);
    CHECK(gemm_flops_named(split.forward, "mla_") ==
          Approx(2 * s * (d * dq + d * (dc + dr) + (dq * nh * (dh + dr) + dc * nh * (dh + dv)) / 8)));
}

TEST_CASE("Sliding-window attention FLOPs match the closed form, chunked and short sequences too", "[operators]") {
    auto mistral = [](int64_t seq) {
        return fixtures::config(R"("model": "mistral-7b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16-mixed",
                                   "training": {"seq_len": )" +
                                std::to_string(seq) + R"(, "global_batch": 1, "micro_batch": 1})");
    };
    const double w = 4096, H = 32, hd = 128;
    const Config c = mistral(32768);
    const double s = 32768;
    const LayerKind kind = layer_kind_at(c.model, 0);
    REQUIRE(kind.local);
    // Query i attends to min(i, w) keys: sum over the sequence = w^2 / 2 + (s - w) w (continuous, as
    // causal attention counts s^2 / 2); 4 H d per query-key pair forward (QK^T and PV).
    CHECK(flops(layer_ops(make_execution(c), kind).forward, OpKind::attention) == Approx(4 * H * hd * (w * w / 2 + (s - w) * w)));
    // The discrete count sum_i min(i + 1, w) agrees to O(1 / w).
    double pairs = 0;
    for (double i = 0; i < s; ++i) pairs += std::min(i + 1, w);
    CHECK(attended_keys(c.model, kind, s) * s == Approx(pairs).epsilon(1.0 / w));
    // Within the window the layer is plain causal attention.
    const Config short_seq = mistral(4096);
    CHECK(flops(layer_ops(make_execution(short_seq), kind).forward, OpKind::attention) == Approx(4 * H * hd * 4096.0 * 4096.0 / 2));
    // Llama 4 chunked attention (8192-token chunks) over 32768 tokens: 4 causal chunks.
    const ModelSpec scout = fixtures::model("llama4-scout");
    CHECK(attended_keys(scout, layer_kind_at(scout, 0), 32768) == Approx(4 * 8192.0 * 8192.0 / 2 / 32768));
    CHECK(!layer_kind_at(scout, 3).local);  // every 4th layer global
    CHECK(attended_keys(scout, layer_kind_at(scout, 3), 32768) == Approx(32768.0 / 2));
}

TEST_CASE("Expert load imbalance and capacity factor scale the busiest rank's expert GEMMs", "[operators]") {
    auto mixtral = [](const char* moe_extra, int64_t ep) {
        return fixtures::config(R"("model": {"architecture": "decoder", "layers": 2, "hidden": 4096, "heads": 32, "kv_heads": 8,
                                   "ffn_hidden": 0, "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm",
                                   "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 14336)" +
                                std::string(moe_extra) + R"(}},
                                   "gpu": "h100-sxm", "num_gpus": )" +
                                std::to_string(ep) + R"(, "parallel": {"ep": )" + std::to_string(ep) +
                                R"(}, "training": {"seq_len": 4096, "global_batch": )" + std::to_string(ep) + R"(, "micro_batch": 1})");
    };
    const Config balanced = mixtral("", 8), skewed = mixtral(R"(, "imbalance": 1.5)", 8);
    const Config capped = mixtral(R"(, "imbalance": 1.5, "capacity_factor": 1.25)", 8);
    const LayerKind kind = layer_kind_at(balanced.model, 0);
    const double base = gemm_flops_named(layer_ops(make_execution(balanced), kind).forward, "mlp_");
    // One expert per GPU (ep = experts): the busiest GPU runs 1.5x the mean tokens, or the capacity.
    CHECK(gemm_flops_named(layer_ops(make_execution(skewed), kind).forward, "mlp_") == Approx(1.5 * base));
    CHECK(gemm_flops_named(layer_ops(make_execution(capped), kind).forward, "mlp_") == Approx(1.25 * base));
    CHECK(expert_load_factor(skewed.model, skewed.parallel) == Approx(1.5));
    // Eight experts on one GPU: the busiest expert is one of eight, (1.5 + 7) / 8.
    CHECK(expert_load_factor(skewed.model, ParallelSpec{}) == Approx(8.5 / 8));
    // Grouped GEMM of 8 local experts: each group padded by half a 128-row tile on average.
    const Config one = mixtral("", 1);
    const double rows = 4096.0 * 2 / 8;                                  // T top_k / experts per expert
    const double up_flops = 8 * 2 * (rows + 64) * (2 * 14336.0) * 4096;  // 8 experts of (rows + 64) x h by h x 2f (gate + up)
    double up = 0;
    for (const Op& op : layer_ops(make_execution(one), kind).forward)
        if (std::string(op.name) == "mlp_up" && op.count == 8) up += op.count * op.flops;
    CHECK(up == Approx(up_flops));
}

TEST_CASE("MoE token reordering and router kernels follow each framework's code", "[operators]") {
    // 16 experts of width 2048, top 2, one shared expert, bf16, 4096 tokens per micro-batch.
    auto moe = [](const char* framework, int64_t ep, const char* moe_extra, const char* training_extra) {
        return fixtures::config(std::string(R"("model": {"architecture": "decoder", "layers": 2, "hidden": 4096, "heads": 32, "kv_heads": 8,
                                   "ffn_hidden": 0, "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm",
                                   "moe": {"experts": 16, "top_k": 2, "expert_ffn_hidden": 2048, "shared_experts": 1)") +
                                moe_extra + R"(}}, "gpu": "b200", "framework": ")" + framework + R"(", "num_gpus": )" + std::to_string(ep) +
                                R"(, "parallel": {"ep": )" + std::to_string(ep) + R"(}, "training": {"seq_len": 4096, "global_batch": )" +
                                std::to_string(ep) + R"(, "micro_batch": 1)" + training_extra + "}");
    };
    auto named = [](const OpList& ops, const char* name) {
        int n = 0;
        double bytes = 0;
        for (const Op& op : ops)
            if (std::string(op.name) == name) ++n, bytes += op.count * op.bytes;
        return std::make_pair(n, bytes);
    };
    const double T = 4096, h = 4096, routed = T * 2, w = 2;
    // Megatron-Core's alltoall dispatcher with 4 local experts sorts the received rows by local expert
    // and back (sort_chunks_by_idxs), forward and backward; one local expert needs no sort.
    const Config mcore = moe("megatron-core", 4, "", R"(, "moe_dispatcher": "alltoall")");
    const PieceOps m = layer_ops(make_execution(mcore), layer_kind_at(mcore.model, 0));
    for (const OpList* ops : {&m.forward, &m.backward}) {
        CHECK(named(*ops, "moe_sort_chunks") == std::make_pair(1, 2 * routed * h * w));
        CHECK(named(*ops, "moe_unsort_chunks") == std::make_pair(1, 2 * routed * h * w));
        CHECK(named(*ops, "moe_pad_permute").first == 0);
        CHECK(named(*ops, "shared_expert_add") == std::make_pair(1, 3 * T * h * w));
        CHECK(named(*ops, "moe_unpermute_zero_fill") == std::make_pair(1, T * h * w));
    }
    // Its dispatch all-gathers the token counts per expert first (forward) and sends the routing
    // probabilities in an all-to-all of their own (their gradient back in the backward).
    auto comm = [](const CommList& list, const char* name) {
        for (const CommOp& c : list)
            if (std::string(c.name) == name) return std::make_pair(c.collective, c.bytes);
        return std::make_pair(Collective::p2p, 0.0);
    };
    CHECK(comm(m.comm_forward, "ep_token_counts") == std::make_pair(Collective::all_gather, 4.0 * 16 * 8));
    CHECK(comm(m.comm_backward, "ep_token_counts").second == 0);
    CHECK(comm(m.comm_forward, "ep_probs_all_to_all") == std::make_pair(Collective::all_to_all, routed * w));
    CHECK(comm(m.comm_backward, "ep_probs_all_to_all") == std::make_pair(Collective::all_to_all, routed * w));
    const Config one_local = moe("megatron-core", 16, "", R"(, "moe_dispatcher": "alltoall")");
    CHECK(named(layer_ops(make_execution(one_local), layer_kind_at(one_local.model, 0)).forward, "moe_sort_chunks").first == 0);
    const Config gathered = moe("megatron-core", 4, "", R"(, "moe_dispatcher": "allgather")");
    CHECK(named(layer_ops(make_execution(gathered), layer_kind_at(gathered.model, 0)).forward, "moe_sort_chunks").first == 0);
    // Megatron-Core's router: 11 small kernels forward besides the top-k, 6 backward; token dropping
    // adds 6 and 1 (topk_softmax_with_capacity).
    CHECK(named(m.forward, "router_elementwise").first == 11);
    CHECK(named(m.backward, "router_elementwise").first == 6);
    const Config dropping = moe("megatron-core", 4, R"(, "capacity_factor": 1.25)", R"(, "moe_dispatcher": "alltoall")");
    const PieceOps dr = layer_ops(make_execution(dropping), layer_kind_at(dropping.model, 0));
    CHECK(named(dr.forward, "router_elementwise").first == 17);
    CHECK(named(dr.backward, "router_elementwise").first == 7);
    // torchtitan: the fp32 score scaling of the routed rows, _permute's vstack and gather, _unpermute's
    // index_put, the zero-filled un-sort; no chunk sort.
    const Config titan = moe("torchtitan", 4, "", "");
    const PieceOps t = layer_ops(make_execution(titan), layer_kind_at(titan.model, 0));
    CHECK(named(t.forward, "moe_sort_chunks").first == 0);
    CHECK(named(t.forward, "moe_unpermute_zero_fill").first == 0);  // its un-sort buffer is the routed rows
    CHECK(named(t.forward, "moe_score_to_fp32") == std::make_pair(1, routed * h * (w + 4)));
    CHECK(named(t.forward, "moe_score_scale") == std::make_pair(1, routed * h * 8));
    CHECK(named(t.forward, "moe_pad_rows") == std::make_pair(1, 2 * routed * h * w));
    CHECK(named(t.forward, "moe_pad_permute") == std::make_pair(1, 2 * routed * h * w));
    CHECK(named(t.forward, "moe_pad_unpermute") == std::make_pair(1, 2 * routed * h * w));
    CHECK(named(t.forward, "moe_unsort_zero_fill") == std::make_pair(1, routed * h * w));
    CHECK(named(t.backward, "moe_unsort") == std::make_pair(1, 2 * routed * h * w));
    CHECK(named(t.forward, "router_elementwise").first == 11);
    // torchtitan all-to-alls the counts and scales the rows before the dispatch: no probabilities sent.
    CHECK(comm(t.comm_forward, "ep_token_counts") == std::make_pair(Collective::all_to_all, 16.0 * 8));
    CHECK(comm(t.comm_forward, "ep_probs_all_to_all").second == 0);
    // Compiled, the score scaling is one kernel and the router's pointwise chains fuse.
    const Config compiled = moe("torchtitan", 4, "", R"(, "compile": true)");
    const PieceOps c = layer_ops(make_execution(compiled), layer_kind_at(compiled.model, 0));
    CHECK(named(c.forward, "moe_score_to_fp32").first == 0);
    CHECK(named(c.forward, "moe_score_scale") == std::make_pair(1, 2 * routed * h * w));
    CHECK(named(c.forward, "router_elementwise").first == 6);
    CHECK(named(c.backward, "router_elementwise").first == 3);
    // Without shared experts there is nothing to add the routed output to.
    const Config no_shared =
        fixtures::config(R"("model": {"architecture": "decoder", "layers": 2, "hidden": 4096, "heads": 32, "kv_heads": 8,
        "ffn_hidden": 0, "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm", "moe": {"experts": 16, "top_k": 2, "expert_ffn_hidden": 2048}},
        "gpu": "b200", "num_gpus": 4, "parallel": {"ep": 4}, "training": {"seq_len": 4096, "global_batch": 4})");
    CHECK(named(layer_ops(make_execution(no_shared), layer_kind_at(no_shared.model, 0)).forward, "shared_expert_add").first == 0);
}

TEST_CASE("Fine-tuning: frozen weights skip the weight-gradient GEMMs, QLoRA dequantises per GEMM", "[operators]") {
    const std::string body = R"("model": "llama3.1-8b", "gpu": "a100-sxm4-40gb", "num_gpus": 1, "precision": "bf16-mixed",
        "training": {"seq_len": 2048, "global_batch": 1, "micro_batch": 1)";
    const Config full = fixtures::config(body + "}");
    const Config lora = fixtures::config(body + R"(, "finetune": {"method": "lora", "lora_rank": 16}})");
    const Config qlora = fixtures::config(body + R"(, "finetune": {"method": "qlora", "lora_rank": 16}})");
    const LayerKind kind = layer_kind_at(full, 0);
    const PieceOps f = layer_ops(make_execution(full), kind), l = layer_ops(make_execution(lora), kind);
    // Base GEMMs: backward is dgrad only (1x forward) instead of dgrad + wgrad (2x).
    const double base_fwd =
        gemm_flops_named(f.forward, "qkv") + gemm_flops_named(f.forward, "attn_out") + gemm_flops_named(f.forward, "mlp_");
    CHECK(gemm_flops_named(l.backward, "dgrad") == Approx(base_fwd));
    CHECK(gemm_flops_named(l.backward, "wgrad") == 0);
    CHECK(gemm_flops_named(f.backward, "wgrad") == Approx(base_fwd));
    // Adapters: 2 T r (parts k + n) forward per projection = 2 T x adapter weights; backward twice that.
    const double T = 2048, adapters = layer_adapter_params_local(make_execution(lora), kind);
    CHECK(gemm_flops_named(l.forward, "lora_") == Approx(2 * T * adapters));
    CHECK(gemm_flops_named(l.backward, "lora_") == Approx(4 * T * adapters));
    // QLoRA: every block weight dequantised (read NF4, write bf16) for the forward and again for dgrad.
    const PieceOps q = layer_ops(make_execution(qlora), kind);
    double dequant = 0;
    for (const PieceOps* ops : {&q}) {
        for (const Op& op : ops->forward)
            if (std::string(op.name) == "nf4_dequantize") dequant += op.count * op.bytes;
        for (const Op& op : ops->backward)
            if (std::string(op.name) == "nf4_dequantize") dequant += op.count * op.bytes;
    }
    const double linear = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3 * 4096.0 * 14336;
    CHECK(dequant == Approx(2 * linear * (kNf4BytesPerParam + 2)));
    // A frozen leading layer runs forward only.
    const Config frozen = fixtures::config(body + R"(, "finetune": {"frozen_layers": 4}})");
    REQUIRE(layer_kind_at(frozen, 3).frozen);
    CHECK_FALSE(layer_kind_at(frozen, 4).frozen);
    CHECK(layer_kind_run_end(frozen, 0, 32) == 4);
    CHECK(layer_ops(make_execution(frozen), layer_kind_at(frozen, 0)).backward.size == 0);
}

TEST_CASE("Autocast keeps the residual stream in fp32 and casts gradients back at op boundaries", "[operators]") {
    // torch.autocast: the embedding output (fp32 weights) and every residual add (fp32 + half
    // promotes) are fp32, so dropout+residual reads half + fp32 and writes fp32; norms read fp32; the
    // half dgrad of a linear after a norm is cast back to fp32 in backward.
    auto ops_of = [](const char* precision) {
        const Config c = fixtures::config(std::string(R"("model": "bert-large", "gpu": "v100-sxm2-32gb", "num_gpus": 1, "precision": ")") +
                                          precision + R"(", "training": {"seq_len": 128, "global_batch": 8, "micro_batch": 8})");
        const Execution x = make_execution(c);
        return layer_ops(x, layer_kind_at(c.model, 0));
    };
    auto bytes = [](const OpList& list, const char* name) {
        for (const Op& op : list)
            if (std::string(op.name) == name) return op.bytes;
        return 0.0;
    };
    auto count = [](const OpList& list, const char* name) {
        int n = 0;
        for (const Op& op : list) n += std::string(op.name) == name ? 1 : 0;
        return n;
    };
    const double e = 8.0 * 128 * 1024;  // tokens x hidden
    const PieceOps amp = ops_of("fp16-amp"), mixed = ops_of("fp16-mixed");
    CHECK(bytes(amp.forward, "dropout_residual") == Approx(e * (2 + 2 * 4 + 1)));
    CHECK(bytes(mixed.forward, "dropout_residual") == Approx(e * (3 * 2 + 1)));
    CHECK(bytes(amp.forward, "norm") == Approx(e * (4 + 4)));
    CHECK(bytes(amp.backward, "norm_bwd") == Approx(e * 3 * 4));
    // One input-gradient cast per linear fed by a norm (QKV and MLP up), none without autocast.
    CHECK(count(amp.backward, "autocast_input_grad_cast") == 2);
    CHECK(count(mixed.backward, "autocast_input_grad_cast") == 0);
}

TEST_CASE("Per-op SAC (torchtitan op policy) re-runs every second matmul and the non-matmul ops, not attention", "[operators]") {
    // Llama 3 8B, one GPU: torchtitan's matmuls per layer in order wq, wk, wv, wo, w1, w3, w2; the
    // policy saves the odd ones (wq, wv, w1, w2) and recomputes wk, wo, w3.
    const std::string body =
        R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16-mixed", "training": {"seq_len": 8192, "global_batch": 1, "micro_batch": 1, "flash_attention": true, "recompute": "selective"}, "framework": )";
    const Config megatron = fixtures::config(body + R"("torchtitan")");
    const Config op = fixtures::config(body + R"({"preset": "torchtitan", "op_level_sac": true})");
    const LayerKind kind = layer_kind_at(op.model, 0);
    const PieceOps a = layer_ops(make_execution(megatron), kind), b = layer_ops(make_execution(op), kind);
    const double T = 8192, h = 4096, kv = 1024, f = 14336;
    CHECK(flops(b.backward, OpKind::gemm) - flops(a.backward, OpKind::gemm) == Approx(2 * T * (h * kv + h * h + h * f)));
    CHECK(flops(b.backward, OpKind::attention) == Approx(flops(a.backward, OpKind::attention)));  // SDPA output saved
    CHECK(bytes(b.backward, OpKind::elementwise) == Approx(bytes(a.backward, OpKind::elementwise) + bytes(a.forward, OpKind::elementwise)));
    CHECK(op_sac_saved_width(make_execution(op), kind) == Approx(h + kv + f + h));  // wq, wv, w1, w2 outputs per token
}

TEST_CASE("JAX's dots policy (selective_saves_matmuls) saves every weight matmul and re-runs attention and the rest", "[operators]") {
    // Llama 3 8B under framework jax: recompute selective re-runs no GEMM, the attention forward and
    // every elementwise op of the layer before its backward.
    const std::string body =
        R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16-mixed", "training": {"seq_len": 8192, "global_batch": 1, "micro_batch": 1, "flash_attention": true, "recompute": )";
    const Config none = fixtures::config(body + R"("none"}, "framework": "jax")");
    const Config dots = fixtures::config(body + R"("selective"}, "framework": "jax")");
    const Config attention_core =
        fixtures::config(body + R"("selective"}, "framework": {"preset": "jax", "selective_saves_matmuls": false})");
    const LayerKind kind = layer_kind_at(dots.model, 0);
    const PieceOps a = layer_ops(make_execution(none), kind), b = layer_ops(make_execution(dots), kind);
    CHECK(flops(b.backward, OpKind::gemm) == Approx(flops(a.backward, OpKind::gemm)));
    CHECK(flops(b.backward, OpKind::attention) == Approx(flops(a.backward, OpKind::attention) + flops(a.forward, OpKind::attention)));
    CHECK(bytes(b.backward, OpKind::elementwise) == Approx(bytes(a.backward, OpKind::elementwise) + bytes(a.forward, OpKind::elementwise)));
    const double h = 4096, kv = 1024, f = 14336;
    CHECK(op_sac_saved_width(make_execution(dots), kind) == Approx(h + 2 * kv + h + 2 * f + h));  // wq wk wv wo w1 w3 w2
    // Without the key, jax's selective is Megatron's attention core, which flash attention already re-runs.
    const PieceOps c = layer_ops(make_execution(attention_core), kind);
    CHECK(flops(c.backward, OpKind::attention) == Approx(flops(a.backward, OpKind::attention)));
    // The two per-op policies exclude each other.
    const auto both = load_config(R"({"schema": "trainclock/config/v1", )" + body +
                                  R"("selective"}, "framework": {"preset": "jax", "op_level_sac": true}})");
    REQUIRE_FALSE(both.ok());
    CHECK(both.error().key == "framework.op_level_sac");
    CHECK_THAT(both.error().message, Catch::Contains("set one of them to false"));
}

TEST_CASE("Megatron-LM's parameter tensors per stage: fused QKV, biases in the GPT lineage, none when gated", "[operators]") {
    const auto tensors = [](const char* model, int pp) {
        const Config c = fixtures::config(std::string(R"("model": ")") + model + R"(", "gpu": "a100-sxm4-80gb", "num_gpus": )" +
                                          std::to_string(pp) + R"(, "parallel": {"pp": )" + std::to_string(pp) +
                                          R"(}, "training": {"seq_len": 2048, "global_batch": 8, "micro_batch": 1})");
        return megatron_parameter_tensors(make_execution(c));
    };
    // gpt3-1.3b: 24 layers x (2 LayerNorms x 2 + 4 linears x 2) + embedding + final LayerNorm's 2.
    CHECK(tensors("gpt3-1.3b", 1) == Approx(24 * 12 + 3));
    CHECK(tensors("gpt3-1.3b", 2) == Approx((24 * 12 + 3) / 2.0));
    // llama2-7b: 32 layers x (2 RMSNorms + 4 linears without bias) + embedding + final RMSNorm.
    CHECK(tensors("llama2-7b", 1) == Approx(32 * 6 + 2));
}

TEST_CASE("Megatron's vocab-parallel cross-entropy runs each fp32 step as a pass of its own, backward in place", "[operators]") {
    const auto with = [](const char* framework) {
        return fixtures::config(R"("model": )" + fixtures::gpt_model(2, 1024, 16) +
                                R"(, "gpu": "a100-sxm4-80gb", "num_gpus": 2, "precision": "fp16-mixed", "framework": )" + framework +
                                R"(, "parallel": {"tp": 2}, "training": {"seq_len": 1024, "global_batch": 4, "micro_batch": 4})");
    };
    const auto loss_bytes = [](const Config& c, const char* name) {
        const PieceOps head = head_ops(make_execution(c));
        double b = 0;
        for (const OpList* ops : {&head.forward, &head.backward})
            for (const Op& op : *ops)
                if (std::string(op.name) == name) b += op.count * op.bytes;
        return b;
    };
    const double logits = 4 * 1024 * 51200 / 2.0;  // tokens x vocab / tp
    // cast (2 + 4), max (4), subtract (8), exp in place (8), sum (4), normalise in place (8); backward
    // mul_ in place (8) and the cast back (4 + 2).
    for (const char* megatron : {R"("megatron-lm")", R"("megatron-core")"}) {
        CHECK(loss_bytes(with(megatron), "cross_entropy") == Approx(logits * 38));
        CHECK(loss_bytes(with(megatron), "cross_entropy_bwd") == Approx(logits * 14));
    }
    // torch's fused log-softmax / NLL loss, and a Megatron run that turns the key off.
    for (const char* other : {R"("hf-transformers")", R"({"preset": "megatron-lm", "vocab_parallel_cross_entropy": false})"}) {
        CHECK(loss_bytes(with(other), "cross_entropy") == Approx(logits * 14));
        CHECK(loss_bytes(with(other), "cross_entropy_bwd") == Approx(logits * 22));
    }
    CHECK(framework_preset("megatron-lm").value().vocab_parallel_cross_entropy);
    CHECK_FALSE(framework_preset("torchtitan").value().vocab_parallel_cross_entropy);
}

TEST_CASE("Megatron's column-parallel input-gradient all-reduce runs beside that linear's weight gradient", "[operators]") {
    const auto with = [](const char* framework, bool sp = false) {
        return fixtures::config(R"("model": )" + fixtures::gpt_model(2, 2048, 16) +
                                R"(, "gpu": "a100-sxm4-80gb", "num_gpus": 2, "precision": "fp16-mixed", "framework": )" + framework +
                                R"(, "parallel": {"tp": 2, "sequence_parallel": )" + (sp ? "true" : "false") +
                                R"(}, "training": {"seq_len": 1024, "global_batch": 8, "micro_batch": 8, "recompute": "full"})");
    };
    const Config megatron = with(R"("megatron-lm")");
    const Execution x = make_execution(megatron);
    const PieceOps layer = layer_ops(x, layer_kind_at(megatron.model, 0));
    // The backward's weight gradients in emission order: qkv, attn_out (attention), mlp_down, mlp_up (MLP).
    std::vector<double> wgrad_s;
    for (const Op& op : layer.backward)
        if (std::string(op.name) == "wgrad") wgrad_s.push_back(op.count * op_time_s(op, megatron.gpu, x.cal));
    REQUIRE(wgrad_s.size() == 4);
    // The recompute's all-reduces (forward) run alone; the backward's two ride on qkv's and mlp_up's wgrad.
    std::vector<double> beside;
    for (const CommOp& op : layer.comm_backward) beside.push_back(op.beside_s);
    REQUIRE(beside.size() == 4);
    CHECK(beside[0] == 0);
    CHECK(beside[1] == 0);
    CHECK(beside[2] == Approx(wgrad_s[0]));
    CHECK(beside[3] == Approx(wgrad_s[3]));
    for (const CommOp& op : layer.comm_forward) CHECK(op.beside_s == 0);
    // The LM head is column-parallel too.
    const PieceOps head = head_ops(x);
    REQUIRE(head.comm_backward.size == 1);
    CHECK(head.comm_backward.items[0].beside_s > 0);
    // Not with the key off, with sequence parallelism (reduce-scatters) or where all TP comm overlaps already.
    for (const Config& other : {with(R"({"preset": "megatron-lm", "async_tp_grad_all_reduce": false})"), with(R"("megatron-lm")", true),
                                with(R"({"preset": "megatron-lm", "overlap_tp_comm": true})")}) {
        const Execution y = make_execution(other);
        for (const CommOp& op : layer_ops(y, layer_kind_at(other.model, 0)).comm_backward) CHECK(op.beside_s == 0);
    }
}

TEST_CASE("Megatron's fp16 optimizer casts the gradients to fp32 master gradients and steps on those", "[operators]") {
    const auto step_bytes = [](const char* framework, const char* precision) {
        const Config c =
            fixtures::config(R"("model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 1, "precision": ")" + std::string(precision) +
                             R"(", "framework": )" + framework + R"(, "training": {"seq_len": 1024, "global_batch": 8, "micro_batch": 8})");
        std::map<std::string, double> b;
        for (const Op& op : step_ops(make_execution(c), 1e9, 1e9)) b[op.name] += op.count * op.bytes;
        return b;
    };
    const auto megatron = step_bytes(R"("megatron-lm")", "fp16-mixed");
    const auto off = step_bytes(R"({"preset": "megatron-lm", "fp32_master_grads": false})", "fp16-mixed");
    // main_grad.float(): read the fp16 buffer, write fp32 (2 + 4 bytes a parameter) ...
    CHECK(megatron.at("master_grad_cast") == Approx(1e9 * 6));
    CHECK(off.count("master_grad_cast") == 0);
    // ... then the unscale (read + write), the norm and Adam's gradient read are at 4 bytes, not 2.
    CHECK(megatron.at("loss_scale_unscale_check") == Approx(1e9 * 8));
    CHECK(off.at("loss_scale_unscale_check") == Approx(1e9 * 4));
    CHECK(megatron.at("grad_norm_clip") == Approx(1e9 * 4));
    CHECK(megatron.at("optimizer_step") - off.at("optimizer_step") == Approx(1e9 * 2));
    CHECK(megatron.at("zero_grad") == Approx(off.at("zero_grad")));  // the fp16 main_grad buffer
    // Without fp32 master weights there is nothing to cast.
    CHECK(step_bytes(R"("megatron-lm")", "bf16").count("master_grad_cast") == 0);
}
