//! The shared part of the fallback check, used by every attribute's expansion.
//!
//! A fallback is named by path in the attribute, so only the type system can check it. The
//! expansion resolves the path to a fn item, then:
//!
//! 1. [`FnSig`] reads the fn's parameter list as a tuple (`Args`) and its return type (`Out`)
//!    for any arity, without requiring a particular signature (a required signature would
//!    make rustc report an arity or argument mismatch of its own, with fix-its spanned on
//!    the attribute);
//! 2. a trait local to the expansion compares `(Takes<Args>, Passed<Given>)`, both fully
//!    known, where `Given` is the tuple of values the expansion passes; its
//!    `#[diagnostic::on_unimplemented]` message spells out the signature the fallback must
//!    have;
//! 3. [`Probe`] tells an `async` fallback (its call gives a [`Future`]) from one that is
//!    not, by autoref specialisation, into [`Async`] or [`NotAsync`]; a local trait
//!    implemented for [`Async`] only reports the second;
//! 4. a local trait compares the future's output with the protected fn's return type.
//!
//! Each step's result type is an associated type of the previous step's trait, so after the
//! first failed step every later one sees an error type and stays silent: one mistake, one
//! error.

use core::future::Future;
use core::marker::PhantomData;

/// A fn (item, pointer or closure) of some arity: its parameters as a tuple and its return
/// type. `M` is the parameter tuple, inferred from the fn, so any arity up to 16 matches.
pub trait FnSig<M> {
    /// The parameter types, as a tuple.
    type Args;
    /// The return type.
    type Out;
    /// Calls the fn with a tuple of arguments.
    fn call_with(self, args: Self::Args) -> Self::Out;
}

macro_rules! fn_sig {
    ($($arg:ident)*) => {
        impl<Func, Out, $($arg,)*> FnSig<($($arg,)*)> for Func
        where
            Func: FnOnce($($arg),*) -> Out,
        {
            type Args = ($($arg,)*);
            type Out = Out;
            #[inline(always)]
            #[allow(non_snake_case)]
            fn call_with(self, ($($arg,)*): ($($arg,)*)) -> Out {
                self($($arg),*)
            }
        }
    };
}

fn_sig!();
fn_sig!(A1);
fn_sig!(A1 A2);
fn_sig!(A1 A2 A3);
fn_sig!(A1 A2 A3 A4);
fn_sig!(A1 A2 A3 A4 A5);
fn_sig!(A1 A2 A3 A4 A5 A6);
fn_sig!(A1 A2 A3 A4 A5 A6 A7);
fn_sig!(A1 A2 A3 A4 A5 A6 A7 A8);
fn_sig!(A1 A2 A3 A4 A5 A6 A7 A8 A9);
fn_sig!(A1 A2 A3 A4 A5 A6 A7 A8 A9 A10);
fn_sig!(A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11);
fn_sig!(A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12);
fn_sig!(A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12 A13);
fn_sig!(A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12 A13 A14);
fn_sig!(A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12 A13 A14 A15);
fn_sig!(A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12 A13 A14 A15 A16);

/// The parameter types of the fallback, as a tuple (a marker: no value is held).
pub struct Takes<Args>(PhantomData<fn() -> Args>);

impl<Args> Takes<Args> {
    /// The marker.
    #[inline(always)]
    pub fn new() -> Self {
        Takes(PhantomData)
    }
}

impl<Args> Default for Takes<Args> {
    fn default() -> Self {
        Self::new()
    }
}

/// The types of the values the expansion passes to the fallback, as a tuple (a marker).
pub struct Passed<Given>(PhantomData<fn() -> Given>);

/// The marker for `given`'s type.
#[inline(always)]
pub fn passed<Given>(_given: &Given) -> Passed<Given> {
    Passed(PhantomData)
}

/// A reference to what calling the fallback gave, for [`ProbeAsync`] / [`ProbeOther`].
pub struct Probe<'a, T>(pub &'a T);

/// Chosen for `(&&Probe(&value))` when the value is a future (autoref specialisation: this
/// impl is on `&Probe`, so method lookup finds it one autoref earlier than [`ProbeOther`]).
pub trait ProbeAsync {
    /// The tag that wraps the future.
    fn fallback_kind(&self) -> AsyncTag;
}

impl<F: Future> ProbeAsync for &Probe<'_, F> {
    #[inline(always)]
    fn fallback_kind(&self) -> AsyncTag {
        AsyncTag
    }
}

/// Chosen for `(&&Probe(&value))` when the value is not a future.
pub trait ProbeOther {
    /// The tag that wraps the value.
    fn fallback_kind(&self) -> OtherTag;
}

impl<T> ProbeOther for Probe<'_, T> {
    #[inline(always)]
    fn fallback_kind(&self) -> OtherTag {
        OtherTag
    }
}

/// The fallback returned a future.
pub struct AsyncTag;

impl AsyncTag {
    /// Wraps the future.
    #[inline(always)]
    pub fn wrap<F: Future>(self, future: F) -> Async<F> {
        Async(future)
    }
}

/// The fallback returned something else.
pub struct OtherTag;

impl OtherTag {
    /// Wraps the value.
    #[inline(always)]
    pub fn wrap<T>(self, value: T) -> NotAsync<T> {
        NotAsync(value)
    }
}

/// The future an `async` fallback returned.
pub struct Async<F>(pub F);

/// What a fallback that is not `async` returned.
pub struct NotAsync<T>(pub T);

/// The receiver slot of a method fallback when the protected method owns its receiver
/// (`self`, `self: Arc<Self>`, ...): the expansion keeps a clone here, and the fallback takes
/// it by value, by reference or through the smart pointer.
pub type Slot<'a, R> = &'a mut Option<R>;

/// Takes the receiver out of its slot.
///
/// # Panics
/// Never: the expansion fills the slot just before and takes it once.
#[inline(always)]
pub fn take<R>(slot: Slot<'_, R>) -> R {
    slot.take().expect("the fallback's receiver is taken once")
}

/// Borrows the receiver in its slot.
///
/// # Panics
/// Never: the expansion fills the slot just before.
#[inline(always)]
pub fn borrow<'a, R>(slot: Slot<'a, R>) -> &'a mut R {
    slot.as_mut()
        .expect("the fallback's receiver is in its slot")
}
