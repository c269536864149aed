//! Third-party parsers that panic on some malformed files (found by
//! fuzzing: `mesh-loader` reaches a `todo!()` on some COLLADA inputs) are
//! called through [`contain`], which turns their panic into an error.
//!
//! A node's panic hook treats any panic as the end of the node (it sends
//! every stop true). While [`active`] is true on the panicking thread, the
//! panic is one of these, contained and reported as a refused file: the
//! hook lets it pass.

use std::cell::Cell;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f`; a panic in it becomes `Err` with its message.
pub fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    DEPTH.with(|d| d.set(d.get() + 1));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    r.map_err(|p| {
        p.downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("(no message)")
            .to_string()
    })
}

/// Whether this thread is inside [`contain`].
pub fn active() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_and_the_depth_returns_to_zero() {
        assert_eq!(contain(|| 3), Ok(3));
        let r: Result<(), String> = contain(|| {
            assert!(active());
            panic!("parser gave up")
        });
        assert_eq!(r, Err("parser gave up".to_string()));
        assert!(!active());
    }
}
