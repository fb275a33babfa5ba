#!/usr/bin/env python3
"""model_table.py on made-up rows whose verdicts are known."""

import os
import sys
import tempfile
import json
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import model_table  # noqa: E402


def row(model, label, bench, first, gpu, err, tensors=None, **extra):
    r = {"model_name": model, "dtype": "fp16", "label": label, "benchmark": bench,
         "first_iter_s": first, "graphed": {"median_ms": gpu},
         "grad64_rel_l2": err, "grad64_tensors": tensors or {}, "steady_ms": 1.0}
    r.update(extra)
    return r


# MobileNetV3: warm 1.2 s and 1.4 s (<= 1.5), off 1.4 / 5.6 = 0.25 (<= 0.5),
# GPU 10.01 / 10.0 (within the noise) and 9.9 / 10.0, error 0.012 against
# PyTorch's 0.01 and 0.008 (<= max(0.02, 0.015)).
# ShuffleNetV2: warm off 1.6 s (> 1.5), GPU 10.1 / 10.0 (a loss), error 0.5
# against 0.01 (a wrong gradient: "b" at 50x PyTorch's own error on it).
ROWS = [
    row("mobilenet_v3_large", "no tunedb", False, 5.6, 10.0, 0.008, {"a": 0.01}),
    row("mobilenet_v3_large", "no tunedb", True, 25.0, 10.0, 0.01, {"a": 0.02}),
    row("mobilenet_v3_large", "tunedb cold", False, 5.0, None, None, search_s=12.5, searches=90),
    row("mobilenet_v3_large", "tunedb warm", True, 1.2, 10.01, 0.012, {"a": 0.03}),
    row("mobilenet_v3_large", "tunedb warm", False, 1.4, 9.9, 0.011, {"a": 0.01}),
    row("shufflenet_v2_x1_0", "no tunedb", False, 4.4, 10.0, 0.01, {"a": 0.01, "b": 0.01}),
    row("shufflenet_v2_x1_0", "no tunedb", True, 11.0, 10.0, 0.01, {"a": 0.01, "b": 0.005}),
    row("shufflenet_v2_x1_0", "tunedb warm", True, 1.2, 10.0, 0.01, {"a": 0.01, "b": 0.01}),
    row("shufflenet_v2_x1_0", "tunedb warm", False, 1.6, 10.1, 0.5, {"a": 0.01, "b": 0.5}),
]


class ModelTableTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        path = os.path.join(self.dir, "runs.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(json.dumps(r) for r in ROWS) + "\n")
        self.combos, self.text = model_table.summarize(path, self.dir)
        self.by_model = {c["model"]: c for c in self.combos}

    def test_a_model_within_every_target_passes_each(self):
        c = self.by_model["mobilenet_v3_large"]
        self.assertTrue(c["first_ok"])
        self.assertAlmostEqual(c["warm_off_vs_own_off"], 0.25)
        self.assertTrue(c["half_of_off_ok"])
        self.assertAlmostEqual(c["gpu_on_ratio"], 1.001)
        self.assertTrue(c["gpu_ok"])
        self.assertAlmostEqual(c["err_tolerance"], 0.02)
        self.assertTrue(c["err_ok"])
        self.assertEqual((c["search_s"], c["searches"]), (12.5, 90))

    def test_a_slow_start_a_gpu_loss_and_a_wrong_gradient_are_each_failed(self):
        c = self.by_model["shufflenet_v2_x1_0"]
        self.assertFalse(c["first_ok"])
        self.assertIsNone(c["half_of_off_ok"])  # not a model with that target
        self.assertAlmostEqual(c["gpu_off_ratio"], 1.01)
        self.assertFalse(c["gpu_ok"])
        self.assertFalse(c["err_ok"])
        self.assertEqual(c["worst_tensor"][:2], ["b", 50.0])

    def test_the_tables_are_written_with_one_row_per_model(self):
        with open(os.path.join(self.dir, "table.md")) as f:
            text = f.read()
        self.assertEqual(text, self.text)
        self.assertEqual(text.count("| shufflenet_v2_x1_0 | fp16 |"), 3)
        self.assertIn("**no**", text)
        with open(os.path.join(self.dir, "table.json")) as f:
            self.assertEqual(len(json.load(f)), 2)


if __name__ == "__main__":
    unittest.main()
