#!/bin/sh
# RUSTC_WORKSPACE_WRAPPER for `scripts/fuzz.py --quick`: cargo runs it as
# `fuzz_rustc.sh rustc ARGS...` for this workspace's crates only; it adds
# the coverage flags (WG_FUZZ_RUSTFLAGS) to their compilations, not to
# cargo's probes of the compiler, so the dependencies stay as the tests
# built them.
case " $* " in
  *" --crate-name ___ "*|*" -vV "*) exec "$@" ;;
esac
# shellcheck disable=SC2086 # the flags are words to split
exec "$@" $WG_FUZZ_RUSTFLAGS
