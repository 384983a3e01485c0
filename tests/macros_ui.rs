//! Compile-time behaviour of `#[circuit_breaker]`: the forms it accepts (`tests/ui/pass`, each
//! built and run) and the misuse it rejects with a committed message (`tests/ui/fail`).
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test --test macros_ui` on the
//! toolchain pinned in `rust-toolchain.toml`, then read every one.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
