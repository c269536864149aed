#!/usr/bin/env python3
"""The panic policy, checked: no `unwrap`, `expect`, `panic!`,
`unreachable!`, `todo!` or `unimplemented!` in the library crates or the
node (crates/core, crates/description, crates/ros, src) outside test code,
unless the line says why it cannot fail on any input: an `// invariant:`
comment on the same line or the line above.

Test code is left out: `#[cfg(test)]` items (a module's block, or a
module file that a `#[cfg(test)] mod x;` names).

Usage: panic_policy.py [ROOT] (the repository by default).
Prints each offending place and exits 1; prints the count of justified
places and exits 0 otherwise.
"""

import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREES = ["crates/core/src", "crates/description/src", "crates/ros/src", "src"]
PANICS = re.compile(r"\.unwrap\(\)|\.expect\(|\bpanic!\(|\bunreachable!\(|\btodo!\(|\bunimplemented!\(")
CFG_TEST = re.compile(r"#\[cfg\(test\)\]")
MOD_DECL = re.compile(r"^\s*(pub(\(\w+\))?\s+)?mod\s+(\w+)\s*;")


def strip_comments_and_strings(line):
    """The code of `line` without string literals and `//` comments (so a
    word inside a message or a comment is not taken for a call)."""
    out, i, n = [], 0, len(line)
    while i < n:
        c = line[i]
        if c == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
            out.append('""')
        elif line.startswith("//", i):
            break
        else:
            out.append(c)
            i += 1
    return "".join(out)


def test_files():
    """Module files compiled only for tests: named by `#[cfg(test)] mod x;`."""
    skip = set()
    for tree in TREES:
        for d, _, files in os.walk(os.path.join(ROOT, tree)):
            for f in files:
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(d, f)
                lines = open(path, encoding="utf-8").read().split("\n")
                base = d if f in ("mod.rs", "lib.rs", "main.rs") else os.path.join(d, f[:-3])
                for k, line in enumerate(lines):
                    m = MOD_DECL.match(line)
                    if m and k > 0 and CFG_TEST.search(lines[k - 1]):
                        for cand in (os.path.join(base, m.group(3) + ".rs"), os.path.join(base, m.group(3), "mod.rs")):
                            skip.add(os.path.normpath(cand))
    return skip


def non_test_lines(lines):
    """(number, line) of the lines outside `#[cfg(test)]` blocks."""
    k, n = 0, len(lines)
    while k < n:
        if CFG_TEST.search(lines[k]) and "mod " in " ".join(lines[k:k + 3]):
            # Skip to the end of the block that opens on this or the next lines.
            depth, opened = 0, False
            while k < n:
                code = strip_comments_and_strings(lines[k])
                depth += code.count("{") - code.count("}")
                opened = opened or "{" in code
                k += 1
                if opened and depth <= 0:
                    break
                if not opened and code.rstrip().endswith(";"):
                    break
            continue
        yield k + 1, lines[k]
        k += 1


def main():
    skip = test_files()
    bad, justified = [], 0
    for tree in TREES:
        for d, _, files in os.walk(os.path.join(ROOT, tree)):
            for f in sorted(files):
                path = os.path.normpath(os.path.join(d, f))
                if not f.endswith(".rs") or path in skip:
                    continue
                lines = open(path, encoding="utf-8").read().split("\n")
                for no, line in non_test_lines(lines):
                    if not PANICS.search(strip_comments_and_strings(line)):
                        continue
                    above = lines[no - 2] if no >= 2 else ""
                    if "invariant:" in line or "invariant:" in above:
                        justified += 1
                    else:
                        bad.append(f"{os.path.relpath(path, ROOT)}:{no}: {line.strip()}")
    if bad:
        print("panics outside test code without an `// invariant:` reason:")
        print("\n".join(bad))
        sys.exit(1)
    print(f"panic policy: no unjustified panics; {justified} places say why they cannot fail")


if __name__ == "__main__":
    main()
