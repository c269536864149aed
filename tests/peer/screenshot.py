#!/usr/bin/env python3
"""Looks at a workcell_guard report.html the way a person's browser does.

Usage: screenshot.py REPORT.html OUT_DIR

1. Reads the HTML and fails on any reference to something outside the file
   (src, href, xlink:href, url(...), @import other than a `#fragment` or a
   `data:` URI), and on a missing content security policy forbidding loads.
2. For each plot section (#clearance, #grants, #platen, #cycle, #views),
   has headless Chromium (Debian's `chromium`, no network: the caller runs
   it in a network namespace of its own) open `report.html#<section>`,
   which shows that section alone, and take a screenshot; then counts the
   coloured pixels (series, bars, shaded intervals, spheres, units) below
   the heading: a plot that drew nothing leaves only white, its axes and
   text, all grey.
Prints one JSON line: per section, the drawn pixels' share and the
screenshot's path; exits non-zero on the first failed expectation.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

SECTIONS = ["clearance", "grants", "platen", "cycle", "views"]
MIN_SHARE = {s: 0.003 for s in SECTIONS}


def fail(msg):
    print(f"screenshot: {msg}", file=sys.stderr)
    sys.exit(1)


def external_references(html):
    refs = []
    for m in re.finditer(r'\b(?:src|href|xlink:href|action|poster|data)\s*=\s*"([^"]*)"', html):
        v = m.group(1)
        if not (v.startswith("#") or v.startswith("data:")):
            refs.append(v)
    for m in re.finditer(r"url\(\s*['\"]?([^'\")]*)", html):
        if not (m.group(1).startswith("#") or m.group(1).startswith("data:")):
            refs.append(m.group(1))
    refs += re.findall(r"@import[^;]*", html)
    refs += re.findall(r"<(?:script|iframe|link|img|object|embed)\b[^>]*>", html, flags=re.I)
    return refs


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        for d in os.environ.get("PATH", "").split(os.pathsep):
            p = os.path.join(d, name)
            if os.access(p, os.X_OK):
                return p
    fail("no chromium on the PATH (Debian: apt-get install chromium)")


def main():
    report, out_dir = sys.argv[1], sys.argv[2]
    from PIL import Image

    html = open(report, encoding="utf-8").read()
    refs = external_references(html)
    if refs:
        fail(f"the report refers to what is not in it: {refs[:5]}")
    if "Content-Security-Policy" not in html or "default-src 'none'" not in html:
        fail("the report has no content security policy forbidding loads")
    exe = chromium()
    profile = tempfile.mkdtemp(prefix="wg_chromium_")
    result = {}
    for s in SECTIONS:
        if f'id="{s}"' not in html:
            fail(f"no section #{s}")
        png = os.path.join(out_dir, f"report_{s}.png")
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               f"--user-data-dir={profile}", "--window-size=1200,1400", f"--screenshot={png}",
               "file://" + os.path.abspath(report) + "#" + s]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or not os.path.exists(png):
            fail(f"chromium failed on #{s} (exit {r.returncode}): {r.stderr[-800:]}")
        img = Image.open(png).convert("RGB")
        w, h = img.size
        # Below the heading and its note: the plot's area.
        body = img.crop((0, 110, w, h))
        raw = body.tobytes()
        n = len(raw) // 3
        # Drawn = coloured: series, bars, shaded intervals, spheres, units.
        # Axes, grid lines and text are grey and do not count.
        drawn = sum(1 for i in range(0, len(raw), 3)
                    if max(raw[i], raw[i + 1], raw[i + 2]) - min(raw[i], raw[i + 1], raw[i + 2]) > 30)
        share = drawn / float(n)
        result[s] = {"drawn_share": round(share, 4), "png": png}
        if share < MIN_SHARE[s]:
            fail(f"#{s} looks blank: {share:.4f} of its area drawn (at least {MIN_SHARE[s]})")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
