#!/usr/bin/env python3
"""Fails when a Rust source file is over 700 lines or a function over 120,
or a function outside tests over 80 without a reason.

Run from the repository root (CI does). A function is measured from its
`fn` line to the closing brace at the same indentation; rustfmt's layout
makes that reliable for this tree. A function outside tests (files under
`tests/` or `benches/`, `tests.rs`, and what follows a `#[cfg(test)]`) of
more than 80 lines needs a one-line reason in a comment just above it,
among its doc comment and attributes: `// long: <why it stays whole>`.
"""
import pathlib
import re
import sys

MAX_FILE, MAX_FN, MAX_FN_REASONED = 700, 120, 80
FN = re.compile(r"^(\s*)(pub(\([a-z]+\))? )?(async )?(const )?(unsafe )?fn (\w+)")


def functions(lines):
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if m:
            indent, name = len(m.group(1)), m.group(7)
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";", "}")):
                j += 1
            if lines[j].rstrip().endswith("{}") or re.search(r"\{.*\}\s*$", lines[j]):
                i = j + 1
                continue
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                close = " " * indent + "}"
                while k < len(lines) and not (lines[k].startswith(close) and not lines[k][indent:indent + 1].isspace() and lines[k][:indent].strip() == ""):
                    k += 1
                yield name, i + 1, k - i + 1
        i += 1


def reasoned(lines, fn_line):
    """Whether a `// long:` comment sits among the lines just above line
    `fn_line` (0-based) that are comments or attributes."""
    k = fn_line - 1
    while k >= 0 and lines[k].strip().startswith(("//", "#[", "#![")):
        if lines[k].strip().startswith("// long:") and len(lines[k].strip()) > len("// long:") + 3:
            return True
        k -= 1
    return False


def test_code(path, lines):
    """The index of the first line of test code in a file (len when none)."""
    if "tests" in path.parts or "benches" in path.parts or path.name == "tests.rs":
        return 0
    for i, l in enumerate(lines):
        if l.startswith("#[cfg(test)]"):
            return i
    return len(lines)


def main():
    bad = []
    files = [p for p in pathlib.Path(".").rglob("*.rs") if "target" not in p.parts]
    for p in sorted(files):
        lines = p.read_text().split("\n")
        if len(lines) - 1 > MAX_FILE:
            bad.append(f"{p}: {len(lines) - 1} lines (limit {MAX_FILE})")
        tests_from = test_code(p, lines)
        for name, line, n in functions(lines):
            if n > MAX_FN:
                bad.append(f"{p}:{line}: fn {name} is {n} lines (limit {MAX_FN})")
            elif n > MAX_FN_REASONED and line - 1 < tests_from and not reasoned(lines, line - 1):
                bad.append(f"{p}:{line}: fn {name} is {n} lines (over {MAX_FN_REASONED}: split it, or say why "
                           f"it stays whole in a `// long: ...` comment above it)")
    for b in bad:
        print(b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
