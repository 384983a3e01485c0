//! The six circuit-breaker states and which moves between them are legal.

use std::fmt;
use std::str::FromStr;

/// A circuit breaker's state: Resilience4j's `CircuitBreaker.State`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum State {
    /// Calls flow; outcomes are recorded and the rates evaluated after each one.
    Closed = 0,
    /// Calls are rejected until the open-state wait has passed.
    Open = 1,
    /// A limited number of trial calls (`permittedNumberOfCallsInHalfOpenState`) decide
    /// between CLOSED and OPEN.
    HalfOpen = 2,
    /// Every call is allowed and nothing is recorded. Left only by a manual transition.
    Disabled = 3,
    /// Every call is rejected. Left only by a manual transition.
    ForcedOpen = 4,
    /// Every call is allowed and recorded; rate-exceeded events are published but the state
    /// never changes by itself.
    MetricsOnly = 5,
}

impl State {
    /// All states, in Resilience4j's `getOrder()` order.
    pub const ALL: [State; 6] = [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::Disabled,
        State::ForcedOpen,
        State::MetricsOnly,
    ];

    /// Resilience4j's name of the state: `CLOSED`, `OPEN`, `HALF_OPEN`, `DISABLED`,
    /// `FORCED_OPEN` or `METRICS_ONLY`.
    pub const fn name(self) -> &'static str {
        match self {
            State::Closed => "CLOSED",
            State::Open => "OPEN",
            State::HalfOpen => "HALF_OPEN",
            State::Disabled => "DISABLED",
            State::ForcedOpen => "FORCED_OPEN",
            State::MetricsOnly => "METRICS_ONLY",
        }
    }

    /// Resilience4j's `State.getOrder()`: 0 for CLOSED up to 5 for METRICS_ONLY.
    pub const fn order(self) -> u8 {
        self as u8
    }

    /// Resilience4j's `allowPublish`: `false` in DISABLED and FORCED_OPEN, where only
    /// `STATE_TRANSITION` and `RESET` events are published.
    pub const fn allow_publish(self) -> bool {
        !matches!(self, State::Disabled | State::ForcedOpen)
    }

    pub(crate) const fn from_u8(v: u8) -> State {
        match v {
            0 => State::Closed,
            1 => State::Open,
            2 => State::HalfOpen,
            3 => State::Disabled,
            4 => State::ForcedOpen,
            _ => State::MetricsOnly,
        }
    }

    /// Whether Resilience4j's `StateTransition` table allows `self -> to`.
    ///
    /// Every pair is legal, self-transitions included, except CLOSED -> HALF_OPEN,
    /// METRICS_ONLY -> OPEN and METRICS_ONLY -> HALF_OPEN.
    pub const fn can_transition_to(self, to: State) -> bool {
        !matches!(
            (self, to),
            (State::Closed, State::HalfOpen)
                | (State::MetricsOnly, State::Open)
                | (State::MetricsOnly, State::HalfOpen)
        )
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of [`State::from_str`]: the text is not one of the six state names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownState(pub String);

impl fmt::Display for UnknownState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' is not a circuit-breaker state; expected one of CLOSED, OPEN, HALF_OPEN, DISABLED, FORCED_OPEN, METRICS_ONLY",
            self.0
        )
    }
}

impl std::error::Error for UnknownState {}

impl FromStr for State {
    type Err = UnknownState;

    /// Parses Resilience4j's state names (`HALF_OPEN`), leniently as Spring Boot does:
    /// case and any non-alphanumeric characters are ignored (`half-open`, `halfOpen`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let folded: String = s
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        State::ALL
            .into_iter()
            .find(|st| st.name().replace('_', "").to_ascii_lowercase() == folded)
            .ok_or_else(|| UnknownState(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_three_transitions_are_illegal() {
        let illegal: Vec<_> = State::ALL
            .iter()
            .flat_map(|a| State::ALL.iter().map(move |b| (*a, *b)))
            .filter(|(a, b)| !a.can_transition_to(*b))
            .collect();
        assert_eq!(
            illegal,
            vec![
                (State::Closed, State::HalfOpen),
                (State::MetricsOnly, State::Open),
                (State::MetricsOnly, State::HalfOpen)
            ]
        );
    }

    #[test]
    fn parses_leniently() {
        assert_eq!("HALF_OPEN".parse::<State>().unwrap(), State::HalfOpen);
        assert_eq!("half-open".parse::<State>().unwrap(), State::HalfOpen);
        assert_eq!("metricsOnly".parse::<State>().unwrap(), State::MetricsOnly);
        assert!("halfway".parse::<State>().is_err());
    }
}
