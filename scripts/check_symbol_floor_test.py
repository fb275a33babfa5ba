#!/usr/bin/env python3
"""Tests of check_symbol_floor.py: the comparison with the floor, and the
whole check on real libraries (argv: the libraries, as ctest passes them)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_symbol_floor as floor  # noqa: E402

LIBS = []


class CompareTest(unittest.TestCase):
    def test_a_version_above_the_floor_is_a_violation_naming_the_library(self):
        raised, lowered = floor.compare(
            {"GLIBC": ("2.34", "/x/libfoo.so")}, {"GLIBC": "2.28"})
        self.assertEqual(raised, ["libfoo.so needs GLIBC_2.34, above the "
                                  "floor GLIBC_2.28"])
        self.assertEqual(lowered, [])

    def test_versions_compare_as_numbers_not_text(self):
        raised, _ = floor.compare({"GLIBCXX": ("3.4.9", "a.so")},
                                  {"GLIBCXX": "3.4.29"})
        self.assertEqual(raised, [])
        raised, _ = floor.compare({"GLIBCXX": ("3.4.30", "a.so")},
                                  {"GLIBCXX": "3.4.29"})
        self.assertEqual(len(raised), 1)

    def test_a_family_missing_from_the_floor_is_a_violation(self):
        raised, _ = floor.compare({"CXXABI": ("1.3.11", "a.so")}, {})
        self.assertEqual(len(raised), 1)

    def test_a_lower_need_is_reported_as_lowered(self):
        raised, lowered = floor.compare({"GLIBC": ("2.17", "a.so")},
                                        {"GLIBC": "2.34"})
        self.assertEqual(raised, [])
        self.assertEqual(lowered, ["GLIBC_2.17 (floor GLIBC_2.34)"])


@unittest.skipUnless(LIBS or len(sys.argv) > 1, "no libraries given")
class RealLibrariesTest(unittest.TestCase):
    def run_check(self, floor_values):
        with tempfile.NamedTemporaryFile("w", suffix=".json",
                                         delete=False) as f:
            json.dump(floor_values, f)
        try:
            return subprocess.run(
                [sys.executable, os.path.join(HERE, "check_symbol_floor.py"),
                 "--floor", f.name] + LIBS, capture_output=True, text=True)
        finally:
            os.unlink(f.name)

    def test_the_committed_floor_holds(self):
        with open(os.path.join(HERE, "..", "deploy",
                               "symbol_floor.json")) as f:
            committed = json.load(f)
        result = self.run_check(committed)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("within the floor", result.stdout)

    def test_a_floor_below_the_libraries_fails_and_names_the_version(self):
        result = self.run_check({"GLIBC": "2.17", "GLIBCXX": "3.4.19",
                                 "CXXABI": "1.3.7", "GCC": "3.0"})
        self.assertEqual(result.returncode, 1)
        self.assertRegex(result.stdout, r"needs GLIBC_2\.\d+, above the floor "
                                        r"GLIBC_2\.17")


if __name__ == "__main__":
    LIBS.extend(sys.argv[1:])
    unittest.main(argv=sys.argv[:1])
