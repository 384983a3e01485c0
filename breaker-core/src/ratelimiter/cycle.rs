//! The `AtomicRateLimiter` cycle arithmetic, exactly, as pure functions of a state and a
//! time; and the cell that swaps the state with one compare-and-swap.
//!
//! The state is `(activeCycle, activePermissions)` plus the version of the config it was
//! computed with, 128 bits in all, swapped as one value (`portable-atomic`'s `AtomicU128`:
//! `cmpxchg16b` on x86-64, `casp`/`ldxp` on AArch64), so the hot path is one load, a few
//! integer operations and one CAS, and allocates nothing. Carrying the config version in the
//! CAS makes a limit change and a concurrent acquire linearise as in Java, where the config
//! is part of the swapped state object.

/// `(activeCycle, activePermissions, config version)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CycleState {
    /// The cycle the permissions were last refreshed in (`now / limitRefreshPeriod`,
    /// counted from the limiter's creation).
    pub(crate) cycle: i64,
    /// Permissions left in that cycle; negative when permits of later cycles are reserved.
    pub(crate) permissions: i32,
    /// The version of the [`Params`] this state belongs to.
    pub(crate) version: u32,
}

impl CycleState {
    #[inline]
    pub(crate) fn pack(self) -> u128 {
        ((self.cycle as u64 as u128) << 64)
            | ((self.permissions as u32 as u128) << 32)
            | self.version as u128
    }
    #[inline]
    pub(crate) fn unpack(v: u128) -> Self {
        CycleState {
            cycle: (v >> 64) as u64 as i64,
            permissions: (v >> 32) as u32 as i32,
            version: v as u32,
        }
    }
}

/// The config values the arithmetic reads, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Params {
    pub(crate) version: u32,
    /// `limitRefreshPeriod`, >= 1 ns.
    pub(crate) period: i64,
    /// `limitForPeriod`, >= 1.
    pub(crate) limit: i64,
    /// `timeoutDuration`, >= 0 ns.
    pub(crate) timeout: i64,
}

/// The state refreshed to the cycle of `now` (ns since creation): Java's refresh step,
/// `min(permissions + elapsedCycles * limitForPeriod, limitForPeriod)`, only when the cycle
/// changed (so a stored count above a lowered limit survives until the next cycle).
#[inline]
pub(crate) fn refreshed(s: CycleState, p: &Params, now: i64) -> (i64, i64) {
    // Most calls fall in the stored cycle: a multiplication tells, no division.
    let start = s.cycle.saturating_mul(p.period);
    let c = if now >= start && now - start < p.period {
        s.cycle
    } else {
        now / p.period
    };
    if c == s.cycle {
        (c, i64::from(s.permissions))
    } else {
        let elapsed = c.saturating_sub(s.cycle);
        let grown = i64::from(s.permissions).saturating_add(elapsed.saturating_mul(p.limit));
        (c, grown.min(p.limit))
    }
}

/// Java's `calculateNextState(permits, timeoutInNanos, state)`: refresh, compute the wait
/// for `permits`, and reserve them if `timeout >= wait`. Returns the next state, the wait
/// in ns, and whether the permits were reserved.
#[inline]
pub(crate) fn next_state(
    s: CycleState,
    p: &Params,
    now: i64,
    permits: i64,
    timeout: i64,
) -> (CycleState, i64, bool) {
    let (cycle, mut available) = refreshed(s, p, now);
    let wait = if available >= permits {
        0
    } else {
        let to_next_cycle = (cycle + 1).saturating_mul(p.period) - now;
        // Java's int ceilDiv (x + y - 1) / y, truncating towards zero: 0 for x <= 0.
        let x = permits - available - p.limit;
        let full_cycles = (x + p.limit - 1) / p.limit;
        full_cycles
            .saturating_mul(p.period)
            .saturating_add(to_next_cycle)
    };
    let reserved = timeout >= wait;
    if reserved {
        available -= permits;
    }
    (
        CycleState {
            cycle,
            permissions: clamp_i32(available),
            version: s.version,
        },
        wait,
        reserved,
    )
}

#[inline]
fn clamp_i32(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// `drainPermissions()` as Resilience4j computes it: `calculateNextState` asked for the
/// *stored* permissions (as of the last update) at the current time. Returns the next state
/// and the `DRAINED` event's count, `min(stored, 0)`.
pub(crate) fn drain_exact(s: CycleState, p: &Params, now: i64) -> (CycleState, i64) {
    let stored = i64::from(s.permissions);
    let (next, _, _) = next_state(s, p, now, stored, 0);
    (next, stored.min(0))
}

/// `drainPermissions()` as intended: refresh to the current cycle, remove every permission
/// left in it and keep reservations of later cycles. Returns the next state and the number
/// of permissions drained.
pub(crate) fn drain_fixed(s: CycleState, p: &Params, now: i64) -> (CycleState, i64) {
    let (cycle, available) = refreshed(s, p, now);
    (
        CycleState {
            cycle,
            permissions: clamp_i32(available.min(0)),
            version: s.version,
        },
        available.max(0),
    )
}

/// The lock-free cell holding the packed [`CycleState`].
#[cfg(not(loom))]
pub(crate) struct Cell(portable_atomic::AtomicU128);

#[cfg(not(loom))]
impl Cell {
    pub(crate) fn new(s: CycleState) -> Self {
        Cell(portable_atomic::AtomicU128::new(s.pack()))
    }
    #[inline]
    pub(crate) fn load(&self) -> CycleState {
        CycleState::unpack(self.0.load(std::sync::atomic::Ordering::Acquire))
    }
    /// Replaces `current` by `new` if the cell still holds `current`; else returns what it
    /// holds.
    #[inline]
    pub(crate) fn compare_exchange(
        &self,
        current: CycleState,
        new: CycleState,
    ) -> Result<(), CycleState> {
        self.0
            .compare_exchange_weak(
                current.pack(),
                new.pack(),
                std::sync::atomic::Ordering::AcqRel,
                std::sync::atomic::Ordering::Acquire,
            )
            .map(|_| ())
            .map_err(CycleState::unpack)
    }
}

/// Under loom: the same operations, each atomic, on a loom mutex, so the models explore
/// every interleaving of the limiter's load / compute / CAS loops.
#[cfg(loom)]
pub(crate) struct Cell(loom::sync::Mutex<u128>);

#[cfg(loom)]
impl Cell {
    pub(crate) fn new(s: CycleState) -> Self {
        Cell(loom::sync::Mutex::new(s.pack()))
    }
    pub(crate) fn load(&self) -> CycleState {
        CycleState::unpack(*self.0.lock().unwrap())
    }
    pub(crate) fn compare_exchange(
        &self,
        current: CycleState,
        new: CycleState,
    ) -> Result<(), CycleState> {
        let mut v = self.0.lock().unwrap();
        if *v == current.pack() {
            *v = new.pack();
            Ok(())
        } else {
            Err(CycleState::unpack(*v))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: i64 = 250_000_000;

    fn params(limit: i64, timeout: i64) -> Params {
        Params {
            version: 0,
            period: P,
            limit,
            timeout,
        }
    }

    fn fresh(limit: i32) -> CycleState {
        CycleState {
            cycle: 0,
            permissions: limit,
            version: 0,
        }
    }

    #[test]
    fn pack_round_trips_negative_values() {
        let s = CycleState {
            cycle: 123_456_789_012,
            permissions: -7,
            version: u32::MAX,
        };
        assert_eq!(CycleState::unpack(s.pack()), s);
    }

    /// Resilience4j's `reservePermissionsUpfront`: L = 3, P = 10 ms, timeout 12 ms, nine
    /// reservations at P+1 .. P+9 ns give [0, 0, 0, P-4, P-5, P-6, -1, -1, -1].
    #[test]
    fn reserve_permissions_upfront() {
        let p = Params {
            version: 0,
            period: 10_000_000,
            limit: 3,
            timeout: 12_000_000,
        };
        let mut s = fresh(3);
        let mut got = Vec::new();
        for i in 1..=9 {
            let now = p.period + i;
            let (next, wait, reserved) = next_state(s, &p, now, 1, p.timeout);
            s = next;
            got.push(if reserved { wait } else { -1 });
        }
        let q = p.period;
        assert_eq!(got, vec![0, 0, 0, q - 4, q - 5, q - 6, -1, -1, -1]);
        assert_eq!(s.permissions, -3);
    }

    #[test]
    fn idle_cycles_never_store_more_than_the_limit() {
        let p = params(3, 0);
        let (cycle, available) = refreshed(fresh(3), &p, 10 * P);
        assert_eq!((cycle, available), (10, 3));
    }

    /// The drain defects: stale permissions after a rollover, debt "drained" into credit.
    #[test]
    fn exact_drain_reproduces_resilience4j_and_fixed_drain_empties_the_cycle() {
        let p = Params {
            version: 0,
            period: 1_000_000_000,
            limit: 10,
            timeout: 0,
        };
        let used = CycleState {
            cycle: 0,
            permissions: 3,
            version: 0,
        };
        let (exact, n) = drain_exact(used, &p, 1_500_000_000);
        assert_eq!((exact.permissions, n), (7, 0));
        let (fixed, n) = drain_fixed(used, &p, 1_500_000_000);
        assert_eq!((fixed.permissions, n), (0, 10));
        let debt = CycleState {
            cycle: 0,
            permissions: -2,
            version: 0,
        };
        let (exact, n) = drain_exact(debt, &p, 100);
        assert_eq!((exact.permissions, n), (0, -2));
        let (fixed, n) = drain_fixed(debt, &p, 100);
        assert_eq!((fixed.permissions, n), (-2, 0), "reservations stay");
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::sync::loom_model as model;
    use loom::sync::Arc;
    use loom::thread;

    /// Two threads acquire one permit each from a limiter with one permit per cycle and a
    /// timeout of one cycle: whatever the interleaving of their load / compute / CAS loops,
    /// exactly one gets the permit now, the other reserves the next cycle's, and the stored
    /// permissions end at -1 (a lost update would leave 0).
    #[test]
    fn loom_cas_loops_never_lose_an_update() {
        model(|| {
            let p = Params {
                version: 0,
                period: 100,
                limit: 1,
                timeout: 100,
            };
            let cell = Arc::new(Cell::new(CycleState {
                cycle: 0,
                permissions: 1,
                version: 0,
            }));
            let acquire = |cell: Arc<Cell>| {
                move || loop {
                    let s = cell.load();
                    let (next, wait, reserved) = next_state(s, &p, 10, 1, p.timeout);
                    if cell.compare_exchange(s, next).is_ok() {
                        assert!(reserved);
                        return wait;
                    }
                }
            };
            let t1 = thread::spawn(acquire(cell.clone()));
            let t2 = thread::spawn(acquire(cell.clone()));
            let (w1, w2) = (t1.join().unwrap(), t2.join().unwrap());
            let mut waits = [w1, w2];
            waits.sort_unstable();
            assert_eq!(waits, [0, 90], "one now, one at the next cycle");
            assert_eq!(cell.load().permissions, -1);
        });
    }
}
