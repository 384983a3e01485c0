//! Tells the UI test the target triple, which trybuild builds the cases for (`--target`):
//! its second build of the failing cases must use the same target directory layout.

fn main() {
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    println!("cargo:rustc-env=UI_TARGET={target}");
}
