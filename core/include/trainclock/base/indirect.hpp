// trainclock: Indirect<T>, a T owned on the heap that copies as a value (like C++26 std::indirect), for
// classes that keep their data in a source file (search.hpp): T need be complete only where an
// Indirect is made (make), so the owning class declares no copy, move or destructor of its own.
#pragma once

#include <utility>

namespace trainclock {

template <class T>
class Indirect {
public:
    template <class... Args>
    static Indirect make(Args&&... args) {
        // Captured here, where T is complete, so copies and destruction elsewhere need not see T.
        static constexpr Ops kOps{[](const T& value) { return new T(value); }, [](T* value) { delete value; }};
        return Indirect(new T(std::forward<Args>(args)...), &kOps);
    }

    Indirect(const Indirect& other) : value_(other.value_ ? other.ops_->copy(*other.value_) : nullptr), ops_(other.ops_) {}
    Indirect(Indirect&& other) noexcept : value_(std::exchange(other.value_, nullptr)), ops_(other.ops_) {}
    Indirect& operator=(Indirect other) noexcept {  // copy or move, then swap
        std::swap(value_, other.value_);
        std::swap(ops_, other.ops_);
        return *this;
    }
    ~Indirect() {
        if (value_) ops_->destroy(value_);
    }

    T& operator*() { return *value_; }
    const T& operator*() const { return *value_; }
    T* operator->() { return value_; }
    const T* operator->() const { return value_; }

private:
    struct Ops {
        T* (*copy)(const T&);
        void (*destroy)(T*);
    };
    Indirect(T* value, const Ops* ops) : value_(value), ops_(ops) {}

    T* value_;        // null only once moved from
    const Ops* ops_;  // copy and delete of the complete T
};

}  // namespace trainclock
