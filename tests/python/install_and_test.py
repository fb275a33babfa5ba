#!/usr/bin/python3
"""Installs python/ the way its README says (pip, no index, no build
isolation, into a virtual environment with the system's site packages) from a
copy of the sources, then runs tunedb_client_test.py with that environment's
python against tunedbd.

Usage: install_and_test.py --source REPO_ROOT --tunedbd PATH
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--source", required=True)
parser.add_argument("--tunedbd", required=True)
args = parser.parse_args()

with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    # A copy, so that the build leaves nothing in the source tree; the
    # package finds the proto at ../proto as in the repository.
    for part in ("python", "proto"):
        shutil.copytree(os.path.join(args.source, part),
                        os.path.join(tmp, "src", part),
                        ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                      "__pycache__"))
    venv = os.path.join(tmp, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                    "--without-pip", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index",
                    "--no-build-isolation", os.path.join(tmp, "src", "python")],
                   check=True)
    test = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "tunedb_client_test.py")
    env = dict(os.environ, TUNEDBD=os.path.abspath(args.tunedbd),
               TUNEDB_VENV=venv)
    env.pop("TUNEDB_ADDRESS", None)
    # Run from tmp so the source folder cannot shadow the installed package.
    sys.exit(subprocess.run([python, test, "-v"], cwd=tmp, env=env).returncode)
