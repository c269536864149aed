#!/usr/bin/env python3
"""Fails when a Rust source file is over 700 lines or a function over 120.

Run from the repository root (CI does). A function is measured from its
`fn` line to the closing brace at the same indentation; rustfmt's layout
makes that reliable for this tree.
"""
import pathlib
import re
import sys

MAX_FILE, MAX_FN = 700, 120
FN = re.compile(r"^(\s*)(pub(\([a-z]+\))? )?(async )?(const )?(unsafe )?fn (\w+)")


def functions(lines):
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if m:
            indent, name = len(m.group(1)), m.group(7)
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                close = " " * indent + "}"
                while k < len(lines) and not (lines[k].startswith(close) and not lines[k][indent:indent + 1].isspace() and lines[k][:indent].strip() == ""):
                    k += 1
                yield name, i + 1, k - i + 1
        i += 1


def main():
    bad = []
    files = [p for p in pathlib.Path(".").rglob("*.rs") if "target" not in p.parts]
    for p in sorted(files):
        lines = p.read_text().split("\n")
        if len(lines) - 1 > MAX_FILE:
            bad.append(f"{p}: {len(lines) - 1} lines (limit {MAX_FILE})")
        for name, line, n in functions(lines):
            if n > MAX_FN:
                bad.append(f"{p}:{line}: fn {name} is {n} lines (limit {MAX_FN})")
    for b in bad:
        print(b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
