// Process-wide test facilities: locating the cryptography_vectors package and
// tallying how many known-answer vectors ran, printed per set as each test
// ends and in total when the test program exits.
#ifndef WARPCRYPT_TESTS_UNIT_SUPPORT_TEST_ENVIRONMENT_H
#define WARPCRYPT_TESTS_UNIT_SUPPORT_TEST_ENVIRONMENT_H

#include <cstddef>
#include <filesystem>
#include <string>

namespace wctest {

// Sets *dir from WARPCRYPT_VECTORS_DIR (the `cryptography_vectors` package
// directory). When it is unset or not a directory, marks the running test
// skipped, or failed if WARPCRYPT_REQUIRE_VECTORS=1. Call it last in a
// fixture's SetUp, so a skip or failure stops the test body from running.
void locate_vectors_dir(std::filesystem::path *dir);

// Prints "<set>: <count> vectors" now, records it as a test property, and
// adds it to the total printed at exit.
void report_vectors_run(const std::string &set, size_t count);

}  // namespace wctest

#endif
