// trainclock (internal): the one table of every fitted or assumed constant of the cost model, with
// its bounds and where it comes from (the data set it was fitted on, or the citation it was taken
// from). The code that uses a constant reads it from here; calibration.cpp turns the efficiency
// defaults into the Calibration record (overridable per GPU), validation/fit.cpp refits the fitted
// ones (`trainclock validate --refit`). Bounds: the physical range a value may take.
#pragma once

#include <array>

namespace trainclock {

struct ModelConstant {
    const char* name;
    double value;
    double low, high;  // physical range (fitted ones: the refit stays inside)
    bool fitted;       // fitted on presets/validation, else assumed from the source
    const char* source;
};

namespace constants {

inline constexpr const char* kFitSet = "fitted on presets/validation sets public, public-2 and vtrain (time metrics)";

// GEMM efficiency: large-GEMM fraction of peak when the GPU preset has no measurement.
inline constexpr ModelConstant nvidia_gemm{
    "nvidia_gemm", 0.80, 0.3, 1.0, false, "H100 SXM MAMF 794.5/989 (stas00/ml-engineering MAMF table; A100 0.869, B200 0.776)"};
inline constexpr ModelConstant amd_gemm{"amd_gemm", 0.55, 0.3, 1.0, false, "MI300X MAMF 668/1300 = 0.514, MI325X 0.604 (same table)"};
inline constexpr ModelConstant intel_gemm{"intel_gemm", 0.85, 0.3, 1.0, false, "Gaudi 2 MAMF 0.969, Gaudi 3 0.741 (same table)"};
inline constexpr ModelConstant fp32_gemm{
    "fp32_gemm", 0.90, 0.3, 1.0, false, "SGEMM ~14 of 15.7 TFLOP/s on V100 (paranumal.com V100 roofline), ~18.5 of 19.5 on A100"};
inline constexpr ModelConstant fp8_of_bf16_gemm{
    "fp8_of_bf16_gemm", 0.88, 0.5, 1.0, false, "H100 MAMF FP8 0.709 vs BF16 0.803 (same table)"};
inline constexpr ModelConstant nvfp4_of_fp8_gemm{
    "nvfp4_of_fp8_gemm", 0.9, 0.5, 1.0, false, "assumed: no public NVFP4 MAMF; narrower operands make the epilogue a larger share"};
inline constexpr ModelConstant gemm_sustained{"gemm_sustained", 0.85, 0.6, 1.0, true, kFitSet};
// Fused attention, fraction of the bf16 large-GEMM figure: FlashAttention-2 physics (~0.7 of a GEMM
// on A100, Dao 2023 arXiv 2307.08691; ~0.45 on GPUs with FP8 units, Shah et al. 2024 arXiv
// 2407.08608 sec. 1) times a factor of ~0.55 fitted on llm-foundry's Triton-era runs.
inline constexpr ModelConstant attention_flash2{"attention_flash2", 0.4, 0.1, 1.0, true, kFitSet};
inline constexpr ModelConstant attention_flash2_fp8_gpus{"attention_flash2_fp8_gpus", 0.25, 0.1, 1.0, true, kFitSet};
// FA2-class kernels do their softmax, rescaling and shared-memory staging on units that grow with
// SMs x clock (as the CUDA-core fp32 peak does), not with the tensor peak: the fitted fraction
// above holds at Hopper's balance of the two (vector fp32 / dense bf16 peak of the h100-sxm preset).
inline constexpr ModelConstant flash2_vector_of_tensor{
    "flash2_vector_of_tensor",
    67.0 / 989.5,
    0.01,
    1.0,
    false,
    "H100 SXM fp32 67 / bf16 989.5 TFLOP/s (datasheet): the balance attention_flash2_fp8_gpus was fitted at (Hopper rows)"};
inline constexpr ModelConstant attention_flash3{"attention_flash3",
                                                0.53,
                                                0.2,
                                                1.0,
                                                true,
                                                "FA3 75 % of H100 peak forward, backward ~0.5, weighted 2.5x (Shah et al. 2024, sec. 4.1); "
                                                "refit on the same set"};
// Memory-bound kernels.
inline constexpr ModelConstant hbm_stream{"hbm_stream", 0.85,  0.5,
                                          1.0,          false, "cudaMemcpy 790 of 900 GB/s on V100 = 0.878 (paranumal.com V100 roofline)"};
inline constexpr ModelConstant training_kernels_of_stream{"training_kernels_of_stream", 0.8, 0.5, 1.0, true, kFitSet};
// Links.
inline constexpr ModelConstant intra_node{
    "intra_node", 0.80, 0.3, 1.0, true, "NCCL busbw 370 of 450 GB/s on H100 NVLink (nccl-tests #212), 235 of 300 on A100 (stas00)"};
inline constexpr ModelConstant inter_node{"inter_node", 0.80, 0.3, 1.0, true, "\"expect ~80 % of advertised\" (stas00/ml-engineering)"};
// Fixed costs.
inline constexpr ModelConstant kernel_launch_s{"kernel_launch_s", 10e-6, 1e-6, 50e-6, true, kFitSet};
inline constexpr ModelConstant host_op_s{"host_op_s", 60e-6, 5e-6, 500e-6, true, kFitSet};
inline constexpr ModelConstant step_overhead_s{"step_overhead_s", 20e-3, 1e-3, 1.0, true, kFitSet};
// GEMM shape: K at which a 16-bit mainloop halves (one 64-deep K block per tile, CUTLASS
// 128x128x64 tiles), and the relative mainloop efficiency of each tile size.
inline constexpr ModelConstant gemm_k_half_16bit{"gemm_k_half_16bit", 64, 16, 256, false, "CUTLASS 128x128x64 16-bit tiles"};
inline constexpr const char* kTileSource =
    "assumed: smaller tiles reuse operands less (NVIDIA \"Matrix Multiplication Background User's Guide\", tile quantisation)";
inline constexpr ModelConstant tile_256x128{"tile_256x128", 1.0, 0.3, 1.0, false, kTileSource};
inline constexpr ModelConstant tile_128x128{"tile_128x128", 0.95, 0.3, 1.0, false, kTileSource};
inline constexpr ModelConstant tile_128x64{"tile_128x64", 0.85, 0.3, 1.0, false, kTileSource};
inline constexpr ModelConstant tile_64x64{"tile_64x64", 0.7, 0.3, 1.0, false, kTileSource};
// Communication overlapped with compute.
inline constexpr ModelConstant comm_sms{
    "comm_sms", 16, 0, 64, false, "NCCL rings use 16 channels (one SM each) on NVSwitch systems (NCCL_MIN/MAX_NCHANNELS, NCCL docs)"};
inline constexpr ModelConstant comm_sm_share_cap{"comm_sm_share_cap",
                                                 0.5,
                                                 0.1,
                                                 1.0,
                                                 false,
                                                 "assumed: NCCL caps channels (NCCL_MAX_NCHANNELS) so that compute keeps most SMs; "
                                                 "binds only on GPUs with fewer than 2 x comm_sms SMs"};
// Fixed device memory outside the tensors (memory.cpp).
inline constexpr ModelConstant cuda_context_gib{
    "cuda_context_gib", 0.5, 0.25, 1.0, false, "PyTorch bare context 0.27-0.62 GiB (pytorch/pytorch PR 86509) + cuBLAS workspaces"};
inline constexpr ModelConstant nccl_communicator_gib{
    "nccl_communicator_gib", 0.25, 0.0, 1.0, false, "NCCL_BUFFSIZE 4 MiB x 32 channels x 2 ring peers (NCCL docs)"};
inline constexpr ModelConstant allocator_reserve{
    "allocator_reserve", 0.10, 0.0, 0.3, false, "a third of ZeRO's worst-case 30 % free at OOM (Rajbhandari et al. 2020, sec. 6.3)"};

}  // namespace constants

// Every constant above, for listings and tests.
inline constexpr std::array<const ModelConstant*, 28> kModelConstants = {
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
    &constants::intra_node,
    &constants::inter_node,
    &constants::kernel_launch_s,
    &constants::host_op_s,
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
