// trainclock: bounded fits of calibration factors (fit.hpp).
//
// Index
//   [SECTION] The table of fitted constants
//   [SECTION] Applying multipliers to a case
//   [SECTION] The fitter (Gauss-Newton on log errors, Huber loss by IRLS, box bounds)
//   [SECTION] Cross-source refit (and the interval rows of its residuals)
//   [SECTION] calibrate
#include "trainclock/validation/fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include <simdjson.h>

#include "base/json_writer.hpp"
#include "base/json_reader.hpp"
#include "catalogue/spec_json.hpp"
#include "perf/constants.hpp"
#include "trainclock/formats/config_json.hpp"

namespace trainclock {

// [SECTION] The table of fitted constants ---------------------------------------------------------

namespace {

constexpr int kFp32 = static_cast<int>(DType::fp32);
constexpr const char* kRefitCommand = "trainclock validate --refit";

// One fitted factor (fit.hpp FitParameter): global unless a GPU, dtype or attention kernel is named.
FitParameter factor(std::string name, FitKnob knob, double lo, double hi, std::string gpu = "", int dtype = -1, int attention_kernel = -1) {
    FitParameter p;
    p.name = std::move(name);
    p.knob = knob;
    p.lo = lo;
    p.hi = hi;
    p.gpu = std::move(gpu);
    p.dtype = dtype;
    p.attention_kernel = attention_kernel;
    return p;
}

bool is_fit_set(std::string_view set) {
    for (const char* s : constants::kFitSets)
        if (set == s) return true;
    return false;
}

// "presets/validation sets public, public-2 and vtrain (time metrics)"
std::string fit_data_set() {
    std::string out = "presets/validation sets ";
    for (size_t i = 0; i < constants::kFitSets.size(); ++i)
        out += std::string(i == 0 ? "" : i + 1 == constants::kFitSets.size() ? " and " : ", ") + constants::kFitSets[i];
    return out + " (time metrics)";
}

}  // namespace

std::vector<FittedConstant> fitted_constants() {
    std::vector<FittedConstant> out;
    for (const ModelConstant& c : model_constants()) {
        if (c.refit == FitKnob::none) continue;
        // Bounds: the table's range as multipliers (apply() caps a fraction at 1).
        FitParameter p = factor(c.name, c.refit, c.low / c.value, c.high / c.value, "", -1, c.attention_kernel);
        p.fp8_gpus = c.fp8_gpus;
        out.push_back({std::move(p), c.value, c.unit, c.source, fit_data_set(), kRefitCommand});
    }
    return out;
}

// [SECTION] Applying multipliers to a case --------------------------------------------------------

namespace {

bool applies(const FitParameter& p, const Config& config) {
    if (!p.gpu.empty() && p.gpu != config.gpu.name) return false;
    if (p.fp8_gpus >= 0 && config.gpu.supports(DType::fp8) != (p.fp8_gpus == 1)) return false;
    return p.attention_kernel < 0 || p.attention_kernel == static_cast<int>(config.training.attention_kernel);
}

// The overrides that put `base` scaled by the multipliers into effect (only the fields they change).
CalibrationOverrides scaled_overrides(const std::vector<FitParameter>& parameters, const std::vector<double>& m, const Calibration& base,
                                      const Config& config) {
    CalibrationOverrides o;
    auto scale = [](std::optional<double>& field, double base_value, double factor, bool fraction) {
        const double value = (field ? *field : base_value) * factor;
        field = fraction ? std::min(1.0, value) : value;
    };
    for (size_t j = 0; j < parameters.size(); ++j) {
        const FitParameter& p = parameters[j];
        if (m[j] == 1.0 || !applies(p, config)) continue;
        switch (p.knob) {
        case FitKnob::gemm:
            for (int d = 0; d < kDTypeCount; ++d) {
                if (p.dtype >= 0 ? d == p.dtype : d != kFp32) scale(o.gemm_efficiency[d], base.gemm_efficiency[d], m[j], true);
            }
            break;
        case FitKnob::attention: scale(o.attention_efficiency, base.attention_efficiency, m[j], true); break;
        case FitKnob::memory: scale(o.memory_efficiency, base.memory_efficiency, m[j], true); break;
        case FitKnob::intra_node: scale(o.intra_node_efficiency, base.intra_node_efficiency, m[j], true); break;
        case FitKnob::inter_node: scale(o.inter_node_efficiency, base.inter_node_efficiency, m[j], true); break;
        case FitKnob::kernel_launch: scale(o.kernel_launch_s, base.kernel_launch_s, m[j], false); break;
        case FitKnob::host_op: scale(o.host_op_s, base.host_op_s, m[j], false); break;
        case FitKnob::step_overhead: scale(o.step_overhead_s, base.step_overhead_s, m[j], false); break;
        case FitKnob::fp8_rowwise_gemm: scale(o.fp8_rowwise_gemm, base.fp8_rowwise_gemm, m[j], true); break;
        case FitKnob::none: break;
        }
    }
    return o;
}

bool any_override(const CalibrationOverrides& o) {
    bool any = false;
    for (const auto& e : o.gemm_efficiency) any = any || e.has_value();
    for (const auto& scalar : calibration_scalars(o)) any = any || scalar.value->has_value();
    return any;
}

}  // namespace

FitProblem::FitProblem(const ValidationSuite& suite, std::vector<FitParameter> parameters)
    : suite_(suite), parameters_(std::move(parameters)) {
    base_.reserve(suite.cases.size());
    scratch_.reserve(suite.cases.size());
    for (const ValidationCase& c : suite.cases) {
        scratch_.push_back(c.config);
        base_.push_back(resolve_calibration(c.config.gpu, c.config.calibration, c.config.training.attention_kernel, &c.config.framework));
    }
}

void FitProblem::apply(size_t index, const std::vector<double>& multipliers, Config& config) const {
    CalibrationOverrides o = scaled_overrides(parameters_, multipliers, base_[index], config);
    // A section for the case's own GPU, last: it wins over every override already in the config.
    if (any_override(o)) config.calibration.per_gpu.emplace_back(config.gpu.name, o);
}

double FitProblem::log_error(size_t index, const std::vector<double>& multipliers) const {
    if (memoize_) {
        if (const auto hit = memo_.find({index, multipliers}); hit != memo_.end()) return hit->second;
    }
    const ValidationCase& c = suite_.cases[index];
    Config& config = scratch_[index];  // a Config copy per prediction was a fifth of a refit's time
    const size_t sections = config.calibration.per_gpu.size();
    apply(index, multipliers, config);
    const double predicted = predicted_metric(c.metric, predict(config));
    config.calibration.per_gpu.erase(config.calibration.per_gpu.begin() + static_cast<std::ptrdiff_t>(sections),
                                     config.calibration.per_gpu.end());
    const double error = std::log(std::max(predicted, 1e-300) / c.measured);
    if (memoize_) memo_.emplace(std::make_pair(index, multipliers), error);
    return error;
}

CalibrationSpec FitProblem::calibration(const std::vector<double>& multipliers) const {
    CalibrationSpec spec;
    std::set<std::string> done;
    for (size_t i = 0; i < suite_.cases.size(); ++i) {
        const Config& config = suite_.cases[i].config;
        if (!done.insert(config.gpu.name).second) continue;
        // Absolute values on this GPU from its shipped record (no user overrides of the case).
        const Calibration base = resolve_calibration(config.gpu, {}, config.training.attention_kernel, &config.framework);
        CalibrationOverrides o = scaled_overrides(parameters_, multipliers, base, config);
        if (any_override(o)) spec.per_gpu.emplace_back(config.gpu.name, o);
    }
    return spec;
}

// [SECTION] The fitter (Gauss-Newton on log errors, Huber loss by IRLS, box bounds) --------------

namespace {

constexpr double kHuber = 0.05;  // log error where the loss turns from quadratic to linear (5 %)

// Huber loss of a log error: quadratic near 0 (a smooth optimum), linear beyond kHuber (a run that
// the physics misses by 2x pulls no harder than one it misses by 10 %... times 20, not 400).
double huber(double r) {
    const double a = std::fabs(r);
    return a <= kHuber ? 0.5 * r * r : kHuber * (a - 0.5 * kHuber);
}

// Solve A x = b (A symmetric positive definite, small) by Gaussian elimination with pivoting.
std::vector<double> solve(std::vector<std::vector<double>> A, std::vector<double> b) {
    const size_t n = b.size();
    for (size_t c = 0; c < n; ++c) {
        size_t pivot = c;
        for (size_t r = c + 1; r < n; ++r)
            if (std::fabs(A[r][c]) > std::fabs(A[pivot][c])) pivot = r;
        std::swap(A[c], A[pivot]);
        std::swap(b[c], b[pivot]);
        if (std::fabs(A[c][c]) < 1e-300) continue;
        for (size_t r = c + 1; r < n; ++r) {
            const double f = A[r][c] / A[c][c];
            for (size_t k = c; k < n; ++k) A[r][k] -= f * A[c][k];
            b[r] -= f * b[c];
        }
    }
    std::vector<double> x(n, 0.0);
    for (size_t c = n; c-- > 0;) {
        double sum = b[c];
        for (size_t k = c + 1; k < n; ++k) sum -= A[c][k] * x[k];
        x[c] = std::fabs(A[c][c]) < 1e-300 ? 0.0 : sum / A[c][c];
    }
    return x;
}

}  // namespace

FitResult FitProblem::fit(const std::vector<size_t>& train, const FitOptions& options) const {
    const size_t n = train.size(), P = parameters_.size();
    FitResult result;
    result.multipliers.assign(P, 1.0);
    result.sensitivity.assign(P, 0.0);
    result.fitted.assign(P, false);
    if (n == 0) return result;

    // Case weights: a source file of n cases weighs sqrt(n) in total, so vTrain's 1,549 rows do not
    // outvote the rest, nor a 2-case file with a physics gap the 216 llm-foundry rows (per-file
    // weights pulled attention to its bound on 4 B200 rows: in-sample public 9.5 -> 12.7 %).
    std::map<std::string, double> per_file;
    for (size_t i : train) per_file[suite_.cases[i].file] += 1;
    std::vector<double> w(n);
    double total = 0;
    for (size_t k = 0; k < n; ++k) {
        w[k] = options.equal_source_weight ? 1.0 / std::sqrt(per_file[suite_.cases[train[k]].file]) : 1.0;
        total += w[k];
    }
    for (double& x : w) x /= total;

    std::vector<double> u(P, 0.0), lo(P), hi(P);  // log multipliers and their bounds
    for (size_t j = 0; j < P; ++j) {
        lo[j] = std::log(parameters_[j].lo);
        hi[j] = std::log(parameters_[j].hi);
        if (options.start.size() == P) u[j] = std::clamp(std::log(options.start[j]), lo[j], hi[j]);
    }
    auto multipliers = [&](const std::vector<double>& logs) {
        std::vector<double> m(P);
        for (size_t j = 0; j < P; ++j) m[j] = std::exp(logs[j]);
        return m;
    };
    auto residuals = [&](const std::vector<double>& logs) {
        const std::vector<double> m = multipliers(logs);
        std::vector<double> r(n);
        for (size_t k = 0; k < n; ++k) r[k] = log_error(train[k], m);
        result.predictions += static_cast<int64_t>(n);
        return r;
    };
    auto objective = [&](const std::vector<double>& r, const std::vector<double>& logs) {
        double sum = 0;
        for (size_t k = 0; k < n; ++k) sum += w[k] * huber(r[k]);
        for (size_t j = 0; j < P; ++j) sum += 0.5 * options.prior * logs[j] * logs[j];
        return sum;
    };
    auto mean_abs_error = [&](const std::vector<double>& r) {
        double sum = 0;
        for (size_t k = 0; k < n; ++k) sum += w[k] * std::fabs(r[k]);
        return sum;
    };

    std::vector<double> r = residuals(u);
    result.error_before = mean_abs_error(r);
    double current = objective(r, u);
    constexpr double kStep = 0.05;  // finite-difference step in log space (5 %)
    std::vector<std::vector<double>> J(P, std::vector<double>(n, 0.0));
    for (int iteration = 0; iteration < options.iterations; ++iteration) {
        // Jacobian of the log errors by forward differences (backward at an upper bound).
        for (size_t j = 0; j < P; ++j) {
            if (iteration > 0 && !result.fitted[j]) continue;
            if (!options.candidates.empty() && !options.candidates[j]) continue;
            std::vector<double> shifted = u;
            const double h = u[j] + kStep <= hi[j] ? kStep : -kStep;
            shifted[j] += h;
            const std::vector<double> m = multipliers(shifted);
            double sensitivity = 0;
            for (size_t k = 0; k < n; ++k) {
                // A factor of another GPU or kernel leaves the case as it is: no prediction needed.
                if (!applies(parameters_[j], suite_.cases[train[k]].config)) {
                    J[j][k] = 0;
                    continue;
                }
                J[j][k] = (log_error(train[k], m) - r[k]) / h;
                ++result.predictions;
                sensitivity += w[k] * std::fabs(J[j][k]);
            }
            if (iteration == 0) {
                result.sensitivity[j] = sensitivity;
                result.fitted[j] = sensitivity >= options.min_sensitivity;
            }
        }
        if (iteration == 0 && options.max_fitted > 0) {
            // Fewer cases than factors: fit only the most sensitive (the rest stay as shipped).
            std::vector<size_t> order;
            for (size_t j = 0; j < P; ++j)
                if (result.fitted[j]) order.push_back(j);
            std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return result.sensitivity[x] > result.sensitivity[y]; });
            for (size_t k = static_cast<size_t>(options.max_fitted); k < order.size(); ++k) result.fitted[order[k]] = false;
        }
        // Minimise the linearised Huber objective: iteratively reweighted least squares, with the
        // factors that reach a bound fixed there (active set); a ridge of `prior` toward shipped.
        std::vector<double> delta(P, 0.0);
        std::vector<bool> free_factor(result.fitted);
        for (int reweight = 0; reweight < 8; ++reweight) {
            std::vector<size_t> F;
            for (size_t j = 0; j < P; ++j)
                if (free_factor[j]) F.push_back(j);
            if (F.empty()) break;
            std::vector<double> omega(n), a(n);
            for (size_t k = 0; k < n; ++k) {
                a[k] = r[k];
                for (size_t j = 0; j < P; ++j) a[k] += J[j][k] * delta[j];
                omega[k] = w[k] * (std::fabs(a[k]) <= kHuber ? 1.0 : kHuber / std::fabs(a[k]));
            }
            const size_t m = F.size();
            std::vector<std::vector<double>> A(m, std::vector<double>(m, 0.0));
            std::vector<double> b(m, 0.0);
            for (size_t x = 0; x < m; ++x) {
                const auto& jx = J[F[x]];
                for (size_t k = 0; k < n; ++k) {
                    // Residual with the free factors' steps removed: what they must explain.
                    double fixed = r[k];
                    for (size_t j = 0; j < P; ++j)
                        if (!free_factor[j]) fixed += J[j][k] * delta[j];
                    b[x] -= omega[k] * jx[k] * fixed;
                }
                for (size_t y = x; y < m; ++y) {
                    const auto& jy = J[F[y]];
                    double sum = 0;
                    for (size_t k = 0; k < n; ++k) sum += omega[k] * jx[k] * jy[k];
                    A[x][y] = A[y][x] = sum;
                }
                A[x][x] += options.prior + 1e-9;
                b[x] -= options.prior * u[F[x]];
            }
            const std::vector<double> step = solve(A, b);
            bool clamped = false;
            for (size_t x = 0; x < m; ++x) {
                const size_t j = F[x];
                const double t = std::clamp(step[x], lo[j] - u[j], hi[j] - u[j]);
                if (t != step[x]) {
                    free_factor[j] = false;  // at its bound: fixed there, the others re-solved
                    clamped = true;
                }
                delta[j] = t;
            }
            if (clamped) --reweight;  // an active-set change is not a reweighting step
        }
        // Take the step if the true objective improves (halving it up to twice).
        bool accepted = false;
        for (double step = 1.0; step > 0.2 && !accepted; step *= 0.5) {
            std::vector<double> trial = u;
            for (size_t j = 0; j < P; ++j) trial[j] = std::clamp(u[j] + step * delta[j], lo[j], hi[j]);
            std::vector<double> trial_r = residuals(trial);
            const double value = objective(trial_r, trial);
            if (value < current - 1e-9) {
                u = std::move(trial);
                r = std::move(trial_r);
                current = value;
                accepted = true;
            }
        }
        if (!accepted) break;
    }
    result.multipliers = multipliers(u);
    result.error_after = mean_abs_error(r);
    return result;
}

// [SECTION] Cross-source refit --------------------------------------------------------------------

std::string source_family(std::string_view file) {
    // Files measured on one cluster with one software stack by one team (their errors correlate).
    static const std::pair<std::string_view, std::string_view> kFamilies[] = {
        {"vtrain-single", "vtrain"},
        {"vtrain-multi", "vtrain"},
        {"megatron-sc21", "megatron-selene"},
        {"korthikanti22", "megatron-selene"},
        {"nvidia-dle-bert", "nvidia-dle"},
        {"nvidia-dle-transformer-xl", "nvidia-dle"},
        {"nvidia-dle-bert-binned", "nvidia-dle"},
        {"torchao-float8", "torchtitan"},
        {"torchtitan-mxfp8", "torchtitan"},
        {"torchao-moe", "torchtitan"},
    };
    for (const auto& [name, family] : kFamilies)
        if (name == file) return std::string(family);
    return std::string(file);
}

std::vector<size_t> fit_cases(const ValidationSuite& suite) {
    std::vector<size_t> out;
    for (size_t i = 0; i < suite.cases.size(); ++i) {
        const ValidationCase& c = suite.cases[i];
        if (is_fit_set(c.set) && !is_memory_case(c)) out.push_back(i);
    }
    return out;
}

CrossSourceReport run_cross_source(const ValidationSuite& suite, const FitOptions& options) {
    std::vector<FitParameter> parameters;
    for (const FittedConstant& c : fitted_constants()) parameters.push_back(c.parameter);
    const FitProblem problem(suite, parameters);
    const std::vector<size_t> all = fit_cases(suite);

    CrossSourceReport report;
    std::vector<int> fold_of(suite.cases.size(), -1);
    for (size_t i : all) {
        const std::string family = source_family(suite.cases[i].file);
        auto it = std::find(report.families.begin(), report.families.end(), family);
        if (it == report.families.end()) it = report.families.insert(report.families.end(), family);
        fold_of[i] = static_cast<int>(it - report.families.begin());
    }
    report.all_fit = problem.fit(all, options);
    for (size_t f = 0; f < report.families.size(); ++f) {
        std::vector<size_t> train;
        for (size_t i : all)
            if (fold_of[i] != static_cast<int>(f)) train.push_back(i);
        report.fold_fits.push_back(problem.fit(train, options));
    }
    report.in_sample = run_validation(suite);
    ValidationOptions refit;
    refit.configure = [&](size_t i, Config& config) { problem.apply(i, report.all_fit.multipliers, config); };
    report.refit = run_validation(suite, refit);
    // Cases outside the folds (memory, unrepresentable) take the fit on every family.
    ValidationOptions cross;
    cross.configure = [&](size_t i, Config& config) {
        const FitResult& fit = fold_of[i] >= 0 ? report.fold_fits[static_cast<size_t>(fold_of[i])] : report.all_fit;
        problem.apply(i, fit.multipliers, config);
    };
    report.cross_source = run_validation(suite, cross);
    return report;
}

std::string cross_source_report_json(const CrossSourceReport& report, const IntervalCoverage* coverage) {
    JsonWriter out(2);
    out.begin_object();
    out.field("schema", "trainclock/cross-source/v1");
    out.key("families").begin_array();
    for (const auto& family : report.families) out.value(family);
    out.end_array();
    out.key("constants").begin_array();
    const std::vector<FittedConstant> table = fitted_constants();
    for (size_t j = 0; j < table.size(); ++j) {
        out.begin_object();
        out.field("name", table[j].parameter.name).field("shipped", table[j].shipped);
        out.field("refit", table[j].shipped * report.all_fit.multipliers[j]);
        out.field("fitted", static_cast<bool>(report.all_fit.fitted[j])).field("sensitivity", report.all_fit.sensitivity[j]);
        out.field("data_set", table[j].data_set).field("refit_command", table[j].refit_command);
        out.end_object();
    }
    out.end_array();
    out.object_array("groups", report.cross_source.groups, [&](const GroupError& g) {
        const GroupError* in = report.in_sample.find(g.kind, g.name);
        const GroupError* refit = report.refit.find(g.kind, g.name);
        out.field("kind", g.kind).field("name", g.name).field("count", g.count);
        out.field("in_sample", in ? in->mape : 0.0).field("refit", refit ? refit->mape : 0.0);
        out.field("cross_source", g.mape).field("bias", g.bias);
    });
    if (coverage) {  // the 80 % likely range (intervals.hpp)
        out.key("interval_coverage").begin_object();
        for (const auto& [name, groups] :
             {std::pair{"cross_source", &coverage->cross_source}, std::pair{"held_out", &coverage->held_out}}) {
            out.object_array(name, *groups, [&](const CoverageGroup& g) {
                out.field("kind", g.kind).field("name", g.name).field("cases", g.cases).field("coverage", g.coverage);
                out.field("by_family", g.by_family).field("median_width", g.median_width).field("bias", g.bias);
            });
        }
        out.end_object();
    }
    out.end_object();
    return out.take();
}

std::vector<IntervalResidual> cross_source_residuals(const ValidationSuite& suite, const CrossSourceReport& report) {
    std::vector<IntervalResidual> residuals;
    const std::vector<size_t> cases = fit_cases(suite);
    std::vector<bool> in_fit(suite.cases.size(), false);
    for (size_t i : cases) in_fit[i] = true;
    for (const CaseResult& r : report.cross_source.cases) {
        if (!in_fit[r.case_index]) continue;
        const ValidationCase& c = suite.cases[r.case_index];
        // measured / predicted time: a throughput's ratio is the inverse.
        const double ratio = c.metric == MeasuredMetric::iteration_time_s ? c.measured / r.predicted : r.predicted / c.measured;
        if (!(ratio > 0) || !std::isfinite(ratio)) continue;
        residuals.push_back({interval_groups(c.config), interval_axes(c.config), source_family(c.file), ratio});
    }
    return residuals;
}

IntervalTable cross_source_intervals(const ValidationSuite& suite, const CrossSourceReport& report) {
    return interval_table(cross_source_residuals(suite, report));
}

}  // namespace trainclock

namespace trainclock {

// [SECTION] calibrate -----------------------------------------------------------------------------

namespace {

std::string fixed_text(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

constexpr double kCalibrateMinSensitivity = 0.02;  // a 5 % change of the factor moves the cases < 0.1 %
constexpr double kCalibratePrior = 1e-3;           // ridge toward the shipped value (per unit log-multiplier^2)

// The factors a set of runs could constrain, per GPU: GEMM efficiency of each dtype they run,
// attention, memory-bound kernels, the links they use, and the fixed costs.
std::vector<FitParameter> calibration_candidates(const ValidationSuite& suite, const std::vector<size_t>& cases) {
    std::vector<std::string> gpus;
    for (size_t i : cases) {
        const std::string& g = suite.cases[i].config.gpu.name;
        if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
    }
    std::vector<FitParameter> out;
    for (const std::string& g : gpus) {
        std::set<int> dtypes;
        bool multi_gpu = false, multi_node = false;
        for (size_t i : cases) {
            const Config& c = suite.cases[i].config;
            if (c.gpu.name != g) continue;
            dtypes.insert(static_cast<int>(c.precision.gemm));
            multi_gpu = multi_gpu || c.num_gpus > 1;
            multi_node = multi_node || c.num_gpus > c.node.gpus_per_node;
        }
        for (int d : dtypes) out.push_back(factor("gemm_efficiency." + std::string(dtype_name(DType(d))), FitKnob::gemm, 0.5, 1.5, g, d));
        out.push_back(factor("attention_efficiency", FitKnob::attention, 0.5, 2.0, g));
        out.push_back(factor("memory_efficiency", FitKnob::memory, 0.5, 1.5, g));
        if (multi_gpu) out.push_back(factor("intra_node_efficiency", FitKnob::intra_node, 0.5, 1.25, g));
        if (multi_node) out.push_back(factor("inter_node_efficiency", FitKnob::inter_node, 0.4, 1.25, g));
        out.push_back(factor("kernel_launch_s", FitKnob::kernel_launch, 0.25, 4.0, g));
        out.push_back(factor("host_op_s", FitKnob::host_op, 0.25, 4.0, g));
        out.push_back(factor("step_overhead_s", FitKnob::step_overhead, 0.1, 10.0, g));
    }
    return out;
}

double mean_abs(const std::vector<CalibrateCase>& cases, double CalibrateCase::*member) {
    double sum = 0;
    for (const auto& c : cases) sum += std::fabs(c.*member);
    return cases.empty() ? 0 : sum / static_cast<double>(cases.size());
}

// A calibration holds one section per GPU, so the runs of one GPU must share a framework (whose
// kernels, overlap and dispatch the factors absorb): else the fit would average two stacks.
std::optional<Error> one_framework_per_gpu(const ValidationSuite& suite, const std::vector<size_t>& cases) {
    std::vector<std::pair<std::string, std::string>> seen;  // (gpu, framework)
    for (size_t i : cases) {
        const Config& c = suite.cases[i].config;
        const std::string framework = c.framework.name.empty() ? "none" : c.framework.name;  // as calibrate --framework none
        for (const auto& [gpu, other] : seen) {
            if (gpu == c.gpu.name && other != framework)
                return Error{"framework", "the runs on " + gpu + " use frameworks " + other + " and " + framework +
                                              ": a calibration holds one section per GPU, so calibrate each stack on its own "
                                              "(calibrate --framework ID)"};
        }
        seen.emplace_back(c.gpu.name, framework);
    }
    return std::nullopt;
}

}  // namespace

namespace {
std::string json_string(std::string_view text) {
    JsonWriter out;
    out.value(text);
    return out.take();
}
}  // namespace

Result<ValidationSuite> parse_measurements(std::string_view json, std::string_view file) {
    // The file's own "name" stands for the stem that presets/validation files must match.
    std::string name = "measurements";
    simdjson::dom::parser parser;
    simdjson::dom::element document;
    std::string_view given;
    const bool parsed = parser.parse(json.data(), json.size()).get(document) == simdjson::SUCCESS;
    if (parsed && document["name"].get_string().get(given) == simdjson::SUCCESS) name = std::string(given);
    // A user's runs (issue 25): a plain array of runs, or {"cases": [...]} without the header that
    // presets/validation files carry; each run needs only "config" and "measured" (id and citation
    // default to the run's position and the file). Normalised to the validation file format.
    simdjson::dom::array runs;
    simdjson::dom::object root;
    const bool is_array = parsed && document.get_array().get(runs) == simdjson::SUCCESS;
    const bool bare_object = parsed && document.get_object().get(root) == simdjson::SUCCESS &&
                             document["cases"].get_array().get(runs) == simdjson::SUCCESS &&
                             (document["set"].error() != simdjson::SUCCESS || document["source"].error() != simdjson::SUCCESS ||
                              document["schema_version"].error() != simdjson::SUCCESS);
    std::string normalised;
    if (is_array || bare_object) {
        name = "measurements";
        normalised = R"({"schema_version": 1, "name": "measurements", "set": "public", "source": )" + json_string(file) + R"(, "cases": [)";
        int64_t index = 0;
        for (const auto run : runs) {
            simdjson::dom::object object;
            std::string entry = simdjson::minify(run);
            if (run.get_object().get(object) == simdjson::SUCCESS) {
                std::string extra;
                if (object["id"].error() != simdjson::SUCCESS) extra += R"("id": "run-)" + std::to_string(index + 1) + R"(", )";
                if (object["citation"].error() != simdjson::SUCCESS) extra += R"("citation": )" + json_string(file) + ", ";
                entry = "{" + extra + entry.substr(1);
                if (entry.size() >= 3 && entry.compare(entry.size() - 3, 3, ", }") == 0) entry.replace(entry.size() - 3, 3, "}");
            }
            normalised += (index > 0 ? ", " : "") + entry;
            ++index;
        }
        normalised += "]}";
        json = normalised;
    }
    ValidationSuite suite;
    parse_validation_file(name + ".json", json, suite);
    for (ValidationIssue& issue : suite.issues) {  // messages name the real file, not "measurements.json"
        issue.file = std::string(file);
        if (!normalised.empty()) issue.line = 0;  // the lines of the normalised text are not the file's
    }
    if (!suite.issues.empty()) {  // keyed by the file; "line N: case I (ID): reason"
        const ValidationIssue& issue = suite.issues.front();
        std::string where = issue.line > 0 ? "line " + std::to_string(issue.line) + ": " : "";
        if (issue.case_index >= 0)
            where += "case " + std::to_string(issue.case_index) + (issue.id.empty() ? "" : " (" + issue.id + ")") + ": ";
        return Error{std::string(file), where + issue.message};
    }
    return suite;
}

Result<CalibrateReport> calibrate(const ValidationSuite& measurements, const FitOptions& options) {
    std::vector<size_t> cases;
    for (size_t i = 0; i < measurements.cases.size(); ++i)
        if (!is_memory_case(measurements.cases[i])) cases.push_back(i);
    if (cases.empty())
        return Error{"measurements", "no case measures a time (iteration_time_s, tokens_per_s, tokens_per_s_per_gpu, samples_per_s)"};
    if (auto mixed = one_framework_per_gpu(measurements, cases)) return *mixed;
    // Contradictory runs (issue 25): one config measured more than 2x apart in one metric has no
    // factor that fits both; run-to-run noise is a few percent, so one of them is not that config.
    std::map<std::string, size_t> first_of;
    for (const size_t i : cases) {
        const ValidationCase& c = measurements.cases[i];
        const auto [at, inserted] = first_of.emplace(std::to_string(int(c.metric)) + config_to_json(c.config), i);
        if (inserted) continue;
        const ValidationCase& other = measurements.cases[at->second];
        const double ratio = std::max(c.measured, other.measured) / std::min(c.measured, other.measured);
        if (ratio > 2.0) {
            char text[160];
            std::snprintf(text, sizeof text, "measured %.6g and %.6g (%.3gx apart)", other.measured, c.measured, ratio);
            return Error{"measured", "runs " + other.id + " and " + c.id + " have the same config but " + text +
                                         ": contradictory, no calibration fits both (remove the wrong one)"};
        }
    }
    // A run the cost model says does not fit in memory (issue 25): its time would calibrate the
    // factors of a layout the model says cannot run, so the config (or the memory model) is wrong.
    for (const size_t i : cases) {
        const ValidationCase& c = measurements.cases[i];
        const Prediction p = predict(c.config);
        if (!p.memory.fits) {
            char text[200];
            std::snprintf(text, sizeof text, "needs %.1f GiB per GPU of the %.0f GiB of %s", p.memory.per_gpu_gib, p.memory.capacity_gib,
                          c.config.gpu.name.c_str());
            return Error{"measured", "run " + c.id + " does not fit in memory as configured (" + text +
                                         "): its time cannot calibrate this layout; give the run's recompute, zero, offload or "
                                         "micro-batch, or remove it"};
        }
    }
    CalibrateReport report;
    report.parameters = calibration_candidates(measurements, cases);
    FitProblem problem(measurements, report.parameters);
    problem.memoize();  // the leave-one-out refits below start from one point: most predictions repeat
    FitOptions o = options;
    if (o.prior <= 0) o.prior = kCalibratePrior;
    o.min_sensitivity = std::max(o.min_sensitivity, kCalibrateMinSensitivity);
    o.equal_source_weight = false;                      // the user's runs: each counts once
    o.max_fitted = static_cast<int64_t>(cases.size());  // never more factors than runs
    // Identifiability (issue 25): a factor whose effect on the runs is (nearly) a combination of the
    // effects of more sensitive factors cannot be told apart from them (runs that differ only in the
    // batch move GEMM, attention and memory-bound time in proportion): it is not fitted, and said so.
    const size_t P = report.parameters.size();
    std::vector<std::string> not_identified(P);
    {
        const std::vector<double> ones(P, 1.0);
        std::vector<double> base(cases.size());
        for (size_t k = 0; k < cases.size(); ++k) base[k] = problem.log_error(cases[k], ones);
        constexpr double kStep = 1.05;  // a 5 % change of one factor
        std::vector<std::vector<double>> column(P, std::vector<double>(cases.size()));
        std::vector<double> sensitivity(P, 0.0);
        for (size_t j = 0; j < P; ++j) {
            std::vector<double> m = ones;
            m[j] = kStep;
            for (size_t k = 0; k < cases.size(); ++k) {
                column[j][k] = (problem.log_error(cases[k], m) - base[k]) / std::log(kStep);
                sensitivity[j] += std::fabs(column[j][k]) / double(cases.size());
            }
        }
        std::vector<size_t> order(P);
        for (size_t j = 0; j < P; ++j) order[j] = j;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sensitivity[a] > sensitivity[b]; });
        std::vector<std::vector<double>> basis;  // orthonormal effects of the identified factors (Gram-Schmidt)
        std::vector<size_t> chosen;
        auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
            double sum = 0;
            for (size_t k = 0; k < a.size(); ++k) sum += a[k] * b[k];
            return sum;
        };
        constexpr double kIndependent = 0.1;  // the part of a factor's effect no chosen factor explains, below this: not identified
        for (const size_t j : order) {
            if (sensitivity[j] < o.min_sensitivity) continue;  // the fit refuses it as not constrained
            std::vector<double> rest = column[j];
            for (const auto& q : basis) {
                const double along = dot(q, rest);
                for (size_t k = 0; k < rest.size(); ++k) rest[k] -= along * q[k];
            }
            const double norm = std::sqrt(dot(column[j], column[j])), left = std::sqrt(dot(rest, rest));
            if (left <= kIndependent * norm) {
                size_t like = chosen.front();  // the chosen factor whose effect is most like this one's
                double best = -1;
                for (const size_t c : chosen) {
                    const double cosine = std::fabs(dot(column[c], column[j])) / std::sqrt(dot(column[c], column[c])) / norm;
                    if (cosine > best) best = cosine, like = c;
                }
                not_identified[j] = "not identified by these runs: its effect on them is that of " + report.parameters[like].name +
                                    (chosen.size() > 1 ? " and the other fitted factors" : "") + " (" +
                                    fixed_text(100 * (1 - left / norm), 1) +
                                    " % alike: these runs do not tell them apart; runs of other sequence lengths, layouts or "
                                    "micro-batches do): kept as shipped";
                continue;
            }
            for (double& x : rest) x /= left;
            basis.push_back(rest);
            chosen.push_back(j);
        }
        o.candidates.assign(P, true);
        for (size_t j = 0; j < P; ++j) o.candidates[j] = not_identified[j].empty();
    }
    report.fit = problem.fit(cases, o);
    for (size_t j = 0; j < report.parameters.size(); ++j) {
        if (report.fit.fitted[j]) continue;
        const FitParameter& p = report.parameters[j];
        const bool weak = report.fit.sensitivity[j] < o.min_sensitivity;
        report.refused.push_back(p.gpu + " " + p.name + ": " +
                                 (!not_identified[j].empty() ? not_identified[j]
                                  : weak ? "not constrained by these runs (sensitivity " + fixed_text(report.fit.sensitivity[j], 4) +
                                               " < " + fixed_text(o.min_sensitivity, 2) + "): kept as shipped"
                                         : "only " + std::to_string(cases.size()) + " runs: the " + std::to_string(cases.size()) +
                                               " most sensitive factors were fitted, this one kept as shipped"));
    }
    if (std::none_of(report.fit.fitted.begin(), report.fit.fitted.end(), [](bool f) { return f; }))
        return Error{"measurements", "these runs constrain no factor (every factor moves them less than " +
                                         fixed_text(100 * o.min_sensitivity, 0) +
                                         " % per unit, or not independently): no calibration to write; measure runs that differ in "
                                         "sequence, layout or GPU count"};
    const std::vector<double> shipped(report.parameters.size(), 1.0);
    // Leave-one-out refits: one Gauss-Newton step from the fit on every run, over the factors it
    // fitted (the usual one-step approximation; 100 runs stay well under a second).
    FitOptions loo = o;
    loo.iterations = 1;
    loo.start = report.fit.multipliers;
    loo.candidates = report.fit.fitted;
    for (size_t k = 0; k < cases.size(); ++k) {
        CalibrateCase c;
        c.index = cases[k];
        c.before = std::expm1(problem.log_error(c.index, shipped));
        c.after = std::expm1(problem.log_error(c.index, report.fit.multipliers));
        std::vector<size_t> others = cases;
        others.erase(others.begin() + static_cast<std::ptrdiff_t>(k));
        loo.max_fitted = static_cast<int64_t>(others.size());
        const FitResult without = others.empty() ? FitResult{shipped, {}, {}, 0, 0, 0} : problem.fit(others, loo);
        c.leave_one_out = std::expm1(problem.log_error(c.index, without.multipliers));
        report.cases.push_back(c);
    }
    report.mape_before = mean_abs(report.cases, &CalibrateCase::before);
    report.mape_after = mean_abs(report.cases, &CalibrateCase::after);
    report.mape_leave_one_out = mean_abs(report.cases, &CalibrateCase::leave_one_out);
    report.calibration = problem.calibration(report.fit.multipliers);
    // What it was fitted on, which every prediction that uses it states (issue 25 item 4).
    CalibrationScope scope;
    auto add = [](std::vector<std::string>& list, const std::string& item) {
        if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
    };
    for (const size_t i : cases) {
        const Config& c = measurements.cases[i].config;
        add(scope.frameworks, c.framework.name.empty() ? "none" : c.framework.name);
        add(scope.gpus, c.gpu.name);
        add(scope.precisions, c.precision.name);
    }
    scope.cases = static_cast<int64_t>(cases.size());
    for (size_t j = 0; j < report.parameters.size(); ++j)
        if (report.fit.fitted[j]) scope.factors.push_back(report.parameters[j].gpu + " " + report.parameters[j].name);
    report.calibration.fitted_on = scope;
    return report;
}

std::string calibration_json(const CalibrationSpec& calibration) {
    JsonWriter out(2);
    write_calibration(out, calibration);
    return out.take();
}

std::string calibrate_report_json(const ValidationSuite& measurements, const CalibrateReport& report) {
    JsonWriter out(2);
    out.begin_object();
    out.field("schema", "trainclock/calibrate/v1");
    out.field("runs", static_cast<int64_t>(report.cases.size()));
    out.field("mape_before", report.mape_before).field("mape_after", report.mape_after);
    out.field("mape_leave_one_out", report.mape_leave_one_out);
    // The stacks fitted (one framework per GPU): the runs the calibration is meant for.
    out.key("stacks").begin_array();
    std::set<std::string> gpus;
    for (const auto& c : report.cases) {
        const Config& config = measurements.cases[c.index].config;
        if (!gpus.insert(config.gpu.name).second) continue;
        out.begin_object().field("gpu", config.gpu.name).field("framework", config.framework.name.empty() ? "none" : config.framework.name);
        out.end_object();
    }
    out.end_array();
    out.key("factors").begin_array();
    for (size_t j = 0; j < report.parameters.size(); ++j) {
        out.begin_object();
        out.field("gpu", report.parameters[j].gpu).field("name", report.parameters[j].name);
        out.field("fitted", static_cast<bool>(report.fit.fitted[j])).field("multiplier", report.fit.multipliers[j]);
        out.field("sensitivity", report.fit.sensitivity[j]);
        out.end_object();
    }
    out.end_array();
    out.key("refused").begin_array();
    for (const auto& line : report.refused) out.value(line);
    out.end_array();
    out.key("cases").begin_array();
    for (const auto& c : report.cases) {
        out.begin_object();
        out.field("id", measurements.cases[c.index].id);
        out.field("error_before", c.before).field("error_after", c.after).field("error_leave_one_out", c.leave_one_out);
        out.end_object();
    }
    out.end_array();
    out.key("calibration");
    write_calibration(out, report.calibration);
    out.end_object();
    return out.take();
}

}  // namespace trainclock
