#!/usr/bin/env python3
"""Checks the glibc and libstdc++ floor of what tunedb puts into other
people's processes (docs/symbol-floor.md).

The drop-in (libtunedb_preload.so, libtunedb_preload_core.so) and the client
library (libtunedb.so) run inside programs we did not build, on the host's
glibc and libstdc++ (make_bundle.sh leaves both out). Each of them, and each
non-system library they load, names the symbol versions it needs
(GLIBC_2.34, GLIBCXX_3.4.29, ...) in its .gnu.version_r section. The highest
of each family is the oldest glibc and libstdc++ a host may have.

This compares those highest versions with the floor committed in
deploy/symbol_floor.json and fails (exit 1) when a change raises one, naming
the library and the version; a lower floor is reported, so the file can be
lowered with it (--write).

Usage: check_symbol_floor.py [--json] [--write] [--floor FILE] LIB...
  LIB      the libraries to check; the non-system libraries each one loads
           (ldd) are checked with it, as make_bundle.sh would carry them
  --json   print what was found as JSON
  --write  write what was found as the new floor
"""
import argparse
import json
import os
import re
import subprocess
import sys

# The families whose highest version is the floor, as the dynamic linker
# checks them: glibc's and the GNU C++ runtime's.
FAMILIES = ("GLIBC", "GLIBCXX", "CXXABI", "GCC")
# What make_bundle.sh does not carry (the host's are used); the libraries a
# host brings are not ours to check, but what ours need of them is.
SYSTEM = re.compile(
    r"^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|"
    r"librt\.so|libresolv\.so|libutil\.so|libstdc\+\+\.so|libgcc_s\.so|"
    r"libz\.so|libssl\.so|libcrypto\.so|libsystemd\.so|libcudnn|libcuda\.so|"
    r"libnvidia|libnvrtc|libcublas)")
VERSION = re.compile(r"\b(GLIBCXX|GLIBC|CXXABI|GCC)_([0-9]+(?:\.[0-9]+)*)\b")


def version_key(text):
    return tuple(int(p) for p in text.split("."))


def needed_versions(path):
    """Family -> the versions `path` needs (its .gnu.version_r)."""
    out = subprocess.run(["readelf", "-V", "--wide", path], check=True,
                         capture_output=True, text=True).stdout
    needs = {}
    section = out.split(".gnu.version_r", 1)
    if len(section) < 2:
        return needs
    for family, version in VERSION.findall(section[1]):
        needs.setdefault(family, set()).add(version)
    return needs


def closure(libs):
    """`libs` and the non-system libraries they load, by ldd."""
    found = {os.path.realpath(p): p for p in libs}
    for lib in libs:
        out = subprocess.run(["ldd", lib], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>" and parts[2] != "not":
                if not SYSTEM.match(parts[0]):
                    found.setdefault(os.path.realpath(parts[2]), parts[2])
    return sorted(found)


def highest(paths):
    """Family -> (highest version, a library that needs it)."""
    top = {}
    for path in paths:
        for family, versions in needed_versions(path).items():
            v = max(versions, key=version_key)
            if family not in top or version_key(v) > version_key(top[family][0]):
                top[family] = (v, path)
    return top


def compare(top, floor):
    """(violations, lowered): the families above the floor, and below it."""
    raised, lowered = [], []
    for family in FAMILIES:
        if family not in top:
            continue
        version, lib = top[family]
        allowed = floor.get(family)
        if allowed is None or version_key(version) > version_key(allowed):
            raised.append(f"{os.path.basename(lib)} needs {family}_{version}, "
                          f"above the floor {family}_{allowed}")
        elif version_key(version) < version_key(allowed):
            lowered.append(f"{family}_{version} (floor {family}_{allowed})")
    return raised, lowered


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("libs", nargs="+")
    parser.add_argument("--floor", default=os.path.join(
        here, "..", "deploy", "symbol_floor.json"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    for lib in args.libs:
        if not os.path.isfile(lib):
            print(f"check_symbol_floor: no such library: {lib}",
                  file=sys.stderr)
            return 2
    paths = closure(args.libs)
    top = highest(paths)
    found = {f: top[f][0] for f in FAMILIES if f in top}
    if args.json:
        print(json.dumps({"libraries": len(paths), "highest": found,
                          "needed_by": {f: os.path.basename(top[f][1])
                                        for f in found}}, indent=2))
    if args.write:
        with open(args.floor, "w") as f:
            json.dump(found, f, indent=2)
            f.write("\n")
        return 0
    with open(args.floor) as f:
        floor = json.load(f)
    raised, lowered = compare(top, floor)
    for line in raised:
        print(f"check_symbol_floor: {line}")
    if lowered:
        print("check_symbol_floor: below the floor now (lower "
              "deploy/symbol_floor.json with --write): " + ", ".join(lowered))
    if not raised:
        print(f"check_symbol_floor: {len(paths)} libraries within the floor "
              + " ".join(f"{f}_{v}" for f, v in sorted(found.items())))
    return 1 if raised else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
