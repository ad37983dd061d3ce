// trainclock (internal): the one table of every fitted or assumed constant of the cost model, with
// its bounds, unit and where it comes from (the data set it was fitted on, or the citation it was
// taken from). The code that uses a constant reads it from here; calibration.cpp turns the efficiency
// defaults into the Calibration record (overridable per GPU); validation/fit.cpp refits the rows with
// a refit knob (`trainclock validate --refit`, --cross-source): a new fitted constant is a row here.
#pragma once

#include <array>

#include "trainclock/perf/calibration.hpp"

namespace trainclock {

struct ModelConstant {
    const char* name;
    double value;
    double low, high;               // physical range; a refit one's refit stays inside
    const char* unit;               // what the value measures
    const char* source;             // the citation it was taken from, or kFitSet
    FitKnob refit = FitKnob::none;  // refit: the Calibration field its multiplier scales (none: not refit)
    int attention_kernel = -1;      // refit: only cases with this AttentionKernel (-1 = every case)
    int fp8_gpus = -1;              // refit: 1 only GPUs with FP8 units, 0 only GPUs without (-1 = every GPU)
};

namespace constants {

// The validation sets every refit row is fitted on (their time metrics; fit.cpp fit_cases).
inline constexpr std::array<const char*, 3> kFitSets = {"public", "public-2", "vtrain"};
inline constexpr const char* kFitSet = "fitted on presets/validation sets public, public-2 and vtrain (time metrics)";
inline constexpr int kFlash2 = static_cast<int>(AttentionKernel::flash2);
inline constexpr int kFlash3 = static_cast<int>(AttentionKernel::flash3);

// GEMM efficiency: large-GEMM fraction of peak when the GPU preset has no measurement.
inline constexpr ModelConstant nvidia_gemm{"nvidia_gemm",
                                           0.80,
                                           0.3,
                                           1.0,
                                           "fraction of the dtype's peak, large GEMMs",
                                           "H100 SXM MAMF 794.5/989 (stas00/ml-engineering MAMF table; A100 0.869, B200 0.776)"};
inline constexpr ModelConstant amd_gemm{
    "amd_gemm", 0.55, 0.3, 1.0, "fraction of the dtype's peak, large GEMMs", "MI300X MAMF 668/1300 = 0.514, MI325X 0.604 (same table)"};
inline constexpr ModelConstant intel_gemm{
    "intel_gemm", 0.85, 0.3, 1.0, "fraction of the dtype's peak, large GEMMs", "Gaudi 2 MAMF 0.969, Gaudi 3 0.741 (same table)"};
inline constexpr ModelConstant fp32_gemm{"fp32_gemm",
                                         0.90,
                                         0.3,
                                         1.0,
                                         "fraction of the FP32 FMA peak",
                                         "SGEMM ~14 of 15.7 TFLOP/s on V100 (paranumal.com V100 roofline), ~18.5 of 19.5 on A100"};
inline constexpr ModelConstant fp8_of_bf16_gemm{
    "fp8_of_bf16_gemm", 0.88, 0.5, 1.0, "ratio of the fp8 to the bf16 GEMM fraction", "H100 MAMF FP8 0.709 vs BF16 0.803 (same table)"};
inline constexpr ModelConstant nvfp4_of_fp8_gemm{"nvfp4_of_fp8_gemm",
                                                 0.9,
                                                 0.5,
                                                 1.0,
                                                 "ratio of the nvfp4 to the fp8 GEMM fraction",
                                                 "assumed: no public NVFP4 MAMF; narrower operands make the epilogue a larger share"};
inline constexpr ModelConstant gemm_sustained{
    "gemm_sustained", 0.85, 0.6, 1.0, "fraction of the large-GEMM (MAMF) figure, tensor-core dtypes", kFitSet, FitKnob::gemm};
// Fused attention, fraction of the bf16 large-GEMM figure: FlashAttention-2 physics (~0.7 of a GEMM
// on A100, Dao 2023 arXiv 2307.08691; ~0.45 on GPUs with FP8 units, Shah et al. 2024 arXiv
// 2407.08608 sec. 1) times a factor of ~0.55 fitted on llm-foundry's Triton-era runs; each
// generation refits its own (mma.sync and the exp throughput hold it on GPUs with FP8 units).
inline constexpr ModelConstant attention_flash2{
    "attention_flash2", 0.4,     0.2, 0.8, "fraction of the bf16 large-GEMM figure (GPUs without FP8: Volta, Ampere)", kFitSet,
    FitKnob::attention, kFlash2, 0};
inline constexpr ModelConstant attention_flash2_fp8_gpus{
    "attention_flash2_fp8_gpus",
    0.25,
    0.125,
    0.5,
    "fraction of the bf16 large-GEMM figure (GPUs with FP8: Hopper, Ada, Blackwell, CDNA3)",
    kFitSet,
    FitKnob::attention,
    kFlash2,
    1};
// FA2-class kernels do their softmax, rescaling and shared-memory staging on units that grow with
// SMs x clock (as the CUDA-core fp32 peak does), not with the tensor peak: the fitted fraction
// above holds at Hopper's balance of the two (vector fp32 / dense bf16 peak of the h100-sxm preset).
inline constexpr ModelConstant flash2_vector_of_tensor{
    "flash2_vector_of_tensor",
    67.0 / 989.5,
    0.01,
    1.0,
    "ratio of the fp32 vector to the dense bf16 tensor peak",
    "H100 SXM fp32 67 / bf16 989.5 TFLOP/s (datasheet): the balance attention_flash2_fp8_gpus was fitted at (Hopper rows)"};
inline constexpr ModelConstant attention_flash3{"attention_flash3",
                                                0.53,
                                                0.265,
                                                0.848,
                                                "fraction of the bf16 peak (Hopper-native kernels)",
                                                "FA3 75 % of H100 peak forward, backward ~0.5, weighted 2.5x (Shah et al. 2024, sec. 4.1); "
                                                "refit on the same set",
                                                FitKnob::attention,
                                                kFlash3};
// Memory-bound kernels.
inline constexpr ModelConstant hbm_stream{"hbm_stream",
                                          0.85,
                                          0.5,
                                          1.0,
                                          "fraction of HBM bandwidth, a pure stream",
                                          "cudaMemcpy 790 of 900 GB/s on V100 = 0.878 (paranumal.com V100 roofline)"};
inline constexpr ModelConstant training_kernels_of_stream{"training_kernels_of_stream",
                                                          0.8,
                                                          0.48,
                                                          1.12,
                                                          "fraction of the stream figure, memory-bound training kernels",
                                                          kFitSet,
                                                          FitKnob::memory};
// Links.
inline constexpr ModelConstant intra_node_efficiency{
    "intra_node_efficiency",
    0.80,
    0.48,
    0.96,
    "fraction of the NVLink line rate",
    "NCCL busbw 370 of 450 GB/s on H100 NVLink (nccl-tests #212), 235 of 300 on A100 (stas00)",
    FitKnob::intra_node};
inline constexpr ModelConstant inter_node_efficiency{
    "inter_node_efficiency", 0.80, 0.4, 0.96, "fraction of the NIC line rate", "\"expect ~80 % of advertised\" (stas00/ml-engineering)",
    FitKnob::inter_node};
// Fixed costs.
inline constexpr ModelConstant kernel_launch_s{"kernel_launch_s",     10e-6, 2.5e-6, 40e-6, "s per kernel (GPU side)", kFitSet,
                                               FitKnob::kernel_launch};
inline constexpr ModelConstant host_op_s{"host_op_s", 60e-6, 15e-6, 240e-6, "s per op dispatched (host side)", kFitSet, FitKnob::host_op};
// One eager PyTorch op called from Python (bytecode, pybind11, autograd and ATen dispatch, the
// launch): "~5-25 us of CPU-side work per op" (J. Lin, "From PyTorch op to kernel launch",
// jiahuanglin.xyz gpu_kernel_serving lesson 18); the middle of that range.
inline constexpr ModelConstant eager_op_host_s{"eager_op_host_s",
                                               15e-6,
                                               5e-6,
                                               25e-6,
                                               "s per eager PyTorch op dispatched from Python (host side)",
                                               "~5-25 us CPU work per eager op (jiahuanglin.xyz, From PyTorch op to kernel launch)"};
inline constexpr ModelConstant step_overhead_s{"step_overhead_s",     20e-3, 2e-3, 0.1, "s per optimizer step", kFitSet,
                                               FitKnob::step_overhead};
// GEMM shape: K at which a 16-bit mainloop halves (one 64-deep K block per tile, CUTLASS
// 128x128x64 tiles), and the relative mainloop efficiency of each tile size.
inline constexpr ModelConstant gemm_k_half_16bit{"gemm_k_half_16bit", 64, 16, 256, "K elements", "CUTLASS 128x128x64 16-bit tiles"};
inline constexpr const char* kTileSource =
    "assumed: smaller tiles reuse operands less (NVIDIA \"Matrix Multiplication Background User's Guide\", tile quantisation)";
inline constexpr const char* kTileUnit = "mainloop efficiency relative to 256x128 tiles";
inline constexpr ModelConstant tile_256x128{"tile_256x128", 1.0, 0.3, 1.0, kTileUnit, kTileSource};
inline constexpr ModelConstant tile_128x128{"tile_128x128", 0.95, 0.3, 1.0, kTileUnit, kTileSource};
inline constexpr ModelConstant tile_128x64{"tile_128x64", 0.85, 0.3, 1.0, kTileUnit, kTileSource};
inline constexpr ModelConstant tile_64x64{"tile_64x64", 0.7, 0.3, 1.0, kTileUnit, kTileSource};
// Communication overlapped with compute.
inline constexpr ModelConstant comm_sms{"comm_sms",
                                        16,
                                        0,
                                        64,
                                        "SMs a running collective holds",
                                        "NCCL rings use 16 channels (one SM each) on NVSwitch systems (NCCL_MIN/MAX_NCHANNELS, NCCL docs)"};
inline constexpr ModelConstant comm_sm_share_cap{"comm_sm_share_cap",
                                                 0.5,
                                                 0.1,
                                                 1.0,
                                                 "fraction of the SMs collectives may hold",
                                                 "assumed: NCCL caps channels (NCCL_MAX_NCHANNELS) so that compute keeps most SMs; "
                                                 "binds only on GPUs with fewer than 2 x comm_sms SMs"};
// Fixed device memory outside the tensors (memory.cpp).
inline constexpr ModelConstant cuda_context_gib{
    "cuda_context_gib", 0.5, 0.25, 1.0, "GiB per GPU", "PyTorch bare context 0.27-0.62 GiB (pytorch/pytorch PR 86509) + cuBLAS workspaces"};
inline constexpr ModelConstant nccl_communicator_gib{
    "nccl_communicator_gib", 0.25, 0.0, 1.0, "GiB per communicator", "NCCL_BUFFSIZE 4 MiB x 32 channels x 2 ring peers (NCCL docs)"};
inline constexpr ModelConstant allocator_reserve{"allocator_reserve",
                                                 0.10,
                                                 0.0,
                                                 0.3,
                                                 "fraction of the memory freed and re-allocated each step",
                                                 "a third of ZeRO's worst-case 30 % free at OOM (Rajbhandari et al. 2020, sec. 6.3)"};

}  // namespace constants

// Every constant above, for listings and tests.
inline constexpr std::array<const ModelConstant*, 29> kModelConstants = {
    &constants::nvidia_gemm,
    &constants::amd_gemm,
    &constants::intel_gemm,
    &constants::fp32_gemm,
    &constants::fp8_of_bf16_gemm,
    &constants::nvfp4_of_fp8_gemm,
    &constants::gemm_sustained,
    &constants::attention_flash2,
    &constants::attention_flash2_fp8_gpus,
    &constants::flash2_vector_of_tensor,
    &constants::attention_flash3,
    &constants::hbm_stream,
    &constants::training_kernels_of_stream,
    &constants::intra_node_efficiency,
    &constants::inter_node_efficiency,
    &constants::kernel_launch_s,
    &constants::host_op_s,
    &constants::eager_op_host_s,
    &constants::step_overhead_s,
    &constants::gemm_k_half_16bit,
    &constants::tile_256x128,
    &constants::tile_128x128,
    &constants::tile_128x64,
    &constants::tile_64x64,
    &constants::comm_sms,
    &constants::comm_sm_share_cap,
    &constants::cuda_context_gib,
    &constants::nccl_communicator_gib,
    &constants::allocator_reserve,
};

}  // namespace trainclock
