# Third-party libraries. Natively they come from Debian's -dev packages; under Emscripten from the
# Debian source packages unpacked by scripts/setup-web.sh (never committed, see TOOLCHAIN notes).

if(EMSCRIPTEN)
    # simdjson's amalgamated single header, compiled into the core (fallback kernel on wasm).
    set(SIMDJSON_SINGLEHEADER_DIR "${TRAINCLOCK_THIRD_PARTY_DIR}/simdjson/singleheader")
    if(NOT EXISTS "${SIMDJSON_SINGLEHEADER_DIR}/simdjson.cpp")
        message(FATAL_ERROR "simdjson sources missing in ${SIMDJSON_SINGLEHEADER_DIR}: run scripts/setup-web.sh")
    endif()
    add_library(trainclock_simdjson STATIC "${SIMDJSON_SINGLEHEADER_DIR}/simdjson.cpp")
    target_include_directories(trainclock_simdjson SYSTEM PUBLIC "${SIMDJSON_SINGLEHEADER_DIR}")
    target_compile_options(trainclock_simdjson PRIVATE -Wno-\#pragma-messages)
    target_compile_definitions(trainclock_simdjson PUBLIC SIMDJSON_EXCEPTIONS=0)
    add_library(simdjson::simdjson ALIAS trainclock_simdjson)
else()
    find_package(simdjson REQUIRED)
endif()

if(TRAINCLOCK_BUILD_TESTS)
    # Catch2 v2 single header (Debian catch2). An INTERFACE target holding only the catch2 header
    # folder: the imported Catch2::Catch2 adds -isystem /usr/include, which breaks the wasm compile.
    find_path(CATCH2_INCLUDE_PARENT catch2/catch.hpp PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH REQUIRED)
    set(TRAINCLOCK_CATCH2_DIR "${CMAKE_BINARY_DIR}/catch2-include")
    file(MAKE_DIRECTORY "${TRAINCLOCK_CATCH2_DIR}")
    file(CREATE_LINK "${CATCH2_INCLUDE_PARENT}/catch2" "${TRAINCLOCK_CATCH2_DIR}/catch2" SYMBOLIC)
    add_library(trainclock_catch2 INTERFACE)
    target_include_directories(trainclock_catch2 SYSTEM INTERFACE "${TRAINCLOCK_CATCH2_DIR}")
endif()

# toml++ (Debian libtomlplusplus-dev), header-only with TOML_EXCEPTIONS=0: the torchtitan importer's
# TOML parser (core/src/formats/toml.cpp). Debian's pkg-config asks for its shared library; the
# headers alone are used instead, copied into the build folder so that the wasm build (which must not
# see /usr/include) finds them too, as Catch2 above.
find_path(TOMLPLUSPLUS_INCLUDE_PARENT toml++/toml.h PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH REQUIRED)
set(TRAINCLOCK_TOMLPLUSPLUS_DIR "${CMAKE_BINARY_DIR}/tomlplusplus-include")
file(COPY "${TOMLPLUSPLUS_INCLUDE_PARENT}/toml++" DESTINATION "${TRAINCLOCK_TOMLPLUSPLUS_DIR}")
add_library(trainclock_tomlplusplus INTERFACE)
target_include_directories(trainclock_tomlplusplus SYSTEM INTERFACE "${TRAINCLOCK_TOMLPLUSPLUS_DIR}")
target_compile_definitions(trainclock_tomlplusplus INTERFACE TOML_HEADER_ONLY=1 TOML_EXCEPTIONS=0 TOML_ENABLE_FORMATTERS=0)
