// Tests for trainclock/base/status.hpp: Error formatting and the Result value-or-error.
#include <catch2/catch.hpp>

#include <memory>

#include "trainclock/base/status.hpp"

using namespace trainclock;

TEST_CASE("Error::to_string joins key and message, or gives the message alone") {
    CHECK(Error{"parallel.tp", "3 does not divide model.heads = 64"}.to_string() == "parallel.tp: 3 does not divide model.heads = 64");
    CHECK(Error{"", "empty input: expected a JSON object"}.to_string() == "empty input: expected a JSON object");
}

TEST_CASE("an Error is one line: control characters of echoed input are escaped") {
    // Found by tests/fuzz (issue 12): a JSON key "a\nb" or a link value with raw bytes split the error line.
    const Error error{"calibration.gemm_efficie\ncy", std::string("unknown value 'gpt2\x01\t\r\x7f'")};
    CHECK(error.key == "calibration.gemm_efficie\\ncy");
    CHECK(error.message == "unknown value 'gpt2\\x01\\t\\r\\x7f'");
    CHECK(Error{"model", "caf\xc3\xa9 and UTF-8 stay"}.message == "caf\xc3\xa9 and UTF-8 stay");
}

TEST_CASE("a long key keeps its start and its end, where the key at fault is named") {
    const std::string path = "/home/user/" + std::string(200, 'd') + "/torchtitan.toml";
    const Error error{path + ": parallelism.data_parallel_shard_degree", "-1 needs the GPU count"};
    CHECK(error.key.size() <= Error::kEchoChars + 3);
    CHECK(error.key.rfind("/home/user/", 0) == 0);
    CHECK(error.key.find("...") != std::string::npos);
    const std::string named = "torchtitan.toml: parallelism.data_parallel_shard_degree";
    CHECK(error.key.substr(error.key.size() - named.size()) == named);
    // A cut never splits a UTF-8 character.
    const Error accented{std::string(150, 'a') + "\xc3\xa9" + std::string(69, 'b'), "x"};
    CHECK(accented.key.find("\xc3\xa9") != std::string::npos);
    CHECK(Error{"parallel.tp", "x"}.key == "parallel.tp");
}

TEST_CASE("Result holds a value or an error") {
    Result<int> good(42);
    REQUIRE(good.ok());
    CHECK(static_cast<bool>(good));
    CHECK(good.value() == 42);

    Result<int> bad(Error{"gpu", "missing"});
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().key == "gpu");
    CHECK(bad.error().message == "missing");
}

TEST_CASE("Result moves its value out") {
    Result<std::unique_ptr<int>> owned(std::make_unique<int>(7));
    std::unique_ptr<int> taken = std::move(owned).value();
    REQUIRE(taken);
    CHECK(*taken == 7);
}
