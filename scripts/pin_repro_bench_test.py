#!/usr/bin/env python3
"""pin_repro_bench.py summarize on made-up runs whose hash counts are known."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pin_repro_bench  # noqa: E402


def run(label, out, grad, every, first_s):
  return {"label": label, "out_sha": out, "first_conv_grad_sha": grad,
          "conv_grads_sha": every, "first_iter_s": first_s}


class SummarizeTest(unittest.TestCase):

  def test_groups_count_distinct_hashes_and_take_median_first_iterations(self):
    runs = [run("r50-fp16, no tunedb #1", "a", "g", "e", 9.0),
            run("r50-fp16, no tunedb #2", "b", "g", "f", 11.0),
            run("r50-fp16, no tunedb #3", "a", "h", "e", 10.0),
            run("r50-fp16, pin followed #1", "c", "k", "m", 1.0),
            run("r50-fp16, pin followed #2", "c", "k", "m", 2.0)]
    with tempfile.TemporaryDirectory() as d:
      path = os.path.join(d, "runs.jsonl")
      with open(path, "w") as f:
        f.write("not json\n" + "\n".join(json.dumps(r) for r in runs) + "\n")
      md = os.path.join(d, "pins.md")
      with contextlib.redirect_stdout(io.StringIO()):
        pin_repro_bench.summarize(path, md)
      table = open(md).read()
    self.assertIn("| r50-fp16, no tunedb | 3 | 2 | 2 | 2 | 10.0 s |", table)
    self.assertIn("| r50-fp16, pin followed | 2 | 1 | 1 | 1 | 1.5 s |", table)


if __name__ == "__main__":
  unittest.main()
