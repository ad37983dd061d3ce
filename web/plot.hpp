// trainclock GUI: the plot frame shared by the scaling, search and plan plots: a rectangle with x and
// y scales (linear or log), tick marks with labels in the axis's unit on both axes, a title that
// names the scales, an x-axis title, and a description of the axes for page scripts and tests.
#pragma once

#include <string>
#include <vector>

#include "imgui.h"

namespace trainclock::gui {

// One axis: its range, scale, the format of a tick label (with its unit) and its title.
struct Axis {
    double lo = 0, hi = 1;
    bool log = false;
    std::string (*format)(double) = nullptr;
    std::string title;  // "GPUs", "run time"
};

// A rectangle with x and y ranges (log or linear) mapping data to screen.
struct Frame {
    ImVec2 min, max;  // plot area on screen (inside the axis labels)
    double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
    bool log_x = false, log_y = false;

    float sx(double x) const;
    float sy(double y) const;
};

// Tick values of an axis: powers of ten (then 1-2-5 steps) on a log scale, 1-2-5 steps on a linear
// one; at least 3 within [lo, hi] when the range allows.
std::vector<double> axis_ticks(const Axis& axis);

// Reserves the plot's space (an invisible button, so it is hoverable and clickable), draws the
// background, the grid with its tick labels on both axes, the title (with the y axis's title and
// scale) and the x axis's title; appends the axes' description ({"title", "x": {"title", "log",
// "ticks"}, "y": {...}}) under `key` to `published` (a JSON object's members). `x_ticks` overrides
// the x tick values (the GPU counts of the scaling plots).
Frame plot_frame(const char* id, const std::string& title, float width, float height, const Axis& x, const Axis& y, const std::string& key,
                 std::string& published, const std::vector<double>* x_ticks = nullptr);

}  // namespace trainclock::gui
