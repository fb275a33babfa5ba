"""A made-up regret run folder for the run readers' tests: what
scripts/regret_sets.sh leaves per set (sets/NAME.progress, sets/NAME.json)."""

import json
import os


def write_run(root, problems, progress="", name="m-b8"):
  """Writes set `name` of a run under `root`: its progress lines and its
  JSON with `problems`."""
  sets = os.path.join(root, "sets")
  os.makedirs(sets, exist_ok=True)
  with open(os.path.join(sets, name + ".progress"), "w") as f:
    f.write(progress)
  with open(os.path.join(sets, name + ".json"), "w") as f:
    json.dump({"problems": problems}, f)
