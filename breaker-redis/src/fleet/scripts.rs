//! The Lua scripts of the fleet-wide rate limiter and bulkhead (issue #29). Redis runs each
//! atomically, by its own clock (`TIME`), so every permit is granted once and the
//! replicas' clocks never have to agree.
//!
//! Keys: `KEYS[1]` the instance's hash, `KEYS[2]` the sorted set of the processes using it
//! (member: the process's tag, score: when it stops counting as alive, ms by Redis's
//! clock). Every script first renews its caller in `KEYS[2]` and drops the processes whose
//! lease has passed (a bulkhead also forgets their permits), and replies
//! `{a, b, replicas, c, d, now}` (integers; `now` is Redis's clock, ms).

use redis::{Connection, Script};

/// Renews the caller (`ARGV[1]` tag, `ARGV[2]` replica lease ms, `ARGV[3]` key TTL ms),
/// drops dead processes (and their fields of `KEYS[1]`), counts the live ones.
const PRELUDE: &str = r#"
local K, A = KEYS[1], KEYS[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tag, lease, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZADD', A, now + lease, tag)
local dead = redis.call('ZRANGEBYSCORE', A, '-inf', now)
for _, d in ipairs(dead) do redis.call('HDEL', K, d) end
redis.call('ZREMRANGEBYSCORE', A, '-inf', now)
local replicas = redis.call('ZCARD', A)
redis.call('PEXPIRE', A, ttl)
"#;

/// `RATE(tag, lease, ttl, period_ms, limit, permits, timeout_ms)`: Resilience4j's
/// `AtomicRateLimiter.calculateNextState` + `reservePermissions` on the shared state
/// (`t0` time zero of the cycles, `c` the stored cycle, `p` the permissions, `P` the period
/// they were counted with; a new period, or a missing key, starts cycles at `now` with a
/// full cycle, as a new `AtomicRateLimiter` does). Replies
/// `{granted, wait_ms, replicas, cycle, cycle_end_ms, now}`.
const RATE: &str = r#"
local P, L, n, timeout = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local h = redis.call('HMGET', K, 't0', 'c', 'p', 'P')
local t0, c, p = tonumber(h[1]), tonumber(h[2] or 0), tonumber(h[3] or 0)
if not t0 or tonumber(h[4]) ~= P then t0 = now; c = 0; p = L end
local cycle = math.floor((now - t0) / P)
if cycle > c then p = math.min(p + (cycle - c) * L, L); c = cycle end
local wait = 0
if p < n then
  local full = 0
  if n > p + L then full = math.ceil((n - p - L) / L) end
  wait = full * P + (cycle + 1) * P - (now - t0)
end
local granted = 0
if wait <= timeout then p = p - n; granted = 1 end
redis.call('HSET', K, 't0', t0, 'c', c, 'p', p, 'P', P)
redis.call('PEXPIRE', K, ttl)
return {granted, wait, replicas, cycle, t0 + (cycle + 1) * P, now}
"#;

/// `DRAIN(tag, lease, ttl, period_ms, limit)`: the permissions left in the current cycle
/// become 0 (reservations of later cycles stay), as `RateLimiter::drain_permissions`.
const DRAIN: &str = r#"
local P, L = tonumber(ARGV[4]), tonumber(ARGV[5])
local h = redis.call('HMGET', K, 't0', 'c', 'p', 'P')
local t0, c, p = tonumber(h[1]), tonumber(h[2] or 0), tonumber(h[3] or 0)
if not t0 or tonumber(h[4]) ~= P then t0 = now; c = 0; p = L end
local cycle = math.floor((now - t0) / P)
if cycle > c then p = math.min(p + (cycle - c) * L, L); c = cycle end
local drained = math.max(p, 0)
p = math.min(p, 0)
redis.call('HSET', K, 't0', t0, 'c', c, 'p', p, 'P', P)
redis.call('PEXPIRE', K, ttl)
return {drained, 0, replicas, cycle, t0 + (cycle + 1) * P, now}
"#;

/// `ENTER(tag, lease, ttl, max)`: one more call in flight for the caller if all live
/// processes' calls (the hash: tag -> calls) are fewer than `max`. Replies
/// `{granted, in_flight, replicas, 0, 0, now}` (`in_flight` after it).
const ENTER: &str = r#"
local max = tonumber(ARGV[4])
local sum = 0
for _, v in ipairs(redis.call('HVALS', K)) do sum = sum + tonumber(v) end
local granted = 0
if sum < max then redis.call('HINCRBY', K, tag, 1); sum = sum + 1; granted = 1 end
redis.call('PEXPIRE', K, ttl)
return {granted, sum, replicas, 0, 0, now}
"#;

/// `LEAVE(tag, lease, ttl)`: one call of the caller ended.
const LEAVE: &str = r#"
local v = redis.call('HINCRBY', K, tag, -1)
if v <= 0 then redis.call('HDEL', K, tag) end
redis.call('PEXPIRE', K, ttl)
return {math.max(v, 0), 0, replicas, 0, 0, now}
"#;

/// `BEAT(tag, lease, ttl, held, leaves)`: keeps the caller alive; with `held >= 0` (a
/// bulkhead) first takes off `leaves` calls whose end Redis missed, then writes its calls
/// in flight if Redis has no count for it (Redis restarted, or the caller was taken for
/// dead). Replies `{restored, 0, replicas, 0, 0, now}`.
const BEAT: &str = r#"
local held, leaves = tonumber(ARGV[4]), tonumber(ARGV[5])
if leaves > 0 then
  local v = redis.call('HINCRBY', K, tag, -leaves)
  if v <= 0 then redis.call('HDEL', K, tag) end
end
local restored = 0
if held > 0 then restored = redis.call('HSETNX', K, tag, held) end
if held >= 0 then redis.call('PEXPIRE', K, ttl) end
return {restored, 0, replicas, 0, 0, now}
"#;

/// Which fleet script a request runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FleetScript {
    Rate,
    Drain,
    Enter,
    Leave,
    Beat,
}

const ALL: [FleetScript; 5] = [
    FleetScript::Rate,
    FleetScript::Drain,
    FleetScript::Enter,
    FleetScript::Leave,
    FleetScript::Beat,
];

fn source(which: FleetScript) -> String {
    let body = match which {
        FleetScript::Rate => RATE,
        FleetScript::Drain => DRAIN,
        FleetScript::Enter => ENTER,
        FleetScript::Leave => LEAVE,
        FleetScript::Beat => BEAT,
    };
    format!("{PRELUDE}{body}")
}

/// One fleet script on one instance's two keys; `args` after the prelude's three.
#[derive(Debug, Clone)]
pub(crate) struct FleetRequest {
    pub which: FleetScript,
    pub keys: [String; 2],
    pub args: Vec<String>,
}

/// A fleet script's reply (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FleetReply {
    pub a: i64,
    pub b: i64,
    pub replicas: u32,
    pub c: i64,
    pub d: i64,
    pub now_ms: u64,
}

/// The compiled fleet scripts (their SHA1s).
pub(crate) struct FleetScripts {
    scripts: Vec<Script>,
}

impl FleetScripts {
    pub(crate) fn new() -> FleetScripts {
        FleetScripts {
            scripts: ALL.iter().map(|w| Script::new(&source(*w))).collect(),
        }
    }

    fn hash(&self, which: FleetScript) -> &str {
        let i = ALL.iter().position(|w| *w == which).expect("listed");
        self.scripts[i].get_hash()
    }

    /// Loads every fleet script into Redis's script cache (one round trip).
    pub(crate) fn load_all(&self, c: &mut Connection) -> redis::RedisResult<()> {
        let mut pipe = redis::pipe();
        for which in ALL {
            pipe.cmd("SCRIPT").arg("LOAD").arg(source(which));
        }
        pipe.query::<Vec<String>>(c).map(|_| ())
    }

    /// Runs `requests` in one round trip; loads the scripts first when Redis has lost them
    /// (a restart) and sends the pipeline again.
    pub(crate) fn run(
        &self,
        c: &mut Connection,
        requests: &[&FleetRequest],
    ) -> redis::RedisResult<Vec<FleetReply>> {
        let mut pipe = redis::pipe();
        for r in requests {
            pipe.cmd("EVALSHA")
                .arg(self.hash(r.which))
                .arg(2)
                .arg(&r.keys[0])
                .arg(&r.keys[1])
                .arg(&r.args);
        }
        let replies: Vec<Vec<i64>> = match pipe.query(c) {
            Err(e) if e.kind() == redis::ErrorKind::NoScriptError => {
                self.load_all(c)?;
                pipe.query(c)?
            }
            r => r?,
        };
        replies
            .iter()
            .map(|v| match v.as_slice() {
                [a, b, replicas, c, d, now] => Ok(FleetReply {
                    a: *a,
                    b: *b,
                    replicas: (*replicas).clamp(0, u32::MAX as i64) as u32,
                    c: *c,
                    d: *d,
                    now_ms: (*now).max(0) as u64,
                }),
                _ => Err(redis::RedisError::from((
                    redis::ErrorKind::TypeError,
                    "unexpected fleet script reply",
                ))),
            })
            .collect()
    }
}
