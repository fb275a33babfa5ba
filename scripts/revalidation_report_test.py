#!/usr/bin/env python3
"""revalidation_report.py on made-up records whose verdicts are known."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import revalidation_report  # noqa: E402

DEVICE = "kv=1 gpu=G cc=9.0 sms=132 cudnn=%s cuda=13.0"


def result(algo, ms, rank=0):
    return {"algo": algo, "math_type": "tensor_op", "status": "ok",
            "launch": {"median_ms": ms}, "heuristic_rank": rank}


def record(version, n, results, search_ms, revalidated_from=0):
    r = {"key": DEVICE % version + " op=fwd n=%d in_type=f16" % n,
         "results": results, "search_ms": search_ms}
    if revalidated_from:
        r["revalidated_from_cudnn"] = revalidated_from
    return r


def write(folder, name, records):
    with open(os.path.join(folder, name), "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


class ReportTest(unittest.TestCase):
    def test_time_accuracy_and_top_k(self):
        with tempfile.TemporaryDirectory() as d:
            # Old version: algo 1 leads everywhere.
            write(d, "full-9.14.jsonl", [
                record("9.14.0", n, [result(1, 1.0), result(2, 1.5),
                                     result(3, 2.0)], 100) for n in (1, 2, 3, 4)])
            # New version's full searches: algo 1 on n=1,2; algo 2 on n=3;
            # algo 9 (new) on n=4.
            write(d, "full-9.19.jsonl", [
                record("9.19.0", 1, [result(1, 1.0), result(2, 1.5)], 100),
                record("9.19.0", 2, [result(1, 1.0), result(2, 1.01, rank=1)], 100),
                record("9.19.0", 3, [result(2, 1.0), result(1, 1.05)], 100),
                record("9.19.0", 4, [result(9, 1.0), result(1, 1.2)], 100)])
            # Revalidated: n=1,3 right; n=2 kept algo 1 where the full
            # search serves the heuristic's algo 2 (1.0 / 1.01: within 2 %);
            # n=4 kept algo 1 at 1.2x the full search's choice.
            write(d, "revalidated-9.19.jsonl", [
                record("9.19.0", 1, [result(1, 1.0)], 10, 91400),
                record("9.19.0", 2, [result(1, 1.0)], 10, 91400),
                record("9.19.0", 3, [result(2, 1.0), result(1, 1.05)], 10, 91400),
                record("9.19.0", 4, [result(1, 1.2)], 30, 0)])
            revalidation_report.main(["x", d])
            j = json.load(open(os.path.join(d, "report.json")))["9.14 -> 9.19"]
            self.assertEqual(j["keys"], 4)
            self.assertEqual(j["by_origin"], {"revalidated": 3, "full search": 1})
            self.assertAlmostEqual(j["time_ratio"], 60 / 400)
            self.assertTrue(j["time_met"])
            self.assertEqual(j["compared"], 4)
            self.assertEqual(j["within_2pct"], 3)
            self.assertFalse(j["within_met"])
            self.assertAlmostEqual(j["worst"], 1.2)
            self.assertFalse(j["worst_met"])
            # The other way: the full search's choice as the revalidation
            # timed it, where it did (n=1 and n=3).
            self.assertEqual(j["own_compared"], 2)
            self.assertEqual(j["own_within_2pct"], 2)
            # The new choice in the old top-1: n=1 (1), n=2 (heuristic's 2:
            # no), n=3 (2: no), n=4 (9: never).
            self.assertAlmostEqual(j["new_choice_in_old_top_k"]["1"], 0.25)
            self.assertAlmostEqual(j["new_choice_in_old_top_k"]["2"], 0.75)
            self.assertAlmostEqual(j["new_choice_in_old_top_k"]["5"], 0.75)
            md = open(os.path.join(d, "report.md")).read()
            self.assertIn("**missed**", md)


if __name__ == "__main__":
    unittest.main()
