// trainclock GUI: drawing helpers (see widgets.hpp).
#include "widgets.hpp"

#include "imgui_internal.h"  // TempInputIsActive, FindRenderedTextEnd: the slider draws its own value

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace trainclock::gui::widgets {

namespace {

std::string printf_string(const char* format, double value, const char* unit) {
    char text[64];
    std::snprintf(text, sizeof text, format, value, unit);
    return text;
}

// Three significant digits without exponent noise: 1.23, 12.3, 123.
const char* three_digits(double value) {
    const double magnitude = std::fabs(value);
    return magnitude >= 100 ? "%.0f%s" : magnitude >= 10 ? "%.1f%s" : "%.2f%s";
}

}  // namespace

std::string duration(double seconds) {
    if (!(seconds > 0)) return "0 s";
    struct Unit {
        double seconds;
        const char* name;
    };
    static const Unit units[] = {
        {86400.0 * 365.25, " years"}, {86400.0, " days"}, {3600.0, " h"}, {60.0, " min"}, {1.0, " s"}, {1e-3, " ms"}};
    for (const Unit& unit : units)
        if (seconds >= unit.seconds) return printf_string(three_digits(seconds / unit.seconds), seconds / unit.seconds, unit.name);
    return printf_string(three_digits(seconds * 1e6), seconds * 1e6, " us");
}

std::string si(double value, const char* unit) {
    static const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
    int index = 0;
    while (std::fabs(value) >= 1000.0 && index < 5) {
        value /= 1000.0;
        ++index;
    }
    std::string suffix = std::string(index ? prefixes[index] : " ") + unit;
    return printf_string(three_digits(value), value, suffix.c_str());
}

std::string money(double usd) {
    if (!std::isfinite(usd)) return "n/a";  // no price known for the GPU (the result JSON's null)
    static const char* prefixes[] = {"", " k", " M", " B"};
    int index = 0;
    while (std::fabs(usd) >= 1000.0 && index < 3) {
        usd /= 1000.0;
        ++index;
    }
    return "$" + printf_string(three_digits(usd), usd, prefixes[index]);
}

std::string gib(double value) { return printf_string("%.1f%s", value, " GiB"); }

namespace {
std::string drawn_combos;  // {"label", "preview", "preview_w", "room_w"} of the combos drawn since take_combos
}

std::string take_combos() { return "[" + std::exchange(drawn_combos, std::string()) + "]"; }

bool search_combo(const char* label, std::string& current, const std::vector<Choice>& choices, ItemRects* items) {
    // The id and its name when both fit in the box, else the id alone (the name in a tooltip): a
    // preview is never cut.
    std::string preview = current, name;
    for (const Choice& choice : choices)
        if (choice.id == current && !choice.display_name.empty()) name = choice.display_name;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float room = ImGui::CalcItemWidth() - ImGui::GetFrameHeight() - 2.0f * style.FramePadding.x;
    if (!name.empty() && ImGui::CalcTextSize((current + "  (" + name + ")").c_str()).x <= room) preview = current + "  (" + name + ")";
    drawn_combos += std::string(drawn_combos.empty() ? "" : ", ") + "{\"label\": \"" + label + "\", \"preview\": \"" + preview +
                    "\", \"preview_w\": " + std::to_string(ImGui::CalcTextSize(preview.c_str()).x) +
                    ", \"room_w\": " + std::to_string(room) + "}";
    bool changed = false;
    const bool open = ImGui::BeginCombo(label, preview.c_str(), ImGuiComboFlags_HeightLarge);
    if (!open && !name.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", name.c_str());
    if (open) {
        static ImGuiTextFilter filter;  // case-insensitive; one combo is open at a time
        if (ImGui::IsWindowAppearing()) {
            filter.Clear();
            ImGui::SetKeyboardFocusHere();
        }
        filter.Draw("##filter", -1.0f);
        for (const Choice& choice : choices) {
            const std::string text = choice.display_name.empty() ? choice.id : choice.id + "  (" + choice.display_name + ")";
            if (!filter.PassFilter(text.c_str())) continue;
            const bool selected = choice.id == current;
            if (ImGui::Selectable(text.c_str(), selected)) {
                changed = choice.id != current;
                current = choice.id;
            }
            if (items) items->push_back({choice.id, item_rect()});
            if (selected) ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    return changed;
}

ImVec4 item_rect() {
    const ImVec2 min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
    return ImVec4(min.x, min.y, max.x, max.y);
}

namespace {
std::string drawn_sliders;  // {"label", "frame": [x0, x1], "text": [x0, x1], "handle": x} since take_sliders
}

std::string take_sliders() { return "[" + std::exchange(drawn_sliders, std::string()) + "]"; }

bool slider_int(const char* label, int64_t& value, int64_t min, int64_t max) {
    const bool log = max / std::max<int64_t>(min, 1) > 100;
    const ImGuiSliderFlags flags = ImGuiSliderFlags_AlwaysClamp | (log ? ImGuiSliderFlags_Logarithmic : ImGuiSliderFlags_None);
    // ImGui centres a slider's value, where a handle in the middle covered its first digit: the value
    // is drawn here instead, in the half of the box away from the handle (ImGui's own text is
    // transparent, except while Ctrl+click types a value). One group: the box and the label.
    ImGui::BeginGroup();
    ImGui::PushID(label);
    const ImGuiID id = ImGui::GetID("##value");
    const bool typing = ImGui::TempInputIsActive(id);
    if (!typing) ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(0, 0, 0, 0));
    const bool changed = ImGui::SliderScalar("##value", ImGuiDataType_S64, &value, &min, &max, "%lld", flags);
    if (!typing) ImGui::PopStyleColor();
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    ImGui::PopID();
    if (!typing) {
        // Where ImGui puts the handle: the value's place in [min, max] (log scale when logarithmic).
        const double v = double(std::clamp(value, min, max)), lo = double(min), hi = double(std::max(max, min + 1));
        const double t = log && lo > 0 ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
        const ImGuiStyle& style = ImGui::GetStyle();
        const float handle = a.x + style.FramePadding.x + float(t) * (b.x - a.x - 2.0f * style.FramePadding.x);
        char text[32];
        std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
        const float w = ImGui::CalcTextSize(text).x, pad = style.FramePadding.x + style.GrabMinSize;
        const float x = t < 0.5 ? b.x - pad - w : a.x + pad;
        ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
        ImGui::GetWindowDrawList()->AddText(ImVec2(x, a.y + style.FramePadding.y), ink, text);
        char json[256];
        std::snprintf(json, sizeof json, "{\"label\": \"%s\", \"frame\": [%.1f, %.1f], \"text\": [%.1f, %.1f], \"handle\": %.1f}", label,
                      a.x, b.x, x, x + w, handle);
        drawn_sliders += std::string(drawn_sliders.empty() ? "" : ", ") + json;
    }
    const char* label_end = ImGui::FindRenderedTextEnd(label);
    if (label_end != label) {
        ImGui::SameLine(0.0f, ImGui::GetStyle().ItemInnerSpacing.x);
        ImGui::TextUnformatted(label, label_end);
    }
    ImGui::EndGroup();
    return changed;
}

namespace {

std::string drawn_messages;  // {"kind", "color", "text"} of the messages drawn since take_messages

void message_text(const char* kind, ImU32 color, const std::string& message) {
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(message.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    char hex[16];
    std::snprintf(hex, sizeof hex, "#%02x%02x%02x", unsigned(color & 0xFF), unsigned((color >> 8) & 0xFF), unsigned((color >> 16) & 0xFF));
    std::string text;
    for (char c : message) {
        if (c == '"' || c == '\\') text += '\\';
        text += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
    drawn_messages += std::string(drawn_messages.empty() ? "" : ", ") + "{\"kind\": \"" + kind + "\", \"color\": \"" + hex +
                      "\", \"text\": \"" + text + "\"}";
}

}  // namespace

void error_text(const std::string& message) { message_text("error", IM_COL32(200, 30, 30, 255), message); }

void info_text(const std::string& message) { message_text("note", IM_COL32(40, 70, 110, 255), message); }

std::string take_messages() { return "[" + std::exchange(drawn_messages, std::string()) + "]"; }

void stacked_bar(const char* id, const std::vector<Segment>& segments, double scale, double marker, std::string (*format)(double),
                 float height) {
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float width = std::max(ImGui::GetContentRegionAvail().x, 50.0f);
    ImGui::InvisibleButton(id, ImVec2(width, height));
    const bool hovered = ImGui::IsItemHovered();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddRectFilled(origin, ImVec2(origin.x + width, origin.y + height), ImGui::GetColorU32(ImGuiCol_FrameBg));
    if (!(scale > 0)) return;
    double total = 0;
    for (const Segment& segment : segments) total += std::max(segment.value, 0.0);
    double at = 0;
    for (const Segment& segment : segments) {
        if (!(segment.value > 0)) continue;
        const float x0 = origin.x + float(at / scale) * width;
        at += segment.value;
        const float x1 = origin.x + float(std::min(at / scale, 1.0)) * width;
        draw->AddRectFilled(ImVec2(x0, origin.y), ImVec2(std::max(x1, x0 + 1.0f), origin.y + height), segment.color);
        if (hovered && mouse.x >= x0 && mouse.x < x1)
            ImGui::SetTooltip("%s: %s (%.1f %%)", segment.label, format(segment.value).c_str(), 100.0 * segment.value / total);
    }
    if (marker > 0) {
        const float x = origin.x + float(std::min(marker / scale, 1.0)) * width;
        draw->AddLine(ImVec2(x, origin.y - 4), ImVec2(x, origin.y + height + 4), ImGui::GetColorU32(ImGuiCol_Text), 2.0f);
    }
}

void legend(const std::vector<Segment>& segments, double total, std::string (*format)(double)) {
    std::vector<std::string> texts;
    float column_w = 0;
    const float square = ImGui::GetTextLineHeight();
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    for (const Segment& segment : segments) {
        char text[128];
        std::snprintf(text, sizeof text, "%s %s (%.0f%%)", segment.label, format(segment.value).c_str(),
                      total > 0 ? 100.0 * segment.value / total : 0.0);
        texts.emplace_back(text);
        column_w = std::max(column_w, square + gap + ImGui::CalcTextSize(text).x + 2.0f * gap);
    }
    const float left = ImGui::GetCursorPosX();
    const int columns = std::max(1, int(ImGui::GetContentRegionAvail().x / column_w));
    int shown = 0;
    for (size_t i = 0; i < segments.size(); ++i) {
        if (!(segments[i].value > 0)) continue;
        if (shown % columns != 0) ImGui::SameLine(left + float(shown % columns) * column_w);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + square, p.y + square), segments[i].color);
        ImGui::Dummy(ImVec2(square, square));
        ImGui::SameLine();
        ImGui::TextUnformatted(texts[i].c_str());
        ++shown;
    }
}

ImU32 palette(int index) {
    // Tableau 10 (Tableau's colour-blind-aware default): ten hues that stay apart, so the nine
    // precisions of one GPU are nine colours (Okabe-Ito has eight; its 0, 4 and 8 were three blues).
    static const ImU32 colors[] = {IM_COL32(78, 121, 167, 255),  IM_COL32(242, 142, 43, 255),  IM_COL32(225, 87, 89, 255),
                                   IM_COL32(118, 183, 178, 255), IM_COL32(89, 161, 79, 255),   IM_COL32(237, 201, 72, 255),
                                   IM_COL32(176, 122, 161, 255), IM_COL32(255, 157, 167, 255), IM_COL32(156, 117, 95, 255),
                                   IM_COL32(186, 176, 172, 255)};
    return colors[index % int(sizeof colors / sizeof colors[0])];
}

void heading(const char* title) {
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.0f, 0.35f, 0.6f, 1.0f));
    ImGui::TextWrapped("%s", title);  // wrapped: the page may be 390 px wide
    ImGui::PopStyleColor();
    ImGui::Separator();
}

void note(const char* text) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", text);
    ImGui::PopStyleColor();
}

}  // namespace trainclock::gui::widgets
