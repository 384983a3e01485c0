//! [`RedisStore`]: the connection to Redis, its health, and the background refresher.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use breaker_core::bulkhead::Bulkhead;
use breaker_core::ratelimiter::RateLimiter;
use breaker_core::{CircuitBreaker, Keyed};
use redis::{Client, Connection};

use crate::fleet::{Fleet, SharedBulkhead, SharedRate};
use crate::link::Link;
use crate::options::RedisStoreOptions;
use crate::redact::{redact_url, scrub, secrets};
use crate::redis_clock::RedisClock;
use crate::scripts::{Reply, Request, Scripts};
use crate::worker::{self, Job};

/// What can go wrong setting a store up. Never carries a credential.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL is not a Redis URL (`redis://host:port/db`, `rediss://`, `redis+unix://`).
    #[error("invalid Redis URL {url}: {reason}")]
    InvalidUrl {
        /// The URL without its credentials.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// An instance has `store: redis` but `breaker.redis.url` is not set.
    #[error("store: redis needs breaker.redis.url")]
    MissingUrl,
    /// The breaker already shares its state through a store.
    #[error("circuit breaker '{name}' already has a shared state store")]
    AlreadyAttached {
        /// The breaker's name.
        name: String,
    },
    /// The rate limiter or bulkhead already shares its limit through a store (issue #29).
    #[error("{kind} '{name}' already has a shared limit")]
    LimitAlreadyAttached {
        /// `rate limiter` or `bulkhead`.
        kind: &'static str,
        /// The instance's name.
        name: String,
    },
}

/// Shares circuit breakers' state between processes through one Redis server: attach each
/// breaker with [`attach`](Self::attach). Cheap to clone (clones are the same store).
///
/// Redis being unreachable, slow or restarted never fails a call: see the crate docs for
/// the bounds. Dropping the last clone stops the background refresher; attached breakers
/// then go on with their local state.
#[derive(Clone)]
pub struct RedisStore {
    pub(crate) inner: Arc<StoreInner>,
}

pub(crate) struct StoreInner {
    client: Client,
    /// The URL without credentials, for logs.
    address: String,
    /// The URL's secrets, scrubbed from every message logged.
    secrets: Vec<String>,
    pub(crate) options: RedisStoreOptions,
    pub(crate) scripts: Scripts,
    /// The connection of [`attach`](RedisStore::attach)'s first read.
    call: Mutex<Option<Connection>>,
    /// The call path's requests (trips, trial leases and outcomes, manual transitions), run
    /// by the store's call thread on its own connection: no caller waits for a lock.
    jobs: SyncSender<Job>,
    /// Redis's clock as seen from here: when a change was decided, in Redis's terms.
    pub(crate) clock: RedisClock,
    /// The last request succeeded; while false only the refresher talks to Redis.
    up: AtomicBool,
    /// "Unreachable" was logged for the current outage.
    down_logged: AtomicBool,
    pub(crate) links: Mutex<Vec<Arc<Link>>>,
    /// Unique per process and store: the prefix of lease ids.
    pub(crate) tag: String,
    pub(crate) lease_seq: AtomicU64,
    /// The fleet-wide limits' call thread and members, started by the first one attached.
    fleet: OnceLock<Fleet>,
}

impl RedisStore {
    /// A store for the Redis server at `url` (`redis://[user:password@]host:port[/db]`).
    /// It does not wait for Redis: an unreachable server is logged once and retried in the
    /// background every `refresh_interval`, breakers meanwhile using their local state.
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] when `url` does not parse.
    pub fn open(url: &str, options: RedisStoreOptions) -> Result<RedisStore, StoreError> {
        let client = Client::open(url).map_err(|e| StoreError::InvalidUrl {
            url: redact_url(url),
            reason: scrub(&e.to_string(), &secrets(url)),
        })?;
        let (jobs, queue) = sync_channel(worker::QUEUE);
        let inner = Arc::new(StoreInner {
            client,
            address: redact_url(url),
            secrets: secrets(url),
            options: options.sanitized(),
            scripts: Scripts::new(),
            call: Mutex::new(None),
            jobs,
            clock: RedisClock::new(),
            up: AtomicBool::new(true),
            down_logged: AtomicBool::new(false),
            links: Mutex::new(Vec::new()),
            tag: format!("{}-{:08x}", std::process::id(), fastrand::u32(..)),
            lease_seq: AtomicU64::new(0),
            fleet: OnceLock::new(),
        });
        spawn_refresher(Arc::downgrade(&inner));
        worker::spawn(Arc::downgrade(&inner), queue);
        Ok(RedisStore { inner })
    }

    /// Shares `breaker`'s state through this store. Reads the shared state first (waiting
    /// at most `3 x timeout`), so a breaker attached while the shared state is OPEN
    /// rejects from its first call.
    ///
    /// # Errors
    /// [`StoreError::AlreadyAttached`] when the breaker has a store already.
    pub fn attach(&self, breaker: &CircuitBreaker) -> Result<(), StoreError> {
        let link = Link::new(&self.inner, breaker);
        if breaker.attach_shared_state(link.clone()).is_err() {
            return Err(StoreError::AlreadyAttached {
                name: breaker.name().to_string(),
            });
        }
        link.refresh(&self.inner, breaker);
        self.inner.links.lock().unwrap().push(link);
        Ok(())
    }

    /// Shares `limiter`'s `limitForPeriod` per `limitRefreshPeriod` with every process
    /// attaching a limiter of the same name (issue #29): across all of them at most
    /// `limitForPeriod` permits per period, each granted once, cycles counted from the
    /// first process's first request on Redis's clock. Each acquisition asks Redis (one
    /// round trip, at most `3 x timeout`); without an answer it is decided on this
    /// process's share, `ceil(limitForPeriod / replicas)`. See the crate docs.
    ///
    /// # Errors
    /// [`StoreError::LimitAlreadyAttached`] when the limiter has a store already.
    pub fn attach_rate_limiter(&self, limiter: &RateLimiter) -> Result<(), StoreError> {
        let shared = SharedRate::new(&self.inner, limiter.name());
        if limiter.attach_shared_limit(shared.clone()).is_err() {
            return Err(StoreError::LimitAlreadyAttached {
                kind: "rate limiter",
                name: limiter.name().to_string(),
            });
        }
        let member: Arc<dyn crate::fleet::Member> = shared;
        self.inner.fleet().add(Arc::downgrade(&member));
        Ok(())
    }

    /// Caps `bulkhead`'s calls in flight at `maxConcurrentCalls` across every process
    /// attaching a bulkhead of the same name (issue #29). Each admitted call asks Redis
    /// (one round trip, at most `3 x timeout`); its end is reported without waiting. A
    /// killed process's calls stop counting within `replica_lease`. Without an answer the
    /// call is decided on this process's share, `ceil(maxConcurrentCalls / replicas)`.
    ///
    /// # Errors
    /// [`StoreError::LimitAlreadyAttached`] when the bulkhead has a store already.
    pub fn attach_bulkhead(&self, bulkhead: &Bulkhead) -> Result<(), StoreError> {
        let shared = SharedBulkhead::new(&self.inner, bulkhead.name());
        if bulkhead.attach_shared_concurrency(shared.clone()).is_err() {
            return Err(StoreError::LimitAlreadyAttached {
                kind: "bulkhead",
                name: bulkhead.name().to_string(),
            });
        }
        let member: Arc<dyn crate::fleet::Member> = shared;
        self.inner.fleet().add(Arc::downgrade(&member));
        Ok(())
    }

    /// Shares the limit of every key's rate limiter of `keyed` (issue #29): each key's
    /// limiter, created from now on, is attached as by
    /// [`attach_rate_limiter`](Self::attach_rate_limiter) under its own name
    /// (`<name>/<key>`), so each key has `limitForPeriod` across the fleet. A key idle in
    /// every process leaves Redis after `key_ttl`. `false` when `keyed` has a creation hook
    /// already.
    pub fn attach_keyed_rate_limiters(&self, keyed: &Keyed<RateLimiter>) -> bool {
        let store = self.clone();
        keyed.on_create(move |l| {
            let _ = store.attach_rate_limiter(l);
        })
    }

    /// [`attach_keyed_rate_limiters`](Self::attach_keyed_rate_limiters) for semaphore
    /// bulkheads: `maxConcurrentCalls` per key across the fleet.
    pub fn attach_keyed_bulkheads(&self, keyed: &Keyed<Bulkhead>) -> bool {
        let store = self.clone();
        keyed.on_create(move |b| {
            let _ = store.attach_bulkhead(b);
        })
    }

    /// Whether the last request to Redis succeeded.
    pub fn is_reachable(&self) -> bool {
        self.inner.up.load(Ordering::Relaxed)
    }

    /// The server's address, without credentials.
    pub fn address(&self) -> &str {
        &self.inner.address
    }

    /// The options in force.
    pub fn options(&self) -> &RedisStoreOptions {
        &self.inner.options
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("address", &self.inner.address)
            .field("reachable", &self.is_reachable())
            .finish()
    }
}

impl StoreInner {
    /// The fleet side, started on first use.
    pub(crate) fn fleet(self: &Arc<Self>) -> &Fleet {
        self.fleet
            .get_or_init(|| Fleet::start(Arc::downgrade(self)))
    }

    /// Whether the last request succeeded (while false only the refresher talks to Redis).
    pub(crate) fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    pub(crate) fn connect(&self) -> redis::RedisResult<Connection> {
        let t = self.options.timeout;
        let mut con = self.client.get_connection_with_timeout(t)?;
        con.set_read_timeout(Some(t))?;
        con.set_write_timeout(Some(t))?;
        self.scripts.load_all(&mut con)?;
        Ok(con)
    }

    /// Runs one request on the attach connection, waiting for it (at most `3 x timeout`);
    /// `None` (at once) while Redis is known to be down, or when this request fails (Redis
    /// is then marked down). Not on the call path: calls hand their requests to
    /// [`submit`](Self::submit).
    pub(crate) fn call<T>(
        &self,
        f: impl FnOnce(&mut Connection, &Scripts) -> redis::RedisResult<T>,
    ) -> Option<T> {
        if !self.up.load(Ordering::Relaxed) {
            return None;
        }
        let mut slot = self.call.lock().unwrap_or_else(|e| e.into_inner());
        if !self.up.load(Ordering::Relaxed) {
            return None;
        }
        if slot.is_none() {
            match self.connect() {
                Ok(c) => *slot = Some(c),
                Err(e) => {
                    self.mark_down(&e);
                    return None;
                }
            }
        }
        let con = slot.as_mut().expect("connected above");
        match f(con, &self.scripts) {
            Ok(v) => Some(v),
            Err(e) => {
                *slot = None;
                self.mark_down(&e);
                None
            }
        }
    }

    /// Hands a call-path request to the store's call thread; never waits.
    pub(crate) fn submit(&self, job: Job) {
        worker::submit(self, &self.jobs, job);
    }

    /// Runs `jobs` in one round trip on the call thread's connection `con` (connecting
    /// first if needed), then each job's continuation. A job refused as late although this
    /// thread still waited for it (Redis's clock moved on since the last estimate) is sent
    /// once more, with the estimate its reply brought.
    pub(crate) fn run_jobs(&self, con: &mut Option<Connection>, mut jobs: Vec<Job>) {
        let mut replies = self.run_requests(con, jobs.iter_mut().map(|j| &mut j.request));
        let again: Vec<usize> = match &replies {
            Some(r) => (0..r.len()).filter(|&i| r[i].late).collect(),
            None => Vec::new(),
        };
        if !again.is_empty() {
            let retried = self.run_requests(
                con,
                jobs.iter_mut()
                    .enumerate()
                    .filter(|(i, _)| again.contains(i))
                    .map(|(_, j)| &mut j.request),
            );
            if let (Some(all), Some(retried)) = (replies.as_mut(), retried) {
                for (i, r) in again.into_iter().zip(retried) {
                    all[i] = r;
                }
            }
        }
        let mut replies = replies.map(Vec::into_iter);
        for job in jobs {
            let reply = replies.as_mut().and_then(|r| r.next());
            (job.then)(self, reply);
        }
    }

    /// Sets a write's due time as it is sent: now (Redis's clock, estimated) plus the
    /// call-path bound; none while Redis's clock is unknown.
    pub(crate) fn stamp(&self, r: &mut Request) {
        let now = self.clock.now_ms();
        r.stamp(if now == 0 { 0 } else { now + self.max_age_ms() });
    }

    /// Runs `requests` in one round trip on `con` (connecting first if needed), noting
    /// Redis's clock; `None` while Redis is down or when the requests fail (Redis is then
    /// marked down and `con` dropped).
    pub(crate) fn run_requests<'a>(
        &self,
        con: &mut Option<Connection>,
        requests: impl Iterator<Item = &'a mut Request>,
    ) -> Option<Vec<Reply>> {
        if !self.up.load(Ordering::Relaxed) {
            return None;
        }
        if con.is_none() {
            match self.connect() {
                Ok(c) => *con = Some(c),
                Err(e) => {
                    self.mark_down(&e);
                    return None;
                }
            }
        }
        let requests: Vec<&Request> = requests
            .map(|r| {
                self.stamp(r);
                &*r
            })
            .collect();
        match self
            .scripts
            .run(con.as_mut().expect("connected above"), &requests)
        {
            Ok(replies) => {
                for r in &replies {
                    self.clock.observe(r.now_ms);
                }
                Some(replies)
            }
            Err(e) => {
                *con = None;
                self.mark_down(&e);
                None
            }
        }
    }

    /// How long after its sending Redis may run a change (ms): the call-path bound, longer
    /// than this process waits for any reply.
    pub(crate) fn max_age_ms(&self) -> u64 {
        call_path_bound(&self.options).as_millis() as u64
    }

    pub(crate) fn mark_down(&self, e: &redis::RedisError) {
        self.up.store(false, Ordering::Relaxed);
        if !self.down_logged.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                target: "breaker_redis",
                redis = %self.address,
                error = %scrub(&e.to_string(), &self.secrets),
                "Redis unreachable: circuit breakers use their local state until it is back"
            );
        }
    }

    fn mark_up(&self) {
        self.up.store(true, Ordering::Relaxed);
        if self.down_logged.swap(false, Ordering::Relaxed) {
            tracing::info!(
                target: "breaker_redis",
                redis = %self.address,
                "Redis reachable again: circuit breakers share their state again"
            );
        }
    }

    /// A fresh lease id, unique across processes.
    pub(crate) fn lease_id(&self) -> String {
        let n = self.lease_seq.fetch_add(1, Ordering::Relaxed);
        format!("{}-{n}", self.tag)
    }
}

/// Every `refresh_interval`: reconnects when Redis is down, then reads the shared state of
/// every attached breaker and applies it. Ends when the store is dropped.
fn spawn_refresher(store: Weak<StoreInner>) {
    let spawned = std::thread::Builder::new()
        .name("breaker-redis-refresh".into())
        .spawn(move || {
            let mut con: Option<Connection> = None;
            loop {
                let interval = match store.upgrade() {
                    Some(s) => s.options.refresh_interval,
                    None => return,
                };
                std::thread::sleep(interval);
                let Some(s) = store.upgrade() else { return };
                refresh_once(&s, &mut con);
            }
        });
    if let Err(e) = spawned {
        tracing::error!(target: "breaker_redis", error = %e, "cannot start the Redis refresher thread");
    }
}

fn refresh_once(s: &Arc<StoreInner>, con: &mut Option<Connection>) {
    if con.is_none() {
        match s.connect() {
            Ok(c) => *con = Some(c),
            Err(e) => {
                s.mark_down(&e);
                return;
            }
        }
    }
    let links: Vec<Arc<Link>> = {
        let mut all = s.links.lock().unwrap();
        // Breakers nobody holds any more are forgotten.
        all.retain(|l| l.breaker.upgrade().is_some());
        all.clone()
    };
    let c = con.as_mut().expect("connected above");
    // One round trip for all the breakers.
    let requests: Vec<Request> = links.iter().map(|l| l.read_request()).collect();
    let writes: Vec<u64> = links
        .iter()
        .map(|l| l.writes.load(Ordering::Acquire))
        .collect();
    let replies = if links.is_empty() {
        redis::cmd("PING").query::<String>(c).map(|_| Vec::new())
    } else {
        s.scripts.run(c, &requests.iter().collect::<Vec<_>>())
    };
    match replies {
        Ok(replies) => {
            s.mark_up();
            if let Some(fleet) = s.fleet.get() {
                fleet.beat_all();
            }
            for r in &replies {
                s.clock.observe(r.now_ms);
            }
            for ((l, reply), writes) in links.iter().zip(replies).zip(writes) {
                if let Some(cb) = l.breaker.upgrade() {
                    // A write-back runs here, on the refresher's connection.
                    if let Err(e) = l.reconcile(s, c, &cb, reply, writes) {
                        *con = None;
                        s.mark_down(&e);
                        return;
                    }
                }
            }
        }
        Err(e) => {
            *con = None;
            s.mark_down(&e);
        }
    }
}

/// How long a call may wait on Redis at most, queueing behind other calls' requests
/// included: `3 x timeout` (connect, send and receive, each bounded by `timeout`). Only a
/// HALF_OPEN trial permission waits (for its lease), each caller up to this from its own
/// start, then it runs on local state; a trip, a trial outcome or a manual transition never
/// waits (handed to the store's call thread). Redis refuses a change it runs later than
/// this after the change was sent (issue #23).
pub fn call_path_bound(options: &RedisStoreOptions) -> Duration {
    options.timeout * 3
}
