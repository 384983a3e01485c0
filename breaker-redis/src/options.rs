//! [`RedisStoreOptions`]: the store's timings and key names.

use std::time::Duration;

/// How a [`RedisStore`](crate::RedisStore) talks to Redis. Every field has a default; the
/// configuration keys are `breaker.redis.*` (see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisStoreOptions {
    /// Prefix of every key (`breaker.redis.key-prefix`, default `breaker:`). A breaker named
    /// `payments` uses `breaker:{payments}` (a hash) and `breaker:{payments}:trials` (its
    /// HALF_OPEN leases); the braces keep both in one Redis Cluster slot.
    pub key_prefix: String,
    /// How often each process reads the shared state of its breakers
    /// (`breaker.redis.refresh-interval`, default 100 ms, at least 1 ms). A transition made
    /// by another process is applied here within `refresh_interval + timeout`.
    pub refresh_interval: Duration,
    /// The longest one step of a Redis request may take: connecting, sending, receiving
    /// (`breaker.redis.timeout`, default 50 ms, at least 1 ms). A HALF_OPEN trial call
    /// waits at most `3 x timeout` for its lease, queueing included (no other call waits on
    /// Redis); a change Redis runs more than `3 x timeout` after it was sent is refused;
    /// after a failure no call waits on Redis until it is back.
    pub timeout: Duration,
    /// How long a HALF_OPEN trial slot stays taken without an outcome
    /// (`breaker.redis.trial-lease`, default 10 s, at least 1 ms): a process killed during
    /// a trial call frees its slot after this. A trial call running longer than this loses
    /// its slot, and its outcome is not counted for everyone.
    pub trial_lease: Duration,
    /// How long a breaker's keys live after their last change (`breaker.redis.key-ttl`,
    /// default 24 h, at least 1 s); an OPEN state lives at least until its deadline plus
    /// this. A breaker no process uses any more leaves nothing behind.
    pub key_ttl: Duration,
    /// How long a process counts as using a fleet-wide rate limiter or bulkhead after its
    /// last word to Redis (`breaker.redis.replica-lease`, default 10 s, at least 1 ms;
    /// every process renews it each `refresh_interval`). A killed process's bulkhead
    /// permits come back, and it stops counting in the local shares, within this.
    pub replica_lease: Duration,
}

impl Default for RedisStoreOptions {
    fn default() -> Self {
        RedisStoreOptions {
            key_prefix: "breaker:".into(),
            refresh_interval: Duration::from_millis(100),
            timeout: Duration::from_millis(50),
            trial_lease: Duration::from_secs(10),
            key_ttl: Duration::from_secs(24 * 3600),
            replica_lease: Duration::from_secs(10),
        }
    }
}

impl RedisStoreOptions {
    /// The bound on how long after another process's transition this process applies it:
    /// `refresh_interval + timeout` (150 ms by default).
    pub fn propagation_bound(&self) -> Duration {
        self.refresh_interval + self.timeout
    }

    pub(crate) fn sanitized(mut self) -> Self {
        let at_least = |d: Duration, min: Duration| d.max(min);
        self.refresh_interval = at_least(self.refresh_interval, Duration::from_millis(1));
        self.timeout = at_least(self.timeout, Duration::from_millis(1));
        self.trial_lease = at_least(self.trial_lease, Duration::from_millis(1));
        self.key_ttl = at_least(self.key_ttl, Duration::from_secs(1));
        self.replica_lease = at_least(self.replica_lease, Duration::from_millis(1));
        self
    }
}
