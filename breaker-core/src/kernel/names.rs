//! [`Name`]: a breaker's (bulkhead's, rate limiter's) name as a rejection carries it, freed
//! with the last copy.
//!
//! A rejection ([`crate::CallNotPermitted`]) must carry the breaker's name without costing
//! the rejection path a reference-count update (one atomic read-modify-write on a line every
//! rejecting thread shares, measured at about half the cost of a rejection). Names up to
//! [`INLINE`] bytes, which is nearly every name in practice (`paymentService`,
//! `tenant-123456`, `inventoryServiceClient`), are copied into the rejection by value;
//! longer ones are shared through an `Arc<str>`. Either way the name's memory goes away with
//! its last copy: a service that creates and removes breakers for millions of distinct names
//! keeps bounded memory.

use std::fmt;
use std::sync::Arc;

/// The longest name copied by value (bytes of UTF-8): three words less the length byte.
pub(crate) const INLINE: usize = 23;

/// A name copied by value: its length and bytes in three aligned words, copied as such.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub(crate) struct Inline {
    len: u8,
    bytes: [u8; INLINE],
}

/// A breaker's name: its bytes inline when it fits in [`INLINE`] bytes, shared otherwise.
///
/// Four aligned words in either form (the tag, then the length and bytes in three words; or
/// the tag, then an `Arc<str>`), so a rejection copies it with a few aligned moves. Each word
/// a rejection carries is a store the next locked operation has to wait for: with a 64-byte
/// name (40 bytes inline) an OPEN rejection cost 1.52x its floor in
/// `cargo bench -p breaker-bench --bench ratios` (BENCHMARKS.md).
#[derive(Clone)]
pub(crate) enum Name {
    /// A name of at most [`INLINE`] bytes.
    Inline(Inline),
    /// A longer name.
    Shared(Arc<str>),
}

impl Name {
    pub(crate) fn new(name: &Arc<str>) -> Self {
        if name.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..name.len()].copy_from_slice(name.as_bytes());
            Name::Inline(Inline {
                len: name.len() as u8,
                bytes,
            })
        } else {
            Name::Shared(name.clone())
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            Name::Shared(s) => s,
            // The bytes are a whole `str` copied at construction, so this never fails.
            Name::Inline(i) => {
                std::str::from_utf8(&i.bytes[..usize::from(i.len)]).unwrap_or_default()
            }
        }
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl std::hash::Hash for Name {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_inline_and_long_ones_shared() {
        let short: Arc<str> = "paymentService".into();
        let n = Name::new(&short);
        assert!(matches!(n, Name::Inline(_)));
        assert_eq!(n.as_str(), "paymentService");
        assert_eq!(
            Arc::strong_count(&short),
            1,
            "an inline name holds no reference"
        );

        assert_eq!(std::mem::size_of::<Name>(), 32, "four words");
        let exact: Arc<str> = format!("{}x", "é".repeat(INLINE / 2)).into();
        assert_eq!(exact.len(), INLINE);
        assert_eq!(Name::new(&exact).as_str(), &*exact);

        let long: Arc<str> = "x".repeat(INLINE + 1).into();
        let l = Name::new(&long);
        assert!(matches!(l, Name::Shared(_)));
        assert_eq!(Arc::strong_count(&long), 2);
        drop(l);
        assert_eq!(Arc::strong_count(&long), 1, "the last copy frees the name");
    }

    #[test]
    fn equality_and_formatting_follow_the_text() {
        let a = Name::new(&Arc::from("a"));
        assert_eq!(a, Name::new(&Arc::from(String::from("a"))));
        assert_ne!(a, Name::new(&Arc::from("b")));
        assert_eq!(format!("{a} {a:?}"), "a \"a\"");
    }
}
