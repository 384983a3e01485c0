//! What an event says about an error: Resilience4j's `getLastThrowable()` (Retry) and
//! `getThrowable()` (TimeLimiter), for errors that have no class hierarchy.

use std::any::Any;
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

    /// Describes an error known only as `Any` (what [`CircuitBreaker::call`] sees): its type
    /// name, and its message when its type shows one without a `Display` bound: a boxed or
    /// shared `dyn Error` (tower's `BoxError`), `std::io::Error`, `String`, `&str`, or one
    /// of the library's errors around one of these. Other types get an empty message (the
    /// event then reads as the class alone, as Java's `Throwable.toString()` does for a
    /// `null` message). Built only when someone subscribes to the events.
    ///
    /// [`CircuitBreaker::call`]: crate::CircuitBreaker::call
    pub fn of_any<E: Any>(error: &E) -> Self {
        Throwable {
            class: std::any::type_name::<E>(),
            message: message_of(error)
                .map(Arc::from)
                .unwrap_or_else(|| "".into()),
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

/// The message of a value whose type shows it without a `Display` bound.
fn message_of(value: &dyn Any) -> Option<String> {
    if let Some(e) = crate::error_chain::dyn_error(value) {
        return Some(e.to_string());
    }
    if let Some(e) = value.downcast_ref::<std::io::Error>() {
        return Some(e.to_string());
    }
    if let Some(s) = value.downcast_ref::<String>() {
        return Some(s.clone());
    }
    value.downcast_ref::<&'static str>().map(|s| s.to_string())
}

/// Java's `Throwable.toString()` for an event's optional error: `<class>: <message>`, the
/// class alone for an empty message, `error` when the event has no error.
pub(crate) struct ThrowableText<'a>(pub(crate) &'a Option<Throwable>);

impl fmt::Display for ThrowableText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("error"),
            Some(t) if t.message.is_empty() => f.write_str(t.class),
            Some(t) => write!(f, "{}: {}", t.class, t.message),
        }
    }
}
