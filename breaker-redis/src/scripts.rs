//! The Lua scripts that read and change a shared breaker. Redis runs each one atomically, so
//! replicas racing on a transition cannot lose an update: every change is decided inside
//! the script from the state it reads, by Redis's own clock (`TIME`), so the replicas'
//! clocks never have to agree.
//!
//! Keys: `KEYS[1]` is the breaker's hash, `KEYS[2]` the sorted set of its HALF_OPEN trial
//! leases (member: lease id, score: expiry in ms). Hash fields: `s` state (0 CLOSED, 1 OPEN,
//! 2 HALF_OPEN), `e` epoch (grows on every shared transition; a replica that has seen it knows
//! nothing changed since), `u` OPEN deadline (ms since the epoch, Redis's clock), `a`
//! attempts (for the OPEN wait's interval function), `ok` / `ko` / `sl` HALF_OPEN trial
//! successes, failures and slow calls. Every script replies `{flag, s, e, u, a, now}`.
//!
//! Every write's first two arguments say what it was based on (issue #23), on Redis's clock
//! as the replica estimates it (ms, 0 when it has no estimate yet): `ARGV[1]` when the
//! replica decided the change, `ARGV[2]` the latest Redis may run it (its sending plus the
//! call-path bound, `3 x timeout`: the replica has stopped waiting for the reply by then).
//! A change Redis runs later (its request sat in a socket while Redis was stopped) is
//! refused with flag 2 and changes nothing: the replica has moved on with its local state,
//! and the refresher writes back what still holds. An OPEN deadline counts from the
//! decision, not from when Redis ran it. Together with the epoch a change was based on
//! (`TRIP`, `OUTCOME`), a late or stale request cannot undo what happened since.

use redis::{Connection, Script};

/// Reads the state and defines the helpers every script uses.
const PRELUDE: &str = r#"
local K, T = KEYS[1], KEYS[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HMGET', K, 's', 'e', 'u', 'a', 'ok', 'ko', 'sl')
local s, e, u, a = tonumber(h[1] or 0), tonumber(h[2] or 0), tonumber(h[3] or 0), tonumber(h[4] or 0)
local ok, ko, sl = tonumber(h[5] or 0), tonumber(h[6] or 0), tonumber(h[7] or 0)
local d, due = tonumber(ARGV[1] or 0), tonumber(ARGV[2] or 0)
local late = due > 0 and now > due
local at = now
if d > 0 and d < now then at = d end
local function save(ttl)
  redis.call('HSET', K, 's', s, 'e', e, 'u', u, 'a', a, 'ok', ok, 'ko', ko, 'sl', sl)
  local keep = ttl
  if s == 1 and u > now then keep = keep + (u - now) end
  redis.call('PEXPIRE', K, keep)
end
local function newepoch()
  e = math.max(e + 1, now)
  ok, ko, sl = 0, 0, 0
  redis.call('DEL', T)
end
local function reply(flag) return {flag, s, e, u, a, now} end
"#;

/// `READ()`: the state, changing nothing.
const READ: &str = "return reply(0)";

/// `TRIP(decided, due, expected_epoch, wait_ms, ttl_ms, force)`: OPEN for `wait_ms` from
/// the decision, from a missing key, from the CLOSED state this replica has seen
/// (`expected_epoch` or an older one: a CLOSED newer than what the replica's window was
/// based on refuses it; 0 when the replica has no basis, e.g. its own reset is still
/// unanswered), from the HALF_OPEN of `expected_epoch`, or always with `force` 1
/// (a manual transition). An OPEN state is kept: the first replica's deadline stands.
/// Flag 1 when this call opened it, 2 when it came too late.
const TRIP: &str = r#"
if late then return reply(2) end
local expected = tonumber(ARGV[3])
if ARGV[6] == '1' or e == 0 or (s == 0 and (expected == 0 or e <= expected))
    or (s == 2 and e == expected) then
  s = 1; newepoch(); u = at + tonumber(ARGV[4]); a = a + 1
  save(tonumber(ARGV[5]))
  return reply(1)
end
return reply(0)
"#;

/// `LEASE(decided, due, lease_id, lease_ms, permitted, ttl_ms)`: a HALF_OPEN trial slot
/// for `lease_ms`. An OPEN state whose deadline has passed moves to HALF_OPEN first (a
/// missing key too: the replica asking was OPEN, and Redis lost the state). Expired leases
/// are dropped (their process died or hung), then a lease is granted if leases in flight
/// plus trial outcomes recorded are fewer than `permitted`. Flag 1 when granted, 2 when
/// the request came too late (its caller has stopped waiting).
const LEASE: &str = r#"
if late then return reply(2) end
local ttl = tonumber(ARGV[6])
if e == 0 or (s == 1 and now > u) then
  s = 2; newepoch(); save(ttl)
end
if s ~= 2 then return reply(0) end
redis.call('ZREMRANGEBYSCORE', T, '-inf', now)
if redis.call('ZCARD', T) + ok + ko < tonumber(ARGV[5]) then
  local lease = tonumber(ARGV[4])
  redis.call('ZADD', T, now + lease, ARGV[3])
  redis.call('PEXPIRE', T, lease + ttl)
  redis.call('PEXPIRE', K, ttl)
  return reply(1)
end
return reply(0)
"#;

/// `OUTCOME(decided, due, lease_id, epoch, kind, slow, minimum_calls, failure_threshold,
/// slow_threshold, wait_ms, ttl_ms)`: ends a trial lease. `kind` 0 hands the slot back, 1 a
/// success, 2 a failure. An outcome counts only if its lease is still held (not expired)
/// in the HALF_OPEN of `epoch` and it is not late (a late one hands its slot back, flag 2).
/// Once `minimum_calls` outcomes are in, the rates decide for every replica: OPEN for
/// `wait_ms` if either reaches its threshold (%), else CLOSED. Flag 1 when this call
/// decided.
const OUTCOME: &str = r#"
local removed = redis.call('ZREM', T, ARGV[3])
if late then return reply(2) end
if removed == 0 or s ~= 2 or e ~= tonumber(ARGV[4]) or ARGV[5] == '0' then return reply(0) end
if ARGV[5] == '2' then ko = ko + 1 else ok = ok + 1 end
if ARGV[6] == '1' then sl = sl + 1 end
local calls = ok + ko
local ttl = tonumber(ARGV[11])
if calls >= tonumber(ARGV[7]) then
  local failed, slow = ko * 100 / calls, sl * 100 / calls
  newepoch()
  if failed >= tonumber(ARGV[8]) or slow >= tonumber(ARGV[9]) then
    s = 1; u = at + tonumber(ARGV[10]); a = a + 1
  else
    s = 0; u = 0; a = 0
  end
  save(ttl)
  return reply(1)
end
save(ttl)
return reply(0)
"#;

/// `CLOSE(decided, due, ttl_ms)`: CLOSED for every replica (a manual
/// `transition_to_closed_state()` or `reset()`); flag 2 when it came too late.
const CLOSE: &str = r#"
if late then return reply(2) end
s = 0; newepoch(); u = 0; a = 0
save(tonumber(ARGV[3]))
return reply(1)
"#;

/// The five scripts, each loaded once per connection (`EVALSHA`, `EVAL` after a Redis
/// restart emptied the script cache).
pub(crate) struct Scripts {
    pub read: Script,
    pub trip: Script,
    pub lease: Script,
    pub outcome: Script,
    pub close: Script,
}

const ALL: [Which; 5] = [
    Which::Read,
    Which::Trip,
    Which::Lease,
    Which::Outcome,
    Which::Close,
];

/// A script's whole source: the prelude and its body.
fn source(which: Which) -> String {
    let body = match which {
        Which::Read => READ,
        Which::Trip => TRIP,
        Which::Lease => LEASE,
        Which::Outcome => OUTCOME,
        Which::Close => CLOSE,
    };
    format!("{PRELUDE}\n{body}")
}

impl Scripts {
    pub fn new() -> Self {
        let s = |which| Script::new(&source(which));
        Scripts {
            read: s(Which::Read),
            trip: s(Which::Trip),
            lease: s(Which::Lease),
            outcome: s(Which::Outcome),
            close: s(Which::Close),
        }
    }

    fn get(&self, which: Which) -> &Script {
        match which {
            Which::Read => &self.read,
            Which::Trip => &self.trip,
            Which::Lease => &self.lease,
            Which::Outcome => &self.outcome,
            Which::Close => &self.close,
        }
    }

    /// Loads the five scripts into Redis's script cache, in one round trip (on every new
    /// connection: a Redis that restarted has an empty cache, and a pipeline that met an
    /// unknown script half way would have to be sent again).
    pub fn load_all(&self, c: &mut Connection) -> redis::RedisResult<()> {
        let mut pipe = redis::pipe();
        for which in ALL {
            pipe.cmd("SCRIPT").arg("LOAD").arg(source(which));
        }
        pipe.query::<Vec<String>>(c).map(|_| ())
    }

    /// Runs `requests` in one round trip (a pipeline of `EVALSHA`); when Redis does not
    /// know a script all the same (`SCRIPT FLUSH` since the connection was made), loads
    /// them all and sends the pipeline again (a request run twice changes nothing more:
    /// the same lease id, an OPEN kept, an outcome whose lease is gone). The replies are in
    /// the requests' order.
    pub fn run(&self, c: &mut Connection, requests: &[&Request]) -> redis::RedisResult<Vec<Reply>> {
        let mut pipe = redis::pipe();
        for r in requests {
            pipe.cmd("EVALSHA")
                .arg(self.get(r.which).get_hash())
                .arg(2)
                .arg(&r.key)
                .arg(&r.trials_key)
                .arg(&r.args);
        }
        let replies: Vec<Vec<i64>> = match pipe.query(c) {
            Err(e) if e.kind() == redis::ErrorKind::NoScriptError => {
                self.load_all(c)?;
                pipe.query(c)?
            }
            r => r?,
        };
        replies.iter().map(|v| Reply::parse(v)).collect()
    }
}

/// Which script a [`Request`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Read,
    Trip,
    Lease,
    Outcome,
    Close,
}

/// One script to run on one breaker's keys: `args` are its `ARGV` (for the writes, the
/// decision time and the due time first; the due time is set by [`stamp`](Self::stamp)
/// when the request is sent).
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub which: Which,
    pub key: String,
    pub trials_key: String,
    pub args: Vec<String>,
}

impl Request {
    /// Sets a write's due time (Redis's clock, ms; 0: none) as it is sent.
    pub fn stamp(&mut self, due_ms: u64) {
        if self.which != Which::Read && self.args.len() >= 2 {
            self.args[1] = due_ms.to_string();
        }
    }
}

/// A script's reply: the shared state after it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reply {
    /// The script's flag (opened, granted, decided).
    pub flag: bool,
    /// The script refused the change: Redis ran it after its `due` time.
    pub late: bool,
    pub state: SharedState,
    /// 0 when the key does not exist.
    pub epoch: u64,
    /// OPEN deadline, ms by Redis's clock.
    pub until_ms: u64,
    pub attempts: u32,
    /// Redis's clock when the script ran, ms.
    pub now_ms: u64,
}

/// The shared state's code in the hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SharedState {
    Closed,
    Open,
    HalfOpen,
}

impl Reply {
    pub fn parse(v: &[i64]) -> redis::RedisResult<Reply> {
        if v.len() != 6 {
            return Err(redis::RedisError::from((
                redis::ErrorKind::TypeError,
                "unexpected script reply",
            )));
        }
        let state = match v[1] {
            1 => SharedState::Open,
            2 => SharedState::HalfOpen,
            _ => SharedState::Closed,
        };
        Ok(Reply {
            flag: v[0] == 1,
            late: v[0] == 2,
            state,
            epoch: v[2].max(0) as u64,
            until_ms: v[3].max(0) as u64,
            attempts: v[4].clamp(0, u32::MAX as i64) as u32,
            now_ms: v[5].max(0) as u64,
        })
    }

    /// Whether the OPEN wait has passed (a trial may move it to HALF_OPEN).
    pub fn open_expired(&self) -> bool {
        self.state == SharedState::Open && self.now_ms > self.until_ms
    }
}
