#!/usr/bin/env python3
"""check_map.py: which code spans are code names, and how each is found."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check_map  # noqa: E402


class CodeNameTest(unittest.TestCase):
    def test_types_functions_and_constants_are_code(self):
        self.assertEqual(check_map.code_name("TuningCore"), ["TuningCore"])
        self.assertEqual(check_map.code_name("Env"), ["Env"])
        self.assertEqual(check_map.code_name("kBackground"), ["kBackground"])

    def test_qualified_names_keep_their_parts(self):
        self.assertEqual(check_map.code_name("Store::Get"), ["Store", "Get"])
        self.assertEqual(check_map.code_name("v1::TuneDb::Stub::Tune"),
                         ["v1", "TuneDb", "Stub", "Tune"])
        self.assertEqual(check_map.code_name("ClientOptions::miss_policy"),
                         ["ClientOptions", "miss_policy"])
        self.assertEqual(check_map.code_name("worker::Request"),
                         ["worker", "Request"])

    def test_a_field_of_a_type_is_a_member(self):
        self.assertEqual(check_map.code_name("TuneRequest.when_idle"),
                         ["TuneRequest", "when_idle"])

    def test_calls_drop_their_arguments_and_object(self):
        self.assertEqual(check_map.code_name("Choose(record, constraints)"),
                         ["Choose"])
        self.assertEqual(check_map.code_name("context->IsCancelled()"),
                         ["IsCancelled"])
        self.assertEqual(check_map.code_name("Bar()"), ["Bar"])
        self.assertEqual(check_map.code_name("fsync()"), ["fsync"])

    def test_files_paths_flags_phrases_and_prose_words_are_not(self):
        for span in ("store/store.h", "problem.h", "tunedb.pc.in",
                     "cmd_*.cc", "--miss-searches", "--json",
                     "tunedb import FILE", "BEGIN IMMEDIATE",
                     "INSERT ... SELECT", "unix:/run/tunedb/tunedb.sock",
                     "tuning_core", "when_idle", "inflight_",
                     "RETURN_IF_ERROR", "NOT_FOUND", "TUNEDB_ADDRESS",
                     "tunedb::client", "tunedb::tuner", "cuda*",
                     "tunedb/...", "committing N records..."):
            self.assertIsNone(check_map.code_name(span), span)


class SpansTest(unittest.TestCase):
    def test_spans_carry_their_line_and_may_break_across_lines(self):
        doc = "a `Foo` b\nc `Bar::\nBaz` d `Qux()`\n"
        got = list(check_map.spans(doc))
        self.assertEqual(got[0], (1, "Foo", "a `Foo` b"))
        self.assertEqual(got[1][0], 2)
        self.assertEqual(got[2][:2], (3, "Qux()"))
        # A name broken by a line break is a phrase: not checked.
        self.assertIsNone(check_map.code_name(got[1][1]))


class SourcesTest(unittest.TestCase):
    FILES = {
        "server/tuning/tuning_core.h":
            "class TuningCore {\n void Tune();\n // Retired()\n};\n",
        "server/tuning/tuning_core.cc":
            'void TuningCore::Tune() { Log("Quoted"); }\n',
        "client/client.cc":
            "class ClientImpl { void Miss(); };\nvoid Lookup();\n",
        "store/store.h": "class Store { class StagedImport; };\n",
        "proto/tunedb.proto":
            "package tunedb.v1;\n"
            "service TuneDb { rpc Tune(TuneRequest) returns (R); }\n"
            "message TuneRequest { bool when_idle = 1; }\n",
        # Names v1 and Stats, which is no message of package tunedb.v1.
        "client/link.cc": "struct Stats {}; v1::TuneRequest request;\n",
    }

    def setUp(self):
        self.sources = check_map.Sources(self.FILES)

    def exists(self, span):
        return self.sources.exists(check_map.code_name(span))

    def test_plain_names_are_whole_words_of_code(self):
        self.assertTrue(self.exists("TuningCore"))
        self.assertTrue(self.exists("Lookup()"))
        self.assertFalse(self.exists("Tuning"))
        # Comments and string literals are not code.
        self.assertFalse(self.exists("Retired"))
        self.assertFalse(self.exists("Quoted"))

    def test_a_member_is_looked_for_in_its_types_files_first(self):
        self.assertTrue(self.exists("TuningCore::Tune"))
        # tuning_core.* do not have Miss, though client.cc does.
        self.assertFalse(self.exists("TuningCore::Miss"))
        # No client_impl.*: the files that name ClientImpl.
        self.assertTrue(self.exists("ClientImpl::Miss"))
        self.assertFalse(self.exists("ClientImpl::DoTune"))
        self.assertTrue(self.exists("Store::StagedImport"))

    def test_proto_services_messages_and_fields(self):
        self.assertTrue(self.exists("TuneDb::Tune"))
        self.assertTrue(self.exists("TuneRequest.when_idle"))
        self.assertFalse(self.exists("TuneRequest.when_busy"))
        self.assertFalse(self.exists("TuneDb::Import"))

    def test_a_proto_packages_names_are_looked_for_in_its_proto_files(self):
        self.assertTrue(self.exists("v1::TuneRequest"))
        self.assertTrue(self.exists("v1::TuneDb::Tune"))
        # client/link.cc names v1 and Stats, but tunedb.proto defines no
        # Stats.
        self.assertFalse(self.exists("v1::Stats"))

    def test_every_link_of_a_long_name_is_checked(self):
        self.assertTrue(self.exists("TuneDb::TuneRequest::when_idle"))
        self.assertFalse(self.exists("Store::StagedImport::Gone"))

    def test_missing_reports_the_line_of_each_name_not_found(self):
        doc = ("# Map\n`TuningCore::Tune` calls `Store` and `DoTune`.\n"
               "`ReplyFrom` in `client/client.cc`, `--flag`.\n")
        self.assertEqual(
            check_map.missing(doc, self.sources),
            [(2, "DoTune", "`TuningCore::Tune` calls `Store` and `DoTune`."),
             (3, "ReplyFrom",
              "`ReplyFrom` in `client/client.cc`, `--flag`.")])


class ReadTest(unittest.TestCase):
    def test_reads_sources_of_the_tree_but_not_build_outputs(self):
        with tempfile.TemporaryDirectory() as root:
            for path, text in (("common/a.h", "struct Alpha {};"),
                               ("build/gen/b.h", "struct Beta {};"),
                               ("docs/c.md", "Gamma")):
                os.makedirs(os.path.join(root, os.path.dirname(path)),
                            exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            sources = check_map.Sources.read(root)
            self.assertTrue(sources.has("Alpha"))
            self.assertFalse(sources.has("Beta"))
            self.assertFalse(sources.has("Gamma"))


if __name__ == "__main__":
    unittest.main()
