// trainclock: predict() (first-order placeholder, replaced by the operator-level model next).
// Step time = 6 N tokens / (GPUs x peak x 0.5): Kaplan et al. 2020 (arXiv 2001.08361) C = 6 N D.
#include "trainclock/prediction.hpp"

namespace trainclock {

Prediction predict(const Config& config, const PredictOptions&) {
    Prediction p;
    const double tokens_per_step = double(config.training.global_batch) * double(config.training.seq_len);
    const double flops = 6.0 * double(active_parameter_count(config.model)) * tokens_per_step;
    const double peak = config.gpu.peak_flops(config.precision.gemm);
    const double gpus = double(config.num_gpus > 0 ? config.num_gpus : 1);
    p.iteration_time_s = peak > 0 ? flops / (gpus * peak * 0.5) : 0;
    p.breakdown_s.gemm = p.iteration_time_s;
    if (p.iteration_time_s > 0) {
        p.tokens_per_s = tokens_per_step / p.iteration_time_s;
        p.tokens_per_s_per_gpu = p.tokens_per_s / gpus;
        p.samples_per_s = double(config.training.global_batch) / p.iteration_time_s;
        p.model_tflops_per_gpu = flops / p.iteration_time_s / gpus / 1e12;
        p.hardware_tflops_per_gpu = p.model_tflops_per_gpu;
        p.mfu = 0.5;
    }
    p.memory.capacity_gib = config.gpu.memory_gib;
    return p;
}

} // namespace trainclock
