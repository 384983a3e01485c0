//! Where the facade crate is: the path every generated item is named through.
//!
//! `crate = path` wins when given (as `#[tokio::main(crate = "...")]` and
//! `#[serde(crate = "...")]`): for a crate that re-exports `resilience4rs` and whose users do
//! not depend on it directly. Otherwise the user's Cargo.toml says under which name the
//! `resilience4rs` package is a dependency (`proc-macro-crate`), so a renamed dependency
//! (`r4 = { package = "resilience4rs", ... }`) works.

use proc_macro2::{Span, TokenStream};
use proc_macro_crate::{crate_name, Error, FoundCrate};
use quote::{quote, ToTokens};

/// The facade's package name.
pub const FACADE: &str = "resilience4rs";

/// The path to the facade crate, as tokens (`::resilience4rs`, `::r4`, the `crate = ...`
/// path), or the error to report when the facade is not a dependency.
pub fn facade(given: Option<&syn::Path>) -> syn::Result<TokenStream> {
    if let Some(path) = given {
        return Ok(path.to_token_stream());
    }
    match crate_name(FACADE) {
        // The facade's own tests, examples and doc tests: the library is a dependency under
        // its own name (the library itself declares `extern crate self as resilience4rs`).
        Ok(FoundCrate::Itself) => Ok(quote!(::resilience4rs)),
        Ok(FoundCrate::Name(name)) => {
            let ident = syn::Ident::new(&name, Span::call_site());
            Ok(quote!(::#ident))
        }
        Err(Error::CrateNotFound { path, .. }) => Err(syn::Error::new(
            Span::call_site(),
            format!(
                "`{FACADE}` is not a dependency in {}: add it (`cargo add {FACADE}`), or, when \
                 a crate of yours re-exports it, name it with `crate = \"your_crate::{FACADE}\"`",
                path.display()
            ),
        )),
        // No Cargo.toml to read (a build system other than cargo): assume the plain name.
        Err(_) => Ok(quote!(::resilience4rs)),
    }
}
