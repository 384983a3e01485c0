//! Budgets that keep huge or hostile files (YAML bombs, deep nesting, placeholder storms)
//! from exhausting memory, stack or time.

/// Limits applied while loading. Exceeding one is a [`crate::LoadError::Budget`] (or, for
/// placeholders, a configuration error on the property), never a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted file, in bytes (default 4 MiB).
    pub max_file_bytes: usize,
    /// Deepest YAML nesting of collections (default 32; real Spring files stay below 15).
    /// Each level costs stack while parsing (about 35 KiB in debug builds), so keep it
    /// well below what the loading thread's stack allows.
    pub max_depth: usize,
    /// Most YAML nodes per file, counting every alias expansion (default 100 000).
    pub max_nodes: usize,
    /// Most YAML documents per file (default 256).
    pub max_documents: usize,
    /// Most YAML aliases per file (default 10 000).
    pub max_aliases: usize,
    /// Most flattened properties per file (default 100 000).
    pub max_properties: usize,
    /// Deepest chain of nested `${...}` placeholders (default 32).
    pub max_placeholder_depth: usize,
    /// Longest value a placeholder may expand to, in bytes (default 64 KiB).
    pub max_placeholder_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 4 * 1024 * 1024,
            max_depth: 32,
            max_nodes: 100_000,
            max_documents: 256,
            max_aliases: 10_000,
            max_properties: 100_000,
            max_placeholder_depth: 32,
            max_placeholder_bytes: 64 * 1024,
        }
    }
}
