// trainclock: one spelling of an enum value, the row type of every enum's table (model/spellings.hpp).
#pragma once

#include <string_view>

namespace trainclock {

template <class E>
struct EnumName {
    std::string_view name;
    E value;
};

}  // namespace trainclock
