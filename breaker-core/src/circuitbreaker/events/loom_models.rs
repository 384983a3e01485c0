//! The event queue's hand-off ([`Delivery`], issue 23): operations append under a stand-in
//! for the state lock, and whoever finds nobody delivering delivers, with loom's mutex under
//! the queue so that every interleaving of the appends, the claims and the deliverer's stop
//! is explored.
use super::*;
use crate::sync::loom_model as model;
use loom::thread;

/// The state lock and what it ordered: the events' ids in production order.
type Produced = crate::sync::Mutex<Vec<u64>>;

/// Event `id`, told apart by its payload.
fn event(id: u64) -> EventKind {
    EventKind::Success {
        elapsed: Duration::from_nanos(id),
    }
}

fn id_of(kind: &EventKind) -> u64 {
    match kind {
        EventKind::Success { elapsed } => elapsed.as_nanos() as u64,
        other => panic!("not a model event: {other:?}"),
    }
}

/// One operation as the breaker makes it: under the state lock, produce `ids` and append
/// them; after it, deliver if this operation claimed the queue. Returns whether it did.
fn operation(
    delivery: &Delivery,
    produced: &Produced,
    delivered: &crate::sync::Mutex<Vec<u64>>,
    ids: &[u64],
) -> bool {
    let claim = {
        let mut p = crate::sync::lock(produced);
        let mut sink = EventSink::default();
        for &id in ids {
            p.push(id);
            sink.push(event(id));
        }
        delivery.append(&sink, 0)
    };
    let claimed = claim.is_some();
    if let Some(claim) = claim {
        claim.deliver(|kind, _| crate::sync::lock(delivered).push(id_of(&kind)));
    }
    claimed
}

/// Two threads: one makes an operation of two events, the other two operations of one
/// event each (so a deliverer's stop races the next append). Whatever the interleaving,
/// nobody waits for the other's delivery (loom reports a deadlock otherwise), every event
/// is delivered exactly once, in production order, and the queue ends empty with nobody
/// delivering.
#[test]
fn loom_every_event_is_delivered_once_in_order_and_nobody_waits() {
    model(|| {
        let delivery = crate::sync::Arc::new(Delivery::default());
        let produced = crate::sync::Arc::new(Produced::default());
        let delivered = crate::sync::Arc::new(crate::sync::Mutex::new(Vec::new()));
        let t = {
            let (delivery, produced, delivered) =
                (delivery.clone(), produced.clone(), delivered.clone());
            thread::spawn(move || {
                operation(&delivery, &produced, &delivered, &[1, 2]);
            })
        };
        operation(&delivery, &produced, &delivered, &[3]);
        operation(&delivery, &produced, &delivered, &[4]);
        t.join().unwrap();
        let produced = crate::sync::lock(&produced).clone();
        let delivered = crate::sync::lock(&delivered).clone();
        assert_eq!(produced.len(), 4);
        assert_eq!(delivered, produced, "each event once, in production order");
        let q = delivery.lock();
        assert!(
            q.pending.is_empty() && !q.busy,
            "nothing left, nobody delivering"
        );
    });
}

/// A subscriber that calls back into the breaker: the deliverer's callback makes an
/// operation of its own, which finds the queue claimed and returns; the deliverer then
/// delivers that operation's event after the one that caused it.
#[test]
fn loom_a_callback_s_own_events_follow_it() {
    model(|| {
        let delivery = Delivery::default();
        let produced = Produced::default();
        let delivered = crate::sync::Mutex::new(Vec::new());
        let claim = {
            let mut p = crate::sync::lock(&produced);
            p.push(1);
            let mut sink = EventSink::default();
            sink.push(event(1));
            delivery.append(&sink, 0)
        };
        let claim = claim.expect("nobody else delivers");
        let mut reentered = None;
        claim.deliver(|kind, _| {
            crate::sync::lock(&delivered).push(id_of(&kind));
            if id_of(&kind) == 1 {
                reentered = Some(operation(&delivery, &produced, &delivered, &[2]));
            }
        });
        assert_eq!(
            reentered,
            Some(false),
            "the callback's operation did not deliver"
        );
        assert_eq!(*crate::sync::lock(&delivered), [1, 2]);
    });
}
