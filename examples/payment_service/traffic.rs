//! The traffic: Poisson arrivals from a seeded generator, replayed against a client.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};
use tokio::task::JoinSet;

use super::client::{PaymentClient, QuoteError, Served, CALL_ID};
use super::downstream::CURRENCIES;
use super::stats::{CallRecord, Epoch, Outcome, Recorder};

/// Share of requests for a currency the provider does not know (answered 404).
pub const BAD_REQUEST_SHARE: f64 = 0.10;

/// How many times the usual rate arrives while the provider is slow (a flash sale).
pub const SPIKE: f64 = 3.0;

/// One request: when it is sent and what it asks for.
#[derive(Clone, Debug)]
pub struct Arrival {
    /// Send time, from the start.
    pub at: Duration,
    /// The currency asked for.
    pub currency: &'static str,
}

/// Poisson arrivals at `rate` per second for `duration` ([`SPIKE`] times that during
/// `spike`). A share of the requests name an unknown currency; during `all_bad` every request
/// does (a client bug).
pub fn schedule(
    seed: u64,
    rate: f64,
    duration: Duration,
    all_bad: Option<Range<Duration>>,
    spike: Option<Range<Duration>>,
) -> Vec<Arrival> {
    let mut rng = StdRng::seed_from_u64(seed);
    let gaps = Exp::new(rate).expect("rate is positive");
    let spiked = Exp::new(rate * SPIKE).expect("rate is positive");
    let mut t = 0.0;
    let mut out = Vec::new();
    loop {
        let in_spike = spike
            .as_ref()
            .is_some_and(|w| w.contains(&Duration::from_secs_f64(t)));
        t += if in_spike {
            spiked.sample(&mut rng)
        } else {
            gaps.sample(&mut rng)
        };
        let at = Duration::from_secs_f64(t);
        if at >= duration {
            return out;
        }
        let bad =
            all_bad.as_ref().is_some_and(|w| w.contains(&at)) || rng.gen_bool(BAD_REQUEST_SHARE);
        let currency = if bad {
            "XAU"
        } else {
            CURRENCIES[rng.gen_range(0..CURRENCIES.len())].0
        };
        out.push(Arrival { at, currency });
    }
}

/// The one-second window, ending a second before the outage, in which every request is bad:
/// it shows that 4xx answers never open the circuit. None when the outage starts too early.
pub fn bad_burst(outage: &Range<Duration>) -> Option<Range<Duration>> {
    let end = outage.start.checked_sub(Duration::from_secs(1))?;
    let start = end.checked_sub(Duration::from_secs(1))?;
    (start >= Duration::from_secs(1)).then_some(start..end)
}

/// How many arrivals fall in each second.
pub fn per_second(arrivals: &[Arrival], seconds: usize) -> Vec<u32> {
    let mut out = vec![0; seconds];
    for a in arrivals {
        if let Some(c) = out.get_mut(a.at.as_secs() as usize) {
            *c += 1;
        }
    }
    out
}

/// Which client method a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// `quote`, behind the circuit breaker.
    Breaker,
    /// `quote_retry_only`: retry (and its time limiter) alone, no breaker.
    None,
}

/// Sends every arrival on time, each as its own task, and records how it ended. Returns when
/// every call has finished.
pub async fn run(
    arrivals: Arc<Vec<Arrival>>,
    client: PaymentClient,
    protection: Protection,
    epoch: Epoch,
    recorder: Arc<Recorder>,
) {
    let mut calls = JoinSet::new();
    for a in arrivals.iter() {
        tokio::time::sleep_until(epoch.at(a.at).into()).await;
        let (client, recorder, start) = (client.clone(), recorder.clone(), a.at);
        let currency = a.currency.to_string();
        let id = recorder.next_id();
        calls.spawn(async move {
            let sent = Instant::now();
            // Every attempt of this call carries its id to the provider.
            let result = CALL_ID
                .scope(id, async {
                    match protection {
                        Protection::Breaker => client.quote(currency).await,
                        Protection::None => client.quote_retry_only(currency).await,
                    }
                })
                .await;
            let outcome = match result {
                Ok(q) if q.served == Served::Live => Outcome::Live,
                // Shed by the bulkhead or the rate limiter: it never reached the provider
                // either.
                Ok(q) => Outcome::Stale {
                    short_circuited: q.served
                        == (Served::Stale {
                            short_circuited: true,
                        })
                        || q.served == Served::Shed,
                },
                Err(e) if e.is_client_error() => Outcome::ClientError,
                Err(e) => Outcome::Failed {
                    short_circuited: matches!(e, QuoteError::ShortCircuited | QuoteError::Shed(_)),
                },
            };
            recorder.record(CallRecord {
                id,
                start,
                latency: sent.elapsed(),
                outcome,
            });
        });
    }
    while calls.join_next().await.is_some() {}
}
