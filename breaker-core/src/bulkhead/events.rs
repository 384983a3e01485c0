//! Bulkhead events (Resilience4j's `BulkheadEvent` types), for both bulkhead kinds.

use std::fmt;

use crate::publisher::ModuleEvent;

/// Resilience4j's `BulkheadEvent.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BulkheadEventType {
    /// `CALL_PERMITTED`: a call got a permit (thread pool: started running).
    CallPermitted,
    /// `CALL_REJECTED`: a call was refused with [`BulkheadFullException`](super::BulkheadFullException).
    CallRejected,
    /// `CALL_FINISHED`: an admitted call ended (success, error, panic or cancellation).
    CallFinished,
}

impl BulkheadEventType {
    /// Resilience4j's name, e.g. `CALL_PERMITTED`.
    pub const fn name(self) -> &'static str {
        match self {
            BulkheadEventType::CallPermitted => "CALL_PERMITTED",
            BulkheadEventType::CallRejected => "CALL_REJECTED",
            BulkheadEventType::CallFinished => "CALL_FINISHED",
        }
    }
}

impl fmt::Display for BulkheadEventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One event of one bulkhead (semaphore or thread pool).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkheadEvent {
    /// The bulkhead's name (`getBulkheadName()`).
    pub bulkhead_name: std::sync::Arc<str>,
    /// What happened (`getEventType()`).
    pub event_type: BulkheadEventType,
    /// When, in nanoseconds since the Unix epoch, by the bulkhead's clock
    /// (`getCreationTime()`).
    pub creation_time_nanos: u64,
}

impl fmt::Display for BulkheadEvent {
    /// Resilience4j's `toString()` wording, without the timestamp.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.event_type {
            BulkheadEventType::CallPermitted => "permitted a call",
            BulkheadEventType::CallRejected => "rejected a call",
            BulkheadEventType::CallFinished => "has finished a call",
        };
        write!(f, "Bulkhead '{}' {what}.", self.bulkhead_name)
    }
}

impl ModuleEvent for BulkheadEvent {
    fn instance_name(&self) -> &str {
        &self.bulkhead_name
    }
    fn type_name(&self) -> &'static str {
        self.event_type.name()
    }
}
