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


def run(label, out, grad, every, first_s, graphed_ms=None):
  r = {"label": label, "out_sha": out, "first_conv_grad_sha": grad,
       "conv_grads_sha": every, "first_iter_s": first_s}
  if graphed_ms is not None:
    r["graphed"] = {"median_ms": graphed_ms}
  return r


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
    self.assertIn("| r50-fp16, no tunedb | 3 | 2 | 2 | 2 | 10.0 s | – |", table)
    self.assertIn("| r50-fp16, pin followed | 2 | 1 | 1 | 1 | 1.5 s | – |", table)

  def test_timed_pinned_rows_are_compared_with_the_warm_rows_of_their_model(self):
    runs = [run("r50-fp16, timed warm #1", "a", "g", "e", 1.0, 100.0),
            run("r50-fp16, timed warm #2", "a", "g", "e", 1.2, 102.0),
            run("r50-fp16, timed warm #3", "a", "g", "e", 1.1, 104.0),
            run("r50-fp16, timed pinned #1", "a", "g", "e", 0.9, 101.0),
            run("r50-fp16, timed pinned #2", "a", "g", "e", 1.0, 103.0),
            run("r50-fp16, timed pinned #3", "a", "g", "e", 1.1, 99.0),
            run("r50-fp16, timed pinned #4", "a", "g", "e", 1.1)]
    with tempfile.TemporaryDirectory() as d:
      path = os.path.join(d, "runs.jsonl")
      with open(path, "w") as f:
        f.write("\n".join(json.dumps(r) for r in runs) + "\n")
      md = os.path.join(d, "pins.md")
      out = io.StringIO()
      with contextlib.redirect_stdout(out):
        pin_repro_bench.summarize(path, md)
      table = open(md).read()
    self.assertIn("| r50-fp16, timed warm | 3 | 1 | 1 | 1 | 1.1 s | 102.000 |", table)
    self.assertIn("r50-fp16, timed pinned vs warm: GPU time 0.9902×, "
                  "first iteration 0.955×", table)
    pinned = [r for r in json.loads(out.getvalue()) if r["group"] == "r50-fp16, timed pinned"]
    self.assertEqual(pinned[0]["graphed_each_ms"], [101.0, 103.0, 99.0])


def pin_with(*answers):
  return {"format": "tunedb-pin", "version": 1, "answers": list(answers)}


def answer(problem, algo, det=False, source="tuned", knobs=""):
  return {"problem": problem, "det": det, "launch": "direct", "notes": 0, "ws": None,
          "algo": algo, "knobs": knobs, "source": source}


class AgreeTest(unittest.TestCase):

  def agree(self, *pins):
    with tempfile.TemporaryDirectory() as d:
      paths = []
      for i, pin in enumerate(pins):
        paths.append(os.path.join(d, "rank%d.pin" % i))
        with open(paths[-1], "w") as f:
          json.dump(pin, f)
      return pin_repro_bench.agree(paths)

  def test_ranks_with_the_same_answers_agree_on_every_slot(self):
    pin = pin_with(answer("op=fwd a", 1), answer("op=fwd a", 2, det=True),
                   answer("op=bwd_data a", 5, source="none"))
    got = self.agree(pin, pin, pin)
    self.assertEqual(got["slots"], 3)
    self.assertEqual(got["slots_answered_differently"], 0)
    self.assertEqual(got["slots_missing_in_some_pins"], 0)
    self.assertEqual(got["answer_sources"], {"tuned": 6, "none": 3})

  def test_a_rank_answered_otherwise_for_one_slot_is_counted_once(self):
    first = pin_with(answer("op=fwd a", 1, source="none"), answer("op=fwd b", 3))
    later = pin_with(answer("op=fwd a", 7), answer("op=fwd b", 3))
    got = self.agree(first, later, later)
    self.assertEqual(got["slots_answered_differently"], 1)
    self.assertEqual(got["differing"], [["op=fwd a", False, "direct", 0, None]])

  def test_a_graph_answer_is_its_configs_in_order(self):
    one = pin_with(answer("g", 1, knobs="2=1"), answer("g", 2))
    swapped = pin_with(answer("g", 2), answer("g", 1, knobs="2=1"))
    self.assertEqual(self.agree(one, swapped)["slots_answered_differently"], 1)

  def test_a_slot_only_some_ranks_reached_is_reported(self):
    got = self.agree(pin_with(answer("a", 1), answer("b", 2)), pin_with(answer("a", 1)))
    self.assertEqual(got["slots_missing_in_some_pins"], 1)
    self.assertEqual(got["slots_answered_differently"], 0)


if __name__ == "__main__":
  unittest.main()
