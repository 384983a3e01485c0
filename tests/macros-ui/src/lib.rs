//! Nothing here: the package exists for its trybuild suite (`tests/ui.rs`), whose cases build
//! against only this package's small set of dependencies.
