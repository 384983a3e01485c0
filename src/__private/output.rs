//! The return type of a protected fn.

use core::marker::PhantomData;

/// The return type of a protected fn: a `Result`, whose `Err` a layer records as a failure.
///
/// The expansion calls `<ReturnType as ProtectedOutput>::checked()`, spanned on the fn's
/// return type, and every later step takes its types from the [`Witness`] it returns, so a
/// fn that returns something else gets this one error and nothing after it.
#[diagnostic::on_unimplemented(
    message = "a protected fn must return a `Result`, not `{Self}`",
    label = "write `Result<T, YourError>` here",
    note = "the attribute records `Err` as a failure and `Ok` as a success"
)]
pub trait ProtectedOutput: Sized {
    /// [`Checked<Self>`], as a projection: after a failed check its type is an error, which
    /// silences every later step that takes it.
    type Checked: Witness;
    /// The witness that `Self` is a `Result`.
    fn checked() -> Self::Checked;
}

#[diagnostic::do_not_recommend]
impl<T, E> ProtectedOutput for Result<T, E> {
    type Checked = Checked<Self>;
    #[inline(always)]
    fn checked() -> Checked<Self> {
        Checked(PhantomData)
    }
}

/// The proof that a protected fn's return type is a `Result`, handed to a layer's call.
pub struct Checked<R>(PhantomData<fn() -> R>);

impl<R> Checked<R> {
    /// The proof for a return type the expansion cannot name (it mentions `impl Trait`);
    /// the layer's bounds still require a `Result`.
    #[inline(always)]
    pub fn new() -> Self {
        Checked(PhantomData)
    }
}

impl<R> Default for Checked<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// What a [`Checked`] proves: the fn returns `Output`, which is `Result<Ok, Err>` (an alias
/// such as `io::Result<T>` included). A layer's call takes the protected future as
/// `Future<Output = W::Output>` and returns `W::Outcome<LayerError>`: projections of the
/// witness, so after a failed check they are errors and nothing more is reported.
pub trait Witness {
    /// The fn's return type, `Result<Ok, Err>`.
    type Output;
    /// `T` of `Result<T, E>`.
    type Ok;
    /// `E` of `Result<T, E>`.
    type Err;
    /// `Result<T, X>`: the outcome of a layer whose error is `X` (e.g. `CallError<E>`).
    type Outcome<X>;
    /// A layer's result as its outcome type.
    fn outcome<X>(result: Result<Self::Ok, X>) -> Self::Outcome<X>;
}

impl<T, E> Witness for Checked<Result<T, E>> {
    type Output = Result<T, E>;
    type Ok = T;
    type Err = E;
    type Outcome<X> = Result<T, X>;
    #[inline(always)]
    fn outcome<X>(result: Result<T, X>) -> Result<T, X> {
        result
    }
}
