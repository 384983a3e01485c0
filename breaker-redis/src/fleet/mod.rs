//! Fleet-wide limits (issue #29): a rate limiter's `limitForPeriod` and a semaphore
//! bulkhead's `maxConcurrentCalls` shared by every process through Redis.
//!
//! Each attached instance asks Redis on its call path (one script run, atomic, by Redis's
//! clock), through one background thread per store that sends every request waiting in
//! one pipeline on its own connection. A caller waits for its answer at most
//! [`call_path_bound`](crate::call_path_bound) (`3 x timeout`) from its own start; without
//! an answer (Redis slow, stopped, restarting, or known to be down) it decides on a local
//! share of the limit: `ceil(limit / replicas)`, `replicas` being the processes Redis last
//! counted as using the instance (1 before Redis ever answered). The store's refresher
//! reconnects every `refresh_interval` and renews each process's membership (its
//! heartbeat); a process silent for `replica_lease` stops counting (its bulkhead permits
//! come back).

mod bulkhead;
mod ratelimiter;
pub(crate) mod scripts;

use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use redis::Connection;

pub(crate) use bulkhead::SharedBulkhead;
pub(crate) use ratelimiter::SharedRate;
use scripts::{FleetReply, FleetRequest, FleetScript, FleetScripts};

use crate::store::{call_path_bound, StoreInner};
use crate::worker::Pending;

/// What a job does with its reply (`None`: Redis down, or the request failed).
type Then = Box<dyn FnOnce(Option<FleetReply>) + Send>;

struct Job {
    request: FleetRequest,
    /// Whether the reply is still wanted (checked before sending); `None`: always.
    wanted: Option<Box<dyn Fn() -> bool + Send>>,
    then: Then,
}

/// An attached instance the refresher keeps alive in Redis.
pub(crate) trait Member: Send + Sync {
    /// Its heartbeat request.
    fn beat(&self) -> FleetRequest;
    /// The heartbeat's reply.
    fn on_beat(&self, reply: FleetReply);
    /// The heartbeat `request` got no reply.
    fn beat_failed(&self, request: &FleetRequest);
}

/// The store's fleet side: the call thread's queue, the scripts and the attached
/// instances.
pub(crate) struct Fleet {
    jobs: SyncSender<Job>,
    members: Mutex<Vec<Weak<dyn Member>>>,
}

/// Jobs waiting for the thread at most; more are answered at once as if Redis were down.
const QUEUE: usize = 4096;
/// The most jobs in one pipeline.
const BATCH: usize = 128;

impl Fleet {
    /// Starts the fleet call thread of `store`.
    pub(crate) fn start(store: Weak<StoreInner>) -> Fleet {
        let (jobs, queue) = sync_channel(QUEUE);
        spawn(store, queue);
        Fleet {
            jobs,
            members: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn add(&self, member: Weak<dyn Member>) {
        self.members.lock().unwrap().push(member);
    }

    fn submit(&self, job: Job) {
        match self.jobs.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(job)) | Err(TrySendError::Disconnected(job)) => (job.then)(None),
        }
    }

    /// Sends `request` and never waits for it.
    pub(crate) fn send(
        &self,
        request: FleetRequest,
        then: impl FnOnce(Option<FleetReply>) + Send + 'static,
    ) {
        self.submit(Job {
            request,
            wanted: None,
            then: Box::new(then),
        });
    }

    /// Sends `request` and waits for its reply until `deadline`; `None` then, or when Redis
    /// is down. `abandoned` runs (on the call thread) with a reply that came after the
    /// caller stopped waiting (to hand back what it granted).
    pub(crate) fn ask(
        &self,
        request: FleetRequest,
        deadline: Instant,
        abandoned: impl FnOnce(FleetReply) + Send + 'static,
    ) -> Option<FleetReply> {
        let pending = Pending::<Option<FleetReply>>::new();
        let answer = pending.clone();
        let asked = pending.clone();
        self.submit(Job {
            request,
            wanted: Some(Box::new(move || !asked.abandoned())),
            then: Box::new(move |reply| {
                if let Err(Some(r)) = pending.complete(reply) {
                    abandoned(r);
                }
            }),
        });
        crate::hook::off_the_runtime(|| answer.wait_until(deadline)).flatten()
    }

    /// Every attached instance's heartbeat (from the refresher, Redis reachable).
    pub(crate) fn beat_all(&self) {
        let members: Vec<Arc<dyn Member>> = {
            let mut all = self.members.lock().unwrap();
            all.retain(|m| m.strong_count() > 0);
            all.iter().filter_map(Weak::upgrade).collect()
        };
        for m in members {
            let request = m.beat();
            let sent = request.clone();
            let me = Arc::downgrade(&m);
            self.send(request, move |reply| match (reply, me.upgrade()) {
                (Some(r), Some(m)) => m.on_beat(r),
                (None, Some(m)) => m.beat_failed(&sent),
                _ => {}
            });
        }
    }
}

/// The two keys of the instance `name` of `kind` (`rl`, `bh`): its hash and its members,
/// in one Redis Cluster slot.
pub(crate) fn keys(s: &StoreInner, kind: &str, name: &str) -> [String; 2] {
    let key = format!("{}{{{kind}:{name}}}", s.options.key_prefix);
    [key.clone(), format!("{key}:alive")]
}

/// The first three arguments of every fleet script: tag, replica lease, key TTL (ms).
pub(crate) fn prelude_args(s: &StoreInner) -> Vec<String> {
    vec![
        s.tag.clone(),
        (s.options.replica_lease.as_millis() as u64).to_string(),
        (s.options.key_ttl.as_millis() as u64).to_string(),
    ]
}

/// The deadline of a call-path wait starting now.
pub(crate) fn deadline(s: &StoreInner) -> Instant {
    Instant::now() + call_path_bound(&s.options)
}

/// `ceil(limit / replicas)`, at least 1: a process's local share while Redis is away.
pub(crate) fn local_share(limit: u32, replicas: u32) -> u32 {
    limit.div_ceil(replicas.max(1)).max(1)
}

pub(crate) fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

fn spawn(store: Weak<StoreInner>, jobs: Receiver<Job>) {
    let spawned = std::thread::Builder::new()
        .name("breaker-redis-fleet".into())
        .spawn(move || {
            let scripts = FleetScripts::new();
            let mut con: Option<Connection> = None;
            while let Ok(first) = jobs.recv() {
                let mut batch = vec![first];
                while batch.len() < BATCH {
                    match jobs.try_recv() {
                        Ok(j) => batch.push(j),
                        Err(_) => break,
                    }
                }
                batch.retain(|j| j.wanted.as_ref().is_none_or(|w| w()));
                let Some(s) = store.upgrade() else { return };
                let replies = run(&s, &scripts, &mut con, &batch);
                drop(s);
                let mut replies = replies.map(Vec::into_iter);
                for job in batch {
                    (job.then)(replies.as_mut().and_then(|r| r.next()));
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!(target: "breaker_redis", error = %e, "cannot start the Redis fleet thread");
    }
}

fn run(
    s: &StoreInner,
    scripts: &FleetScripts,
    con: &mut Option<Connection>,
    batch: &[Job],
) -> Option<Vec<FleetReply>> {
    if batch.is_empty() || !s.is_up() {
        return None;
    }
    if con.is_none() {
        match s.connect() {
            Ok(c) => *con = Some(c),
            Err(e) => {
                s.mark_down(&e);
                return None;
            }
        }
    }
    let requests: Vec<&FleetRequest> = batch.iter().map(|j| &j.request).collect();
    match scripts.run(con.as_mut().expect("connected above"), &requests) {
        Ok(replies) => {
            for r in &replies {
                s.clock.observe(r.now_ms);
            }
            Some(replies)
        }
        Err(e) => {
            *con = None;
            s.mark_down(&e);
            None
        }
    }
}

/// A request of `which` on `keys` with the prelude's arguments and `more`.
pub(crate) fn request(
    s: &StoreInner,
    which: FleetScript,
    keys: &[String; 2],
    more: &[&dyn ToString],
) -> FleetRequest {
    let mut args = prelude_args(s);
    args.extend(more.iter().map(|a| a.to_string()));
    FleetRequest {
        which,
        keys: keys.clone(),
        args,
    }
}
