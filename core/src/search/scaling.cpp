// trainclock: the GPU-count sweep and the time/cost Pareto front (scaling.hpp).
#include "trainclock/formats/prediction_json.hpp"
#include "trainclock/search/scaling.hpp"

#include <algorithm>
#include <numeric>

namespace trainclock {

std::vector<int64_t> scaling_gpu_counts(int64_t current, int below, int above) {
    current = std::max<int64_t>(current, 1);
    int exponent = 0;
    while ((int64_t(1) << (exponent + 1)) <= current) ++exponent;  // floor(log2(current))
    std::vector<int64_t> counts;
    for (int k = std::max(0, exponent - below); k <= std::min(exponent + above, 40); ++k) counts.push_back(int64_t(1) << k);
    if (std::find(counts.begin(), counts.end(), current) == counts.end()) {
        counts.insert(std::upper_bound(counts.begin(), counts.end(), current), current);
    }
    return counts;
}

ScalingSweep plan_scaling(const Config& config, std::vector<int64_t> gpu_counts) {
    ScalingSweep sweep;
    sweep.base = config;
    sweep.base.parallel.dp = 0;  // derived at every count
    std::sort(gpu_counts.begin(), gpu_counts.end());
    gpu_counts.erase(std::unique(gpu_counts.begin(), gpu_counts.end()), gpu_counts.end());
    sweep.gpu_counts = std::move(gpu_counts);
    return sweep;
}

void run_scaling(ScalingSweep& sweep, size_t counts) {
    for (size_t n = 0; n < counts && !sweep.done(); ++n) {
        if (!sweep.next.rows.empty()) {  // a count run_scaling_rows began
            run_scaling_rows(sweep, sweep.next.rows.size() - sweep.next_rows);
            continue;
        }
        Config at = sweep.base;
        at.num_gpus = sweep.gpu_counts[sweep.at.size()];
        sweep.at.push_back(compare_precisions(at));
    }
}

void run_scaling_rows(ScalingSweep& sweep, size_t rows) {
    for (size_t n = 0; n < rows && !sweep.done();) {
        if (sweep.next.rows.empty()) {
            Config at = sweep.base;
            at.num_gpus = sweep.gpu_counts[sweep.at.size()];
            sweep.next = plan_precision_comparison(at);
            sweep.next_rows = 0;
        }
        if (sweep.next_rows < sweep.next.rows.size()) {
            predict_precision_row(sweep.next.rows[sweep.next_rows++]);
            ++n;
        }
        if (sweep.next_rows >= sweep.next.rows.size()) {  // the count is complete (or its GPU runs no precision)
            finish_precision_comparison(sweep.next);
            sweep.at.push_back(std::move(sweep.next));
            sweep.next = {};
            sweep.next_rows = 0;
        }
    }
}

ScalingSweep scaling_sweep(const Config& config, std::vector<int64_t> gpu_counts) {
    ScalingSweep sweep = plan_scaling(config, std::move(gpu_counts));
    run_scaling(sweep, sweep.gpu_counts.size());
    return sweep;
}

std::string scaling_to_csv(const ScalingSweep& sweep) {
    std::string csv = prediction_csv_header() + "\n";
    for (const PrecisionComparison& at : sweep.at)
        for (const PrecisionRow& row : at.rows)
            if (!row.error) csv += prediction_to_csv_row(row.prediction, row.config) + "\n";
    return csv;
}

std::vector<size_t> pareto_front(const std::vector<std::pair<double, double>>& points) {
    std::vector<size_t> order(points.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return points[a] < points[b]; });
    // Sweep by ascending first coordinate: a point is on the front when its second coordinate is
    // below every earlier one (or equal to a front point with the same first coordinate).
    std::vector<size_t> front;
    for (size_t i : order) {
        if (front.empty() || points[i].second < points[front.back()].second || points[i] == points[front.back()]) front.push_back(i);
    }
    return front;
}

}  // namespace trainclock
