#!/usr/bin/env python3
"""Fuzzes every input the node reads (crates/fuzz: TARGETS) with libFuzzer.

Builds crates/fuzz's driver with coverage instrumentation on the stable
toolchain (libFuzzer comes with the libfuzzer-sys crate; nightly's
cargo-fuzz is not needed), then runs each target for --seconds, starting
from its seeds and the corpus earlier runs left in target/fuzz/corpus/, and
prints executions, coverage and crashes per target. An input that crashes,
hangs (--timeout) or runs out of memory is written under
target/fuzz/artifacts/<target>/; put it in crates/fuzz/regressions/<target>/
once fixed. Exits non-zero when any target found one.

    python3 scripts/fuzz.py --seconds 600                 # docs/reliability.md's figures
    python3 scripts/fuzz.py --seconds 10 --jobs 2 --quick  # what CI runs

--quick instruments this workspace's crates only (cargo's
RUSTC_WORKSPACE_WRAPPER adds the flags), in the test profile, so that the
dependencies the tests' build left in target/debug are reused: build and
smoke run in about 3.5 minutes, not 7.5. Coverage guides through our code only,
not inside the parsers we call (YAML, URDF, meshes, MCAP): enough for a
smoke run, not for the long runs whose figures docs/reliability.md gives.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_DIR = ROOT / "target" / "fuzz"
TARGETS = ["workcell_yaml", "urdf", "mesh", "sphere_file", "npy", "ros_args", "service_requests",
           "param_file", "param_update", "messages", "mcap"]
FLAGS = [
    "--cfg", "fuzzing",
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
]


def host_triple():
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return re.search(r"^host: (\S+)", out, re.M).group(1)


def build_quick():
    """The driver with only the workspace's crates instrumented, built
    beside the tests' build (see the module's text): `cargo test --no-run`
    of the driver, so that the test profile and the tests' resolution of
    features (dev-dependencies on) reuse every dependency they built. The
    driver has no main of its own (libFuzzer's), so the test harness
    cargo asks for is not made and the executable is the fuzzer."""
    wrapper = ROOT / "scripts" / "fuzz_rustc.sh"
    env = dict(os.environ, RUSTC_WORKSPACE_WRAPPER=str(wrapper), WG_FUZZ_RUSTFLAGS=" ".join(FLAGS))
    env.pop("RUSTFLAGS", None)
    cmd = ["cargo", "test", "--workspace", "--features", "workcell_guard_fuzz/libfuzzer", "--bin", "wg_fuzz",
           "--no-run", "--message-format=json-render-diagnostics"]
    out = subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "wg_fuzz" \
                and msg.get("executable"):
            return Path(msg["executable"])
    sys.exit("cargo built no wg_fuzz executable")


def build():
    """The instrumented driver. An explicit --target keeps RUSTFLAGS off
    build scripts and proc macros (they must not link libFuzzer)."""
    triple = host_triple()
    env = dict(os.environ, RUSTFLAGS=" ".join(FLAGS), CARGO_TARGET_DIR=str(TARGET_DIR / "build"))
    cmd = ["cargo", "build", "--profile", "fuzz", "-p", "workcell_guard_fuzz", "--features", "libfuzzer",
           "--bin", "wg_fuzz", "--target", triple]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    return TARGET_DIR / "build" / triple / "fuzz" / "wg_fuzz"


def stat(text, key):
    m = re.findall(rf"stat::{key}:\s+(\d+)", text)
    return int(m[-1]) if m else 0


def run(binary, name, seconds, timeout, rss_mb):
    corpus = TARGET_DIR / "corpus" / name
    seeds = TARGET_DIR / "seeds" / name
    artifacts = TARGET_DIR / "artifacts" / name
    for d in (corpus, artifacts):
        d.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(seeds, ignore_errors=True)
    env = dict(os.environ, WG_FUZZ_TARGET=name, RUST_LOG="off")
    subprocess.run([str(binary)], env=dict(env, WG_FUZZ_WRITE_SEEDS=str(seeds)), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cmd = [str(binary), f"-max_total_time={seconds}", f"-timeout={timeout}", f"-rss_limit_mb={rss_mb}",
           "-print_final_stats=1", "-max_len=65536", "-len_control=200",
           f"-artifact_prefix={artifacts}/", str(corpus), str(seeds)]
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    took = time.monotonic() - start
    log = p.stderr
    (TARGET_DIR / f"{name}.log").write_text(log)
    found = re.findall(r"Test unit written to (\S+)", log)
    cov = re.findall(r"cov: (\d+) ft: (\d+)", log)
    return {
        "target": name,
        "seconds": took,
        "execs": stat(log, "number_of_executed_units"),
        "corpus": len(list(corpus.iterdir())),
        "cov": int(cov[-1][0]) if cov else 0,
        "rss_mb": stat(log, "peak_rss_mb"),
        "crashes": len(found) or (0 if p.returncode == 0 else 1),
        "artifacts": found,
        "rc": p.returncode,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=60, help="per target")
    ap.add_argument("--jobs", type=int, default=2, help="targets fuzzed at once")
    ap.add_argument("--timeout", type=int, default=10, help="s one input may take before it counts as a hang")
    ap.add_argument("--rss-mb", type=int, default=2048, help="memory one input may take")
    ap.add_argument("--quick", action="store_true",
                    help="instrument the workspace's crates only, reusing the tests' dependencies")
    ap.add_argument("targets", nargs="*", default=TARGETS)
    a = ap.parse_args()
    unknown = set(a.targets) - set(TARGETS)
    if unknown:
        sys.exit(f"unknown targets {sorted(unknown)}; the targets are {TARGETS}")
    binary = build_quick() if a.quick else build()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(lambda n: run(binary, n, a.seconds, a.timeout, a.rss_mb), a.targets))
    print(f"{'target':<14}{'seconds':>8}{'executions':>12}{'exec/s':>8}{'coverage':>10}{'corpus':>8}{'rss MiB':>9}{'crashes':>9}")
    for r in results:
        rate = r["execs"] / max(r["seconds"], 1e-9)
        print(f"{r['target']:<14}{r['seconds']:>8.0f}{r['execs']:>12}{rate:>8.0f}{r['cov']:>10}{r['corpus']:>8}"
              f"{r['rss_mb']:>9}{r['crashes']:>9}")
        for f in r["artifacts"]:
            print(f"    {f}")
    total = sum(r["execs"] for r in results)
    crashes = sum(r["crashes"] for r in results)
    print(f"total: {total} executions, {crashes} crashes")
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
