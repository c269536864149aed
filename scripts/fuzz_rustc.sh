#!/bin/sh
# RUSTC_WORKSPACE_WRAPPER for `scripts/fuzz.py --quick`: cargo runs it as
# `fuzz_rustc.sh rustc ARGS...` for this workspace's crates only; it adds
# the coverage flags (WG_FUZZ_RUSTFLAGS) to their compilations, not to
# cargo's probes of the compiler nor to the workspace's build scripts
# (they run on the host and must not link libFuzzer), so the
# dependencies stay as the tests built them.
case " $* " in
  *" --crate-name ___ "*|*" -vV "*|*" --crate-name build_script_"*) exec "$@" ;;
esac
# shellcheck disable=SC2086 # the flags are words to split
exec "$@" $WG_FUZZ_RUSTFLAGS
