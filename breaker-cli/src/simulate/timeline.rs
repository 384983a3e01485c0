//! The breaker's states over the run, from its transition log.

use breaker_core::State;

use super::engine::Transition;

/// The states of one run: the initial state and every transition, in time order.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The state at time 0.
    pub initial: State,
    /// Every transition, in time order.
    pub transitions: Vec<Transition>,
}

impl Timeline {
    /// The states the breaker was in during `[from_ns, to_ns)`: the state at `from_ns`, then
    /// each state entered before `to_ns`, in order.
    pub fn states_during(&self, from_ns: u64, to_ns: u64) -> Vec<State> {
        let mut out = vec![self.state_before_or_at(from_ns)];
        out.extend(
            self.transitions
                .iter()
                .filter(|t| from_ns <= t.at_ns && t.at_ns < to_ns)
                .map(|t| t.to),
        );
        out.dedup();
        out
    }

    fn state_before_or_at(&self, t_ns: u64) -> State {
        self.transitions
            .iter()
            .take_while(|t| t.at_ns < t_ns)
            .last()
            .map_or(self.initial, |t| t.to)
    }

    /// Spans of constant state `(start_ns, end_ns, state)` covering `[0, end_ns)`; spans of
    /// zero length are left out.
    pub fn bands(&self, end_ns: u64) -> Vec<(u64, u64, State)> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut state = self.initial;
        for t in self.transitions.iter().filter(|t| t.at_ns < end_ns) {
            if t.at_ns > start {
                out.push((start, t.at_ns, state));
            }
            start = t.at_ns;
            state = t.to;
        }
        if end_ns > start {
            out.push((start, end_ns, state));
        }
        out
    }

    /// The first transition into `to` at or after `t_ns`.
    pub fn first_into_after(&self, to: State, t_ns: u64) -> Option<u64> {
        self.transitions
            .iter()
            .find(|t| t.to == to && t.at_ns >= t_ns)
            .map(|t| t.at_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tl() -> Timeline {
        let t = |at_ns, from, to| Transition { at_ns, from, to };
        Timeline {
            initial: State::Closed,
            transitions: vec![
                t(10, State::Closed, State::Open),
                t(20, State::Open, State::HalfOpen),
                t(25, State::HalfOpen, State::Closed),
            ],
        }
    }

    #[test]
    fn states_and_bands() {
        let tl = tl();
        assert_eq!(
            tl.states_during(15, 30),
            vec![State::Open, State::HalfOpen, State::Closed]
        );
        assert_eq!(tl.states_during(0, 10), vec![State::Closed]);
        assert_eq!(tl.states_during(10, 11), vec![State::Closed, State::Open]);
        assert_eq!(
            tl.bands(22),
            vec![
                (0, 10, State::Closed),
                (10, 20, State::Open),
                (20, 22, State::HalfOpen)
            ]
        );
        assert_eq!(tl.first_into_after(State::Closed, 12), Some(25));
        assert_eq!(tl.first_into_after(State::Open, 11), None);
    }
}
