// trainclock GUI: the plot frame (plot.hpp).
#include "plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trainclock::gui {

namespace {

std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// 1-2-5 steps of about `count` intervals over [lo, hi].
std::vector<double> linear_ticks(double lo, double hi, int count) {
    std::vector<double> ticks;
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return ticks;
    const double raw = (hi - lo) / count, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * magnitude >= raw) {
            step = m * magnitude;
            break;
        }
    for (double v = std::ceil(lo / step) * step; v <= hi * (1 + 1e-12); v += step) ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    return ticks;
}

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

}  // namespace

float Frame::sx(double x) const {
    const double a = log_x ? std::log(x0) : x0, b = log_x ? std::log(x1) : x1, v = log_x ? std::log(x) : x;
    return min.x + float((v - a) / (b - a == 0 ? 1 : b - a)) * (max.x - min.x);
}

float Frame::sy(double y) const {
    const double a = log_y ? std::log(y0) : y0, b = log_y ? std::log(y1) : y1, v = log_y ? std::log(y) : y;
    return max.y - float((v - a) / (b - a == 0 ? 1 : b - a)) * (max.y - min.y);
}

std::vector<double> axis_ticks(const Axis& axis) {
    const double lo = axis.lo, hi = axis.hi;
    if (!axis.log || !(lo > 0)) return linear_ticks(lo, hi, 4);
    // Log: 1, 10, 100...; then 1-2-5 in each decade; a range under a decade: linear steps.
    for (const std::vector<double>& mantissas : {std::vector<double>{1}, std::vector<double>{1, 2, 5}}) {
        std::vector<double> ticks;
        for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi; decade *= 10)
            for (double m : mantissas)
                if (m * decade >= lo * (1 - 1e-12) && m * decade <= hi * (1 + 1e-12)) ticks.push_back(m * decade);
        if (ticks.size() >= 3) return ticks;
    }
    return linear_ticks(lo, hi, 4);
}

Frame plot_frame(const char* id, const std::string& title, float width, float height, const Axis& x, const Axis& y, const std::string& key,
                 std::string& published, const std::vector<double>* x_ticks) {
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton(id, ImVec2(width, height));
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float label_w = 66.0f, line = ImGui::GetTextLineHeight();
    Frame f;
    f.min = ImVec2(origin.x + label_w, origin.y + line + 4.0f);
    f.max = ImVec2(origin.x + width - 10.0f, origin.y + height - 2.0f * line - 6.0f);
    f.x0 = x.lo;
    f.x1 = x.hi;
    f.log_x = x.log;
    f.y0 = y.lo;
    f.y1 = y.hi;
    f.log_y = y.log;
    draw->AddRectFilled(f.min, f.max, ImGui::GetColorU32(ImGuiCol_FrameBg));
    const std::string heading = title + (y.log ? " (log scale)" : "");
    draw->AddText(ImVec2(origin.x, origin.y), ImGui::GetColorU32(ImGuiCol_Text), heading.c_str());
    const ImU32 grey = ImGui::GetColorU32(ImGuiCol_TextDisabled), grid = IM_COL32(255, 255, 255, 200);
    auto axis_json = [](const Axis& a, const std::vector<std::string>& labels) {
        std::string json = "{\"title\": " + quoted(a.title) + ", \"log\": " + (a.log ? "true" : "false") + ", \"range\": [" +
                           number(a.lo) + ", " + number(a.hi) + "], \"ticks\": [";
        for (size_t i = 0; i < labels.size(); ++i) json += (i ? ", " : "") + quoted(labels[i]);
        return json + "]}";
    };
    // y: grid lines and labels right-aligned left of the plot, in the axis's unit.
    std::vector<std::string> y_labels;
    for (double v : axis_ticks(y)) {
        const float sy = f.sy(v);
        const std::string label = y.format(v);
        draw->AddLine(ImVec2(f.min.x, sy), ImVec2(f.max.x, sy), grid);
        const float w = ImGui::CalcTextSize(label.c_str()).x;
        draw->AddText(ImVec2(f.min.x - w - 4.0f, sy - line / 2), grey, label.c_str());
        y_labels.push_back(label);
    }
    // x: grid lines and labels centred under the plot, every other one when they would overlap.
    const std::vector<double> xs = x_ticks ? *x_ticks : axis_ticks(x);
    std::vector<std::string> x_labels;
    float last_right = -1e9f;
    for (double v : xs) {
        const float sx = f.sx(v);
        const std::string label = x.format(v);
        const float w = ImGui::CalcTextSize(label.c_str()).x;
        draw->AddLine(ImVec2(sx, f.min.y), ImVec2(sx, f.max.y), grid);
        if (sx - w / 2 < last_right + 6.0f) continue;
        draw->AddText(ImVec2(sx - w / 2, f.max.y + 2.0f), grey, label.c_str());
        last_right = sx + w / 2;
        x_labels.push_back(label);
    }
    const std::string x_title = x.title + (x.log ? " (log scale)" : "");
    const float x_title_w = ImGui::CalcTextSize(x_title.c_str()).x;
    draw->AddText(ImVec2((f.min.x + f.max.x - x_title_w) / 2, f.max.y + line + 4.0f), grey, x_title.c_str());
    published += std::string(published.empty() ? "" : ", ") + quoted(key) + ": {\"title\": " + quoted(heading) +
                 ", \"area\": [" + number(f.min.x) + ", " + number(f.min.y) + ", " + number(f.max.x) + ", " + number(f.max.y) + "]" +
                 ", \"x\": " + axis_json(x, x_labels) + ", \"y\": " + axis_json(y, y_labels) + "}";
    return f;
}

}  // namespace trainclock::gui
