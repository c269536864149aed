//! With the `r2r` feature against the PyPI wheels' ROS 2 prefix
//! (`scripts/ros2_prefix.sh` sets `WG_LIBPYTHON`): libpython linked into
//! the binary, which their rcl needs (it links the messages' Python
//! typesupport) though nothing here calls it. The ros crate's build script
//! does the same for its own tests.

fn main() {
    println!("cargo::rerun-if-env-changed=WG_LIBPYTHON");
    if std::env::var_os("CARGO_FEATURE_R2R").is_none() {
        return;
    }
    if let Ok(lib) = std::env::var("WG_LIBPYTHON") {
        println!("cargo::rustc-link-arg=-Wl,--no-as-needed");
        println!("cargo::rustc-link-arg={lib}");
        println!("cargo::rustc-link-arg=-Wl,--as-needed");
    }
}
