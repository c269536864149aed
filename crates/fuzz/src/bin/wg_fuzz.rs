//! The libFuzzer driver: runs the target `WG_FUZZ_TARGET` names (see
//! `scripts/fuzz.py`, which builds this with coverage instrumentation).
#![no_main]

use std::sync::OnceLock;

fn chosen() -> workcell_guard_fuzz::Target {
    static T: OnceLock<workcell_guard_fuzz::Target> = OnceLock::new();
    *T.get_or_init(|| {
        let name = std::env::var("WG_FUZZ_TARGET").unwrap_or_default();
        match workcell_guard_fuzz::target(&name) {
            Some(t) => t,
            None => {
                let names: Vec<&str> = workcell_guard_fuzz::TARGETS.iter().map(|(n, _)| *n).collect();
                eprintln!("WG_FUZZ_TARGET must name a target: {}", names.join(", "));
                std::process::exit(2);
            }
        }
    })
}

/// With `WG_FUZZ_WRITE_SEEDS=dir`, writes the chosen target's seeds there
/// (the corpus a run starts from) and exits.
fn write_seeds() {
    let Some(dir) = std::env::var_os("WG_FUZZ_WRITE_SEEDS") else { return };
    let name = std::env::var("WG_FUZZ_TARGET").unwrap_or_default();
    let dir = std::path::PathBuf::from(dir);
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        for (i, s) in workcell_guard_fuzz::seeds(&name).iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{i:02}")), s)?;
        }
        Ok(())
    });
    match written {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("cannot write seeds to {}: {e}", dir.display());
            std::process::exit(1);
        }
    }
}

libfuzzer_sys::fuzz_target!(
    init: {
        write_seeds();
        // libFuzzer's hook aborts on every panic; a third-party parser's
        // panic that the library contains (and refuses as a bad file, as
        // the node's hook lets pass) is no crash.
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !workcell_guard_description::contain::active() {
                abort(info);
            }
        }));
        let _ = chosen();
    },
    |data: &[u8]| chosen()(data)
);
