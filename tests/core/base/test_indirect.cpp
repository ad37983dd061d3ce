// Tests for trainclock/base/indirect.hpp: an Indirect copies its value, moves its pointer and deletes
// the value exactly once (counted by a probe type).
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "trainclock/base/indirect.hpp"

using namespace trainclock;

namespace {

struct Probe {
    static int alive;
    std::vector<int> values;
    explicit Probe(std::vector<int> v) : values(std::move(v)) { ++alive; }
    Probe(const Probe& other) : values(other.values) { ++alive; }
    ~Probe() { --alive; }
};
int Probe::alive = 0;

}  // namespace

TEST_CASE("an Indirect copy owns its own value") {
    {
        Indirect<Probe> a = Indirect<Probe>::make(std::vector<int>{1, 2});
        Indirect<Probe> b = a;
        CHECK(Probe::alive == 2);
        b->values.push_back(3);
        CHECK(a->values == std::vector<int>{1, 2});
        CHECK((*b).values == std::vector<int>{1, 2, 3});
        a = b;  // copy-assign replaces a's value: still two alive
        CHECK(Probe::alive == 2);
        CHECK(a->values == std::vector<int>{1, 2, 3});
        CHECK(&*a != &*b);
    }
    CHECK(Probe::alive == 0);
}

TEST_CASE("moving an Indirect moves the pointer, not the value") {
    {
        Indirect<Probe> a = Indirect<Probe>::make(std::vector<int>{7});
        const Probe* held = &*a;
        Indirect<Probe> b = std::move(a);
        CHECK(&*b == held);
        CHECK(Probe::alive == 1);
        Indirect<Probe> c = Indirect<Probe>::make(std::vector<int>{8});
        c = std::move(b);  // c's old value is deleted
        CHECK(&*c == held);
        CHECK(Probe::alive == 1);
        std::vector<Indirect<Probe>> many(3, c);  // what host/search_threads.hpp does with SearchState
        CHECK(Probe::alive == 4);
        CHECK(many[2]->values == std::vector<int>{7});
    }
    CHECK(Probe::alive == 0);
}
