//! Errors and warnings. Every error names the file, line and column, the full key, the bad
//! value and what is allowed.

use std::fmt;

use crate::origin::Origin;

/// A failure that stops loading altogether: an unreadable file, malformed YAML or
/// `.properties`, or a file beyond the [`crate::Limits`] budget.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{path}: cannot read file: {message}")]
    Io {
        /// The path as given.
        path: String,
        /// The operating-system error.
        message: String,
    },
    /// The file is not valid YAML / `.properties` (or not UTF-8).
    #[error("{origin}: syntax error: {message}")]
    Syntax {
        /// Where the parser stopped.
        origin: Origin,
        /// The parser's message.
        message: String,
    },
    /// A config location or import Spring Boot would refuse: a non-optional
    /// `spring.config.import` or `SPRING_CONFIG_LOCATION` entry that names nothing, or a chain of
    /// imports deeper than 32 files (a budget; a file imported again is read once, as in Spring).
    #[error("{at}: {message}")]
    Location {
        /// Where it is named: `file:line:column` of the import, or the environment variable.
        at: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The file exceeds a budget (size, nesting, node count, alias expansion).
    #[error("{origin}: rejected, too large or too deeply nested: {message}")]
    Budget {
        /// Where the budget was exceeded.
        origin: Origin,
        /// Which budget.
        message: String,
    },
}

/// An invalid circuit-breaker setting or an instance Resilience4j refuses to build.
///
/// [`ConfigError::message`] is the exact text Spring Boot / Resilience4j would report
/// (e.g. `failureRateThreshold must be between 1 and 100.` or
/// `Configuration with name 'shared' does not exist`); `Display` adds the position, key,
/// value and what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConfigError {
    /// Where the offending value (or key) is written, when known.
    pub origin: Option<Origin>,
    /// The full key, e.g. `resilience4j.circuitbreaker.instances.a.failureRateThreshold`.
    pub key: String,
    /// The offending value as written, when there is one.
    pub value: Option<String>,
    /// Spring's / Resilience4j's message.
    pub message: String,
    /// What would be accepted.
    pub allowed: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = &self.origin {
            write!(f, "{o}: ")?;
        }
        write!(f, "{}", self.key)?;
        if let Some(v) = &self.value {
            write!(f, " = '{v}'")?;
        }
        write!(f, ": {}", self.message)?;
        if !self.allowed.is_empty() {
            write!(f, " (allowed: {})", self.allowed)?;
        }
        Ok(())
    }
}

/// Something suspicious that Spring would accept silently: an unknown key in a
/// circuit-breaker block, a Resilience4j 1.x key, a duplicate key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Where the key is written.
    pub origin: Option<Origin>,
    /// The full key.
    pub key: String,
    /// What is wrong, e.g. `did you mean slidingWindowSize? (Spring binds nothing for it)`.
    /// `Display` prints it after the key, so it does not repeat the key.
    pub message: String,
}

impl Warning {
    /// Creates a warning.
    pub fn new(origin: Option<Origin>, key: String, message: String) -> Self {
        Warning {
            origin,
            key,
            message,
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = &self.origin {
            write!(f, "{o}: ")?;
        }
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}
