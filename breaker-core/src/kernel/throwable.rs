//! What an event says about an error: Resilience4j's `getLastThrowable()` (Retry) and
//! `getThrowable()` (TimeLimiter), for errors that have no class hierarchy.

use std::fmt;
use std::sync::Arc;

/// An error as an event reports it: a class name and a message.
///
/// For an application error, the class is its Rust type name (`std::any::type_name`) and the
/// message its `Display` text. For an error the library raises itself it is Resilience4j's
/// simple class name (`MaxRetriesExceededException`, `MaxRetriesExceeded`,
/// `IllegalStateException`, ...) and Resilience4j's message, so an event reads as it does in
/// Java. Built only when someone subscribes to the events.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Throwable {
    class: &'static str,
    message: Arc<str>,
}

impl Throwable {
    /// Describes an application error: its type name and its `Display` text.
    pub fn of<E: fmt::Display>(error: &E) -> Self {
        Throwable {
            class: std::any::type_name::<E>(),
            message: error.to_string().into(),
        }
    }

    /// An error with an explicit class name, e.g. one of the library's own.
    pub fn new(class: &'static str, message: impl Into<Arc<str>>) -> Self {
        Throwable {
            class,
            message: message.into(),
        }
    }

    /// The Rust type name of an application error, or Resilience4j's simple class name of
    /// the library's own.
    pub fn class(&self) -> &'static str {
        self.class
    }

    /// The error's message (`Display` text).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Throwable {
    /// The message, as the error's own `Display` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
