#!/usr/bin/env python3
"""Checks that every room includes only rooms below it (docs/architecture.md).

Each source room may include project headers from the rooms listed for it
below, and its own; anything else (a room above it, or a new room nobody
placed) is a violation, printed as FILE:LINE: ROOM includes OTHER. Exit 0 if
none, 1 otherwise. Usage: check_layering.py [REPO_ROOT]
"""
import os
import re
import sys

# The public API (tunedb/...) may be included from anywhere.
PUBLIC = "tunedb"
# Room -> the rooms it may include, lowest first. Order of the house:
# include/tunedb <- common <- proto, store, cudnn <- server/finder <-
# server/search <- server/worker <- server/tuning <- server/service; client
# and tuner on top of the lower rooms; preload (the drop-in) on the client
# and the cudnn layer.
ALLOWED = {
    "include/tunedb": [],
    "common": [],
    "proto": ["common"],
    "store": ["common", "store/sql"],
    "store/sql": ["common"],
    "store/fleet": ["common", "store"],
    "cudnn": ["common"],
    "server/finder": ["common"],
    "server/search": ["common", "cudnn", "server/finder"],
    "server/worker": ["common", "proto", "cudnn", "server/finder",
                      "server/search"],
    "server/tuning": ["common", "store", "store/fleet", "server/finder"],
    "server/service": ["common", "proto", "store", "store/fleet",
                       "server/finder",
                       "server/worker", "server/tuning"],
    "client": ["common", "proto", "store", "cudnn"],
    "preload": ["common", "cudnn"],
    "tuner": ["common", "proto", "store/fleet"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(path):
    """The longest room that `path` (relative to the root) lies in."""
    best = None
    for room in ALLOWED:
        if path.startswith(room + "/") and (best is None or len(room) > len(best)):
            best = room
    return best


def included_room(header):
    """The room of an included header, or None for a third-party one."""
    for room in sorted(ALLOWED, key=len, reverse=True):
        if header.startswith(room + "/"):
            return room
    top = header.split("/", 1)[0]
    if top in ("server", "bench", "tests", "examples") and "/" in header:
        return os.path.dirname(header)  # a project folder nobody placed
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    violations = 0
    for room in ALLOWED:
        for dirpath, _, files in os.walk(os.path.join(root, room)):
            for name in files:
                if not name.endswith((".h", ".cc", ".c")):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                if room_of(rel) != room:
                    continue  # belongs to a deeper room, checked there
                with open(full, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        header = m.group(1)
                        if header.startswith(PUBLIC + "/"):
                            continue
                        other = included_room(header)
                        if other is None or other == room:
                            continue
                        if other not in ALLOWED[room]:
                            print(f"{rel}:{number}: {room} includes {header} "
                                  f"({other} is not below {room})")
                            violations += 1
    if violations:
        print(f"{violations} include(s) against the one-way layering")
        return 1
    print("layering: every room includes only rooms below it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
