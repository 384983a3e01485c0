//! The return type of a protected fn.

use core::marker::PhantomData;

/// The return type of a protected fn: a `Result`, whose `Err` a layer records as a failure.
///
/// Every later step of an expansion names its types through this trait (`R::Ok`,
/// `R::Outcome<..>`), so a fn that returns something else gets this one error and nothing
/// after it.
#[diagnostic::on_unimplemented(
    message = "a protected fn must return a `Result`, not `{Self}`",
    label = "write `Result<T, YourError>` here",
    note = "the attribute records `Err` as a failure and `Ok` as a success"
)]
pub trait ProtectedOutput: Sized {
    /// `T` of `Result<T, E>`.
    type Ok;
    /// `E` of `Result<T, E>`.
    type Err;
    /// `Result<T, X>`: the outcome of a layer, with the layer's error `X` (e.g.
    /// `CallError<E>`).
    type Outcome<X>;
    /// The value as a plain `Result`.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
    /// A layer's result as its outcome type.
    fn outcome<X>(result: Result<Self::Ok, X>) -> Self::Outcome<X>;
    /// [`Checked<Self>`], as a projection: after a failed check its type is an error, which
    /// silences every later step that takes it.
    type Checked: Witness<Output = Self>;
    /// The witness that `Self` is a `Result`. The expansion calls it as
    /// `<ReturnType as ProtectedOutput>::checked()`, spanned on the fn's return type.
    fn checked() -> Self::Checked;
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

/// What a [`Checked`] proves: its `Output` is a protected fn's return type.
pub trait Witness {
    /// The fn's return type.
    type Output: ProtectedOutput;
}

impl<R: ProtectedOutput> Witness for Checked<R> {
    type Output = R;
}

#[diagnostic::do_not_recommend]
impl<T, E> ProtectedOutput for Result<T, E> {
    type Ok = T;
    type Err = E;
    type Outcome<X> = Result<T, X>;
    #[inline(always)]
    fn into_result(self) -> Result<T, E> {
        self
    }
    #[inline(always)]
    fn outcome<X>(result: Result<T, X>) -> Result<T, X> {
        result
    }
    type Checked = Checked<Self>;
    #[inline(always)]
    fn checked() -> Checked<Self> {
        Checked(PhantomData)
    }
}
