//! Source positions: which file, line and column a key or value came from.

use std::fmt;
use std::sync::Arc;

/// A position in a configuration file, printed as `file:line:column`.
///
/// Lines and columns start at 1. A column of 0 means "unknown column" (e.g. a synthesized
/// value). A line of 0 means the value comes from no file line: an environment variable,
/// `SPRING_APPLICATION_JSON` or a command-line argument, whose `file` says which (e.g.
/// `environment RESILIENCE4J_RETRY_INSTANCES_PAYMENTS_MAXATTEMPTS`); it prints as `file` alone.
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

    /// The origin of a value that comes from outside any file (see [`Origin::line`]), e.g.
    /// `Origin::outside("argument --resilience4j.retry.instances.a.max-attempts=5")`.
    pub fn outside(label: impl Into<Arc<str>>) -> Self {
        Origin {
            file: label.into(),
            line: 0,
            column: 0,
        }
    }

    /// Whether this value comes from outside any file (environment, JSON, argument).
    pub fn is_outside(&self) -> bool {
        self.line == 0
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_outside() {
            return f.write_str(&self.file);
        }
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}
