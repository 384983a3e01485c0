//! Interned breaker names: every distinct name is stored once for the life of the process,
//! so a rejection ([`crate::CallNotPermitted`]) can carry it as a `&'static str` and costs no
//! reference-count traffic.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// The process-wide `&'static str` equal to `name`, leaking one copy per **distinct** name
/// the first time it is seen. Memory is bounded by the number of distinct breaker names ever
/// created, which a registry keeps anyway; called when a breaker is created, never per call.
pub(crate) fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&interned) = names.get(name) {
        return interned;
    }
    let interned: &'static str = Box::leak(Box::<str>::from(name));
    names.insert(interned);
    interned
}

#[cfg(test)]
mod tests {
    use super::intern;

    #[test]
    fn one_copy_per_distinct_name() {
        let a = intern("names-test-a");
        let b = intern(&String::from("names-test-a"));
        assert!(std::ptr::eq(a, b));
        assert_eq!(a, "names-test-a");
        let c = intern("names-test-c");
        assert_eq!(c, "names-test-c");
        assert!(!std::ptr::eq(a, c));
    }
}
