//! Source positions: which file, line and column a key or value came from.

use std::fmt;
use std::sync::Arc;

/// A position in a configuration file, printed as `file:line:column`.
///
/// Lines and columns start at 1. A column of 0 means "unknown column" (e.g. an
/// environment variable or a synthesized value).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The file name as given to the loader (or a label such as `<string>`).
    pub file: Arc<str>,
    /// 1-based line number.
    pub line: u64,
    /// 1-based column number (character position), 0 when unknown.
    pub column: u64,
}

impl Origin {
    /// Creates an origin.
    pub fn new(file: Arc<str>, line: u64, column: u64) -> Self {
        Origin { file, line, column }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}
