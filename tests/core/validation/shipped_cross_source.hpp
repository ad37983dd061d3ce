// trainclock tests: the cross-source refit of the shipped validation suite, computed once per test
// process. Its two users (the accuracy gate in test_fit.cpp, the interval table in test_intervals.cpp)
// are tagged [cross-source] and run in one ctest process (tests/CMakeLists.txt): the refit is the
// costliest step of the suite (10 fits over 2,000 cases), the more so under ASan and in WebAssembly.
#pragma once

#include "trainclock/validation/fit.hpp"
#include "trainclock/validation/validation.hpp"

namespace trainclock::fixtures {

inline const ValidationSuite& shipped_suite() {
    static const ValidationSuite suite = load_validation_suite();
    return suite;
}

inline const CrossSourceReport& shipped_cross_source() {
    static const CrossSourceReport report = run_cross_source(shipped_suite());
    return report;
}

}  // namespace trainclock::fixtures
