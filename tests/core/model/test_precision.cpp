// Tests for trainclock/precision.hpp: dtype names and storage widths.
#include <catch2/catch.hpp>

#include "trainclock/model/precision.hpp"

using namespace trainclock;

TEST_CASE("every dtype name round-trips") {
    for (int i = 0; i < kDTypeCount; ++i) {
        const auto dtype = static_cast<DType>(i);
        const auto back = dtype_from_name(dtype_name(dtype));
        REQUIRE(back.has_value());
        CHECK(*back == dtype);
    }
    CHECK(dtype_name(DType::bf16) == "bf16");
    CHECK(dtype_name(DType::nvfp4) == "nvfp4");
}

TEST_CASE("unknown dtype names are rejected") {
    CHECK_FALSE(dtype_from_name("float32").has_value());
    CHECK_FALSE(dtype_from_name("").has_value());
    CHECK_FALSE(dtype_from_name("BF16").has_value());
}

TEST_CASE("storage widths follow the formats' bit layouts") {
    CHECK(dtype_storage_bytes(DType::fp32) == 4.0);
    CHECK(dtype_storage_bytes(DType::tf32) == 4.0);  // tf32 tensors are stored as fp32
    CHECK(dtype_storage_bytes(DType::fp16) == 2.0);
    CHECK(dtype_storage_bytes(DType::bf16) == 2.0);
    CHECK(dtype_storage_bytes(DType::fp8) == 1.0);
    // OCP MX: 8-bit elements plus one 8-bit scale per 32 elements.
    CHECK(dtype_storage_bytes(DType::mxfp8) == Approx(8.0 / 8 + 8.0 / (8 * 32)));
    // NVFP4: 4-bit elements plus one 8-bit scale per 16 elements.
    CHECK(dtype_storage_bytes(DType::nvfp4) == Approx(4.0 / 8 + 8.0 / (8 * 16)));
    // Narrower formats never take more room.
    CHECK(dtype_storage_bytes(DType::nvfp4) < dtype_storage_bytes(DType::mxfp8));
    CHECK(dtype_storage_bytes(DType::mxfp8) < dtype_storage_bytes(DType::bf16));
}
