//! With the `r2r` feature against a sourced ROS 2 prefix: whether that
//! prefix holds `workcell_guard_msgs` and `std_srvs` (then r2r generates
//! their types and the transport serves its four services typed: cfg
//! `wg_msgs_typed`), and libpython linked in when the prefix's rcl needs
//! it (`WG_LIBPYTHON`, set by `scripts/ros2_prefix.sh`: the PyPI wheels'
//! rcl links the messages' Python typesupport).
//!
//! With r2r's `doc-only` bindings (no ROS), run without a prefix sourced:
//! those bindings hold neither package whatever the prefix says.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(wg_msgs_typed)");
    println!("cargo::rerun-if-env-changed=AMENT_PREFIX_PATH");
    println!("cargo::rerun-if-env-changed=IDL_PACKAGE_FILTER");
    println!("cargo::rerun-if-env-changed=WG_LIBPYTHON");
    if std::env::var_os("CARGO_FEATURE_R2R").is_none() {
        return;
    }
    let prefixes = std::env::var("AMENT_PREFIX_PATH").unwrap_or_default();
    let filtered_out =
        std::env::var("IDL_PACKAGE_FILTER").is_ok_and(|f| !f.split(';').any(|p| p.trim() == "workcell_guard_msgs"));
    let has = |pkg: &str| prefixes.split(':').any(|p| !p.is_empty() && Path::new(p).join("share").join(pkg).is_dir());
    if has("workcell_guard_msgs/srv") && has("std_srvs/srv") && !filtered_out {
        println!("cargo::rustc-cfg=wg_msgs_typed");
    }
    link_libpython();
}

/// libpython into this package's tests (the root package's build script
/// does the same for the binary: link arguments do not pass to dependents),
/// kept though nothing here calls it: rcl's libraries do.
fn link_libpython() {
    if let Ok(lib) = std::env::var("WG_LIBPYTHON") {
        println!("cargo::rustc-link-arg=-Wl,--no-as-needed");
        println!("cargo::rustc-link-arg={lib}");
        println!("cargo::rustc-link-arg=-Wl,--as-needed");
    }
}
