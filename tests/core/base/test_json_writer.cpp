// Tests of core/src/base/json_writer.hpp (internal): the layout JsonWriter writes, by hand-written text.
#include <catch2/catch.hpp>

#include <vector>

#include "base/json_writer.hpp"

using namespace trainclock;

TEST_CASE("object_array writes one object per item, compact and pretty", "[json_writer]") {
    struct Row {
        const char* name;
        int count;
    };
    const std::vector<Row> rows = {{"a", 1}, {"b", 2}};
    auto write = [&](JsonWriter& out) {
        out.begin_object();
        out.object_array("rows", rows, [&](const Row& r) { out.field("name", r.name).field("count", r.count); });
        out.object_array("none", std::vector<Row>{}, [&](const Row&) {});
        out.end_object();
        return out.take();
    };
    JsonWriter compact;
    CHECK(write(compact) == R"({"rows":[{"name":"a","count":1},{"name":"b","count":2}],"none":[]})");
    JsonWriter pretty(2);
    CHECK(write(pretty) == "{\n  \"rows\": [\n    {\n      \"name\": \"a\",\n      \"count\": 1\n    },\n    {\n      \"name\": \"b\",\n"
                           "      \"count\": 2\n    }\n  ],\n  \"none\": []\n}");
}

TEST_CASE("text_or_null writes the text, or null where it is empty", "[json_writer]") {
    JsonWriter out;
    out.begin_object();
    out.text_or_null("explanation", "no layout fits \"here\"").text_or_null("none", "");
    out.end_object();
    CHECK(out.take() == R"({"explanation":"no layout fits \"here\"","none":null})");
}
