//! A quick probe of single hot-path costs (best of 7 batches, ns per call), for profiling
//! between runs of the ratio bench: `cargo run --release -p breaker-bench --example probe
//! [name filter]`. Not a result: ratios count only from `--bench ratios`.

use breaker_bench::*;
use resilience4rs::{Clock, SystemClock};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
fn t(name: &str, n: u64, mut f: impl FnMut()) {
    let only = std::env::args().nth(1);
    if only.as_deref().is_some_and(|o| !name.contains(o)) {
        return;
    }
    let mut best = f64::MAX;
    for _ in 0..7 {
        let s = Instant::now();
        for _ in 0..n {
            f()
        }
        best = best.min(s.elapsed().as_nanos() as f64 / n as f64);
    }
    println!("{name}: {best:.2} ns");
}
fn main() {
    let cb = ours_default();
    let fs = failsafe_consecutive();
    let n = 2_000_000;
    let w = AtomicU64::new(0);
    let clock = SystemClock::new();
    let time = ours_time_based();
    let half = {
        let config = resilience4rs::CircuitBreakerConfig::builder()
            .permitted_number_of_calls_in_half_open_state(1000)
            .minimum_number_of_calls(1000)
            .wait_duration_in_open_state(std::time::Duration::from_secs(3600))
            .build()
            .unwrap();
        let cb = resilience4rs::CircuitBreaker::new("h", config);
        cb.transition_to_open_state().unwrap();
        cb.transition_to_half_open_state().unwrap();
        cb
    };
    let mut i = 0;
    let open = ours_open();
    let state = AtomicU64::new(1);
    let np = AtomicU64::new(0);
    let retry = resilience4rs::retry::Retry::new("r", resilience4rs::retry::RetryConfig::default());
    let count = AtomicU64::new(0);
    println!(
        "retry future: {} bytes",
        std::mem::size_of_val(&retry.call(|| std::future::ready(Ok::<u64, String>(1))))
    );
    let mr = mimic::R {
        flag: std::sync::atomic::AtomicBool::new(true),
        count: AtomicU64::new(0),
    };
    for _ in 0..2 {
        t("m-fa", n, || {
            black_box(
                poll_once(mr.call_fa(|| std::future::ready(Ok::<u64, String>(black_box(1)))))
                    .is_ok(),
            );
        });
        t("m-async", n, || {
            black_box(
                poll_once(mr.call_async(|| std::future::ready(Ok::<u64, String>(black_box(1)))))
                    .is_ok(),
            );
        });
        t("m-manual", n, || {
            black_box(
                poll_once(mr.call_manual(|| std::future::ready(Ok::<u64, String>(black_box(1)))))
                    .is_ok(),
            );
        });
        t("retry", n, || {
            black_box(
                poll_once(retry.call(|| std::future::ready(Ok::<u64, String>(black_box(1)))))
                    .is_ok(),
            );
        });
        t("plain", n, || {
            black_box(
                poll_once(plain(|| {
                    std::future::ready(Ok::<u64, String>(black_box(1)))
                }))
                .is_ok(),
            );
        });
        t("counted", n, || {
            black_box(
                poll_once(plain(|| {
                    std::future::ready(Ok::<u64, String>(black_box(1)))
                }))
                .is_ok(),
            );
            count.fetch_add(1, Ordering::Relaxed);
        });
        t("open", n, || {
            black_box(open.try_acquire_permission().is_err());
        });
        t("floor", n, || {
            let s = black_box(&state).load(Ordering::Acquire);
            let now = clock.recent_nanos();
            black_box(&np).fetch_add(1, Ordering::Relaxed);
            black_box(s.wrapping_add(now));
        });
        t("time", n, || {
            time.try_acquire_permission().unwrap().on_success();
        });
        t("half", n, || {
            half.try_acquire_permission().unwrap().on_success();
            i += 1;
            if i == 1000 {
                i = 0;
                half.transition_to_open_state().unwrap();
                half.transition_to_half_open_state().unwrap();
            }
        });
        t("permit+on_success", n, || {
            cb.try_acquire_permission().unwrap().on_success();
        });
        t("acquire+forget", n, || {
            std::mem::forget(black_box(cb.try_acquire_permission().unwrap()));
        });
        t("failsafe", n, || {
            let _ = black_box(failsafe::CircuitBreaker::call(&fs, || {
                Ok::<u64, u64>(black_box(1))
            }));
        });
        t("cas", n, || {
            let v = black_box(&w).load(Ordering::Acquire);
            let _ =
                black_box(&w).compare_exchange_weak(v, v + 2, Ordering::AcqRel, Ordering::Acquire);
        });
        t("2 clock reads", n, || {
            black_box(clock.recent_nanos());
            black_box(clock.recent_nanos());
        });
    }
}

async fn plain<T, E, F, Fut>(mut attempt: F) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let mut n = 0;
    loop {
        n += 1;
        match attempt().await {
            Ok(v) => return Ok(v),
            Err(e) if n >= 3 => return Err(e),
            Err(_) => {}
        }
    }
}

mod mimic {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::task::{Context, Poll};

    pub struct R {
        pub flag: AtomicBool,
        pub count: AtomicU64,
    }
    #[derive(Debug)]
    pub enum RErr<E> {
        Inner(E),
        #[allow(dead_code)]
        Other(u64, u64),
    }
    impl R {
        pub async fn call_async<F, Fut, T, E>(&self, mut attempt: F) -> Result<T, RErr<E>>
        where
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<T, E>>,
        {
            let outcome = attempt().await;
            if outcome.is_ok() && self.flag.load(Ordering::Acquire) {
                self.count.fetch_add(1, Ordering::Relaxed);
                return outcome.map_err(RErr::Inner);
            }
            self.slow(attempt, outcome).await
        }
        #[inline(never)]
        async fn slow<F, Fut, T, E>(
            &self,
            mut attempt: F,
            mut o: Result<T, E>,
        ) -> Result<T, RErr<E>>
        where
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<T, E>>,
        {
            for _ in 0..2 {
                if o.is_ok() {
                    break;
                }
                o = attempt().await;
            }
            o.map_err(RErr::Inner)
        }
        pub fn call_manual<F, Fut, T, E>(&self, attempt: F) -> Manual<'_, F, Fut>
        where
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<T, E>>,
        {
            Manual {
                r: self,
                attempt,
                fut: None,
            }
        }
    }
    pub struct Manual<'a, F, Fut> {
        r: &'a R,
        attempt: F,
        fut: Option<Fut>,
    }
    impl<F, Fut, T, E> Future for Manual<'_, F, Fut>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        type Output = Result<T, RErr<E>>;
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            // Probe only: never moved after the first poll.
            let this = unsafe { self.get_unchecked_mut() };
            if this.fut.is_none() {
                this.fut = Some((this.attempt)());
            }
            let fut = unsafe { Pin::new_unchecked(this.fut.as_mut().unwrap()) };
            match fut.poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(o) => {
                    this.fut = None;
                    if o.is_ok() && this.r.flag.load(Ordering::Acquire) {
                        this.r.count.fetch_add(1, Ordering::Relaxed);
                    }
                    Poll::Ready(o.map_err(RErr::Inner))
                }
            }
        }
    }
}

mod mimic2 {
    use super::mimic::{RErr, R};
    use pin_project_lite::pin_project;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::Ordering;
    use std::task::{ready, Context, Poll};

    pin_project! {
        pub struct FA<F, Fut, D, Rm, Rest> {
            attempt: Option<F>,
            first_done: D,
            make_rest: Option<Rm>,
            #[pin]
            first: Option<Fut>,
            #[pin]
            rest: Option<Rest>,
        }
    }
    impl<F, Fut, D, Rm, Rest, O, Out> Future for FA<F, Fut, D, Rm, Rest>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = O>,
        D: FnMut(O) -> Result<Out, O>,
        Rm: FnOnce(F, O) -> Rest,
        Rest: Future<Output = Out>,
    {
        type Output = Out;
        #[inline(always)]
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Out> {
            let mut this = self.project();
            if let Some(attempt) = this.attempt.as_mut() {
                if this.first.is_none() {
                    this.first.set(Some(attempt()));
                }
                let outcome = ready!(this.first.as_mut().as_pin_mut().unwrap().poll(cx));
                this.first.set(None);
                match (this.first_done)(outcome) {
                    Ok(out) => {
                        *this.attempt = None;
                        return Poll::Ready(out);
                    }
                    Err(o) => {
                        let a = this.attempt.take().unwrap();
                        let mk = this.make_rest.take().unwrap();
                        this.rest.set(Some(mk(a, o)));
                    }
                }
            }
            this.rest
                .as_pin_mut()
                .expect("polled after completion")
                .poll(cx)
        }
    }
    impl R {
        pub fn call_fa<F, Fut, T, E>(
            &self,
            attempt: F,
        ) -> impl Future<Output = Result<T, RErr<E>>> + use<'_, F, Fut, T, E>
        where
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<T, E>>,
        {
            FA {
                attempt: Some(attempt),
                first_done: move |o: Result<T, E>| {
                    if o.is_ok() && self.flag.load(Ordering::Acquire) {
                        self.count.fetch_add(1, Ordering::Relaxed);
                        Ok(o.map_err(RErr::Inner))
                    } else {
                        Err(o)
                    }
                },
                make_rest: Some(move |a, o| self.slow2(a, o)),
                first: None,
                rest: None,
            }
        }
        #[inline(never)]
        async fn slow2<F, Fut, T, E>(
            &self,
            mut attempt: F,
            mut o: Result<T, E>,
        ) -> Result<T, RErr<E>>
        where
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<T, E>>,
        {
            for _ in 0..2 {
                if o.is_ok() {
                    break;
                }
                o = attempt().await;
            }
            o.map_err(RErr::Inner)
        }
    }
}
