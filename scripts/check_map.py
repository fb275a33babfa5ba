#!/usr/bin/env python3
"""Checks that the code docs/architecture.md names exists.

The map names code in backticks: types and functions (`TuningCore`,
`Choose`), qualified names (`Store::Get`, `v1::TuneRequest`,
`ClientOptions::miss_policy`), calls (`Choose(record, constraints)`,
`context->IsCancelled()`), fields of a type (`Foo.bar_field`) and enum
constants (`kBackground`). Each must be found in the project's sources (the
.h, .cc, .c and .proto files of the repository; comments and string
literals do not count):
  - a plain name: as a whole word in some source file;
  - A::B (and A.b): the text `A::B` somewhere, or B in the files of A (the
    .proto files of package ...A where A is a proto package's last part,
    e.g. v1::TuneRequest; else the files whose stem is A in snake_case,
    e.g. tuning_core.* for TuningCore), or, where A has no such files, in a
    file that also names A. A::B::C checks A::B and B::C.
Not code, and skipped: file names and paths (`store/store.h`), flags
(`--json`), commands and phrases (anything with a space left once a call's
arguments are dropped), ALL_CAPS names (status codes, macros, environment
variables), lower_case words (module stems, CMake targets, proto fields
named alone: they cannot be told from prose reliably) and qualified names
without a CamelCase part (`tunedb::client`, a CMake target).

Each name not found is printed as DOC:LINE: `name` ...: the line. Exit 0 if
none, 1 otherwise.

Usage: check_map.py [REPO_ROOT]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layering import blank_non_code  # noqa: E402  (one comment rule)

DOC = os.path.join("docs", "architecture.md")
SOURCE_EXTENSIONS = (".h", ".cc", ".c", ".proto")
# Folders that hold no project source (build outputs, third-party copies).
SKIPPED_DIRS = {".git", "build", "third_party", "node_modules", "__pycache__"}

# A code span: markdown pairs backticks across line breaks too.
SPAN = re.compile(r"`([^`]+)`")
# A call: the name, then its argument list (dropped).
CALL = re.compile(r"^([A-Za-z_][\w:.]*(?:->[A-Za-z_]\w*)?)\(.*\)$", re.S)
# What is left to check: identifiers joined by ::, at most one .field.
QUALIFIED = re.compile(r"^[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*(?:\.[a-z_]\w*)?$")
CAMEL = re.compile(r"^[A-Z]\w*[a-z]\w*$")  # TuningCore, Env, Choose
CONSTANT = re.compile(r"^k[A-Z]\w*$")      # kBackground
WORD = re.compile(r"[A-Za-z_]\w*")
PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)


def code_name(span):
    """The name a code span names, as its parts (["Store", "Get"]), or None
    where the span is no checkable code name."""
    text = span.strip()
    call = CALL.match(text)
    if call:
        text = call.group(1)
        if "->" in text:  # obj->Method(): the method
            text = text.split("->")[-1]
    if not QUALIFIED.match(text):
        return None  # a path, a flag, a phrase, a file name, a pattern
    head, _, field = text.partition(".")
    parts = head.split("::")
    if field:
        if not CAMEL.match(parts[-1]):
            return None  # file.ext, module.sub: not a type's field
        parts.append(field)
    if len(parts) == 1 and not call:
        name = parts[0]
        if not (CAMEL.match(name) or CONSTANT.match(name)):
            return None  # snake_case or ALL_CAPS alone
    if len(parts) > 1 and not any(CAMEL.match(p) for p in parts):
        return None  # tunedb::client: a CMake target or a namespace
    return parts


def spans(doc):
    """(line number, span text, the doc line) of every code span."""
    lines = doc.split("\n")
    for m in SPAN.finditer(doc):
        number = doc.count("\n", 0, m.start()) + 1
        yield number, m.group(1), lines[number - 1].strip()


def snake(name):
    """TuningCore -> tuning_core."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class Sources:
    """The words of the project's source files, comments and literals left
    out."""

    def __init__(self, files):
        # files: {relative path: text}
        self.words = {}  # path -> set of words
        self.texts = {}  # path -> code text
        self.packages = {}  # a proto package's last part -> its files
        for path, text in files.items():
            for package in PACKAGE.findall(text) if path.endswith(".proto") \
                    else ():
                self.packages.setdefault(package.split(".")[-1],
                                         []).append(path)
            code = blank_non_code(text)
            self.texts[path] = code
            self.words[path] = set(WORD.findall(code))
        self.all_words = set().union(*self.words.values()) if files else set()

    @classmethod
    def read(cls, root):
        files = {}
        for dirpath, dirnames, names in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS
                                 and not d.startswith("build"))
            for name in sorted(names):
                if not name.endswith(SOURCE_EXTENSIONS):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    files[os.path.relpath(path, root)] = f.read()
        return cls(files)

    def has(self, word):
        return word in self.all_words

    def has_member(self, outer, member):
        """Whether `member` is found as a member of `outer` (see the module
        comment)."""
        joined = re.compile(r"\b" + re.escape(outer) + r"\s*::\s*" +
                            re.escape(member) + r"\b")
        if any(joined.search(code) for code in self.texts.values()):
            return True
        stem = snake(outer)
        own = self.packages.get(outer) or [
            p for p in self.words
            if os.path.basename(p).split(".", 1)[0] == stem]
        if not own:
            own = [p for p, words in self.words.items() if outer in words]
        return any(member in self.words[p] for p in own)

    def exists(self, parts):
        if len(parts) == 1:
            return self.has(parts[0])
        return all(self.has_member(a, b) for a, b in zip(parts, parts[1:]))


def missing(doc, sources):
    """(line number, name, doc line) of each code name not found."""
    out = []
    for number, span, line in spans(doc):
        parts = code_name(span)
        if parts is not None and not sources.exists(parts):
            out.append((number, span, line))
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    with open(os.path.join(root, DOC), encoding="utf-8") as f:
        doc = f.read()
    gone = missing(doc, Sources.read(root))
    for number, name, line in gone:
        print(f"{DOC}:{number}: `{name}` is not in the code: {line}")
    if gone:
        print(f"{len(gone)} name(s) in {DOC} that the code does not have")
        return 1
    print(f"map: every code name in {DOC} is in the code")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
