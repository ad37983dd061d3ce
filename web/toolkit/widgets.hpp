// trainclock GUI: drawing helpers shared by the panels (formatting with units, searchable combo,
// stacked bars, inline errors). Plain Dear ImGui, no platform code.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "imgui.h"

namespace trainclock::gui {

// One selectable preset: its id and its human name.
struct Choice {
    std::string id;            // "h100-sxm"
    std::string display_name;  // "NVIDIA H100 SXM5 80GB"
};

}  // namespace trainclock::gui

namespace trainclock::gui::widgets {

// Numbers with units, 3 significant digits.
std::string duration(double seconds);            // "850 ms", "12.4 s", "3.2 h", "41.7 days"
std::string si(double value, const char* unit);  // "1.23 M tok/s" style (k, M, G, T, P)
std::string money(double usd);                   // "$1.23 M"
std::string gib(double gib);                     // "61.2 GiB"

// Screen rectangles (x0, y0, x1, y1) of the items of an open combo, by the item's id or name.
using ItemRects = std::vector<std::pair<std::string, ImVec4>>;
ImVec4 item_rect();  // of the last item

// A combo box over presets with a filter field (type to search by id or display name). Returns
// true when the selection changed; `current` is the selected id (may be "custom"). While open, the
// shown items' rectangles go to `items` (when given).
bool search_combo(const char* label, std::string& current, const std::vector<Choice>& choices, ItemRects* items = nullptr);
// The search combos drawn since the last call: [{"label", "preview", "preview_w", "room_w"}] (tests: no preview is cut).
std::string take_combos();

// Integer slider, logarithmic when the range spans more than two decades. Ctrl+click types a value.
// The value is drawn in the half of the box away from the handle (never under it).
bool slider_int(const char* label, int64_t& value, int64_t min, int64_t max);
// The sliders drawn since the last call: [{"label", "frame": [x0, x1], "text": [x0, x1], "handle": x}].
std::string take_sliders();

// Red wrapped text under the last control: an error.
void error_text(const std::string& message);
// Wrapped text in a neutral ink (slate blue, not red): a note or an assumption stated, not an error.
void info_text(const std::string& message);
// The messages drawn by error_text and info_text since the last call, as a JSON array of
// {"kind": "error" | "note", "color": "#rrggbb", "text"} (the page publishes it for tests).
std::string take_messages();

// One part of a stacked bar.
struct Segment {
    const char* label;
    double value;
    ImU32 color;
};

// A horizontal stacked bar over the full available width: `scale` is the value of the full width;
// `marker` (when > 0) draws a vertical line at that value (e.g. the memory capacity). Hovering a
// part shows its label and value (formatted by `format`).
void stacked_bar(const char* id, const std::vector<Segment>& segments, double scale, double marker, std::string (*format)(double),
                 float height = 26.0f);

// Legend of a stacked bar: a colour square, label, value and share of `total`, in columns.
void legend(const std::vector<Segment>& segments, double total, std::string (*format)(double));

// A panel title (wrapped, accent colour, a rule under it) and a wrapped grey note.
void heading(const char* title);
void note(const char* text);

// Palette (colour-blind aware, Tableau 10), by index.
ImU32 palette(int index);

}  // namespace trainclock::gui::widgets
