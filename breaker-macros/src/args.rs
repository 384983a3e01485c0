//! Parsing of the attribute's arguments: `name = "..."`, `fallback = "..."`, `registry = expr`.
//!
//! Every error is spanned on the exact token that is wrong and says what to write instead.

use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Lit, LitStr, Path, Token};

use crate::diag::suggest;

/// The arguments the attribute understands, in the order the docs list them.
const KNOWN: &[&str] = &["name", "fallback", "registry"];

/// Spellings users bring from Resilience4j / Spring, mapped to ours.
const ALIASES: &[(&str, &str)] = &[
    ("fallbackMethod", "fallback"),
    ("fallback_method", "fallback"),
    ("fallbackmethod", "fallback"),
    ("fallback_fn", "fallback"),
    ("instance", "name"),
    ("breaker", "name"),
    ("value", "name"),
];

/// The parsed arguments of one `#[circuit_breaker(...)]`.
pub struct Args {
    /// The breaker's name, as written (already checked non-empty).
    pub name: LitStr,
    /// The fallback: the string literal (for spans) and the path it contains.
    pub fallback: Option<Fallback>,
    /// A registry expression other than the process-global one.
    pub registry: Option<Expr>,
}

/// `fallback = "path"`.
pub struct Fallback {
    /// The literal as written; errors about the fallback are spanned on it.
    pub lit: LitStr,
    /// The path inside the literal, with every token spanned on the literal.
    pub path: Path,
}

impl Fallback {
    /// The span of the `"..."` literal.
    pub fn span(&self) -> Span {
        self.lit.span()
    }
}

/// One `key = value` (or a bare literal, which we reject with a hint).
enum RawArg {
    KeyValue { key: Ident, value: Expr },
    Bare(Expr),
}

impl Parse for RawArg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(Ident) && input.peek2(Token![=]) {
            let key: Ident = input.parse()?;
            let _eq: Token![=] = input.parse()?;
            if input.is_empty() || input.peek(Token![,]) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{key} =` needs a value: write `{key} = \"...\"`"),
                ));
            }
            let value: Expr = input.parse()?;
            Ok(RawArg::KeyValue { key, value })
        } else {
            Ok(RawArg::Bare(input.parse()?))
        }
    }
}

impl Args {
    /// Parses the attribute's token stream. `attr_span` is where a missing `name` is reported.
    pub fn parse(tokens: TokenStream, attr_span: Span) -> syn::Result<Self> {
        let raw =
            syn::parse::Parser::parse2(Punctuated::<RawArg, Token![,]>::parse_terminated, tokens)
                .map_err(|e| {
                syn::Error::new(
                    e.span(),
                    format!(
                        "{e}; expected `name = \"...\"`, optionally followed by \
                     `fallback = \"...\"` and `registry = path::TO::REGISTRY`"
                    ),
                )
            })?;

        let mut name: Option<LitStr> = None;
        let mut fallback: Option<Fallback> = None;
        let mut registry: Option<Expr> = None;

        for arg in raw {
            let (key, value) = match arg {
                RawArg::KeyValue { key, value } => (key, value),
                RawArg::Bare(expr) => return Err(bare_argument(&expr)),
            };
            let key_str = key.to_string();
            let already = match key_str.as_str() {
                "name" => name.is_some(),
                "fallback" => fallback.is_some(),
                "registry" => registry.is_some(),
                _ => return Err(unknown_argument(&key)),
            };
            if already {
                return Err(syn::Error::new(
                    key.span(),
                    format!("duplicate `{key_str}` argument: give `{key_str}` only once"),
                ));
            }
            match key_str.as_str() {
                "name" => name = Some(parse_name(value)?),
                "fallback" => fallback = Some(parse_fallback(value)?),
                _ => registry = Some(value),
            }
        }

        let name = name.ok_or_else(|| {
            syn::Error::new(
                attr_span,
                "missing `name`: every circuit breaker needs one, e.g. \
                 `#[circuit_breaker(name = \"backendA\")]` (the key under \
                 `resilience4j.circuitbreaker.instances` in application.yml)",
            )
        })?;
        Ok(Args {
            name,
            fallback,
            registry,
        })
    }
}

/// Extracts a string literal from `value`, or explains how to write one.
fn string_literal(key: &str, value: Expr, example: &str) -> syn::Result<LitStr> {
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s),
        Expr::Path(p) if p.path.get_ident().is_some() => {
            let ident = p
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            Err(syn::Error::new_spanned(
                p,
                format!("`{key}` must be a string literal: write `{key} = \"{ident}\"`"),
            ))
        }
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` must be a string literal: write `{key} = \"{example}\"`"),
        )),
    }
}

fn parse_name(value: Expr) -> syn::Result<LitStr> {
    let lit = string_literal("name", value, "backendA")?;
    let text = lit.value();
    if text.trim().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            "`name` must not be empty: write the breaker's name, e.g. `name = \"backendA\"`",
        ));
    }
    if text.trim() != text {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`name` has leading or trailing whitespace: write `name = \"{}\"`",
                text.trim()
            ),
        ));
    }
    Ok(lit)
}

fn parse_fallback(value: Expr) -> syn::Result<Fallback> {
    let lit = string_literal("fallback", value, "fallback_fn")?;
    let text = lit.value();
    if text.trim().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            "`fallback` must not be empty: name an async fn in the same scope, e.g. \
             `fallback = \"cached_rate\"`, or remove the argument",
        ));
    }
    let path: Path = lit.parse().map_err(|_| {
        // `"cached()"`, `"self.cached"`, `"Foo::cached(x)"`: suggest the path part.
        let guess: String = text
            .trim()
            .trim_start_matches("self.")
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let example = match syn::parse_str::<Path>(&guess) {
            Ok(_) if !guess.is_empty() => format!("`fallback = \"{guess}\"`"),
            _ => "`fallback = \"cached_rate\"` or `fallback = \"Self::cached_rate\"`".to_string(),
        };
        syn::Error::new(
            lit.span(),
            format!(
                "`fallback = \"{text}\"` is not a fn name or path: write just the name of an \
                 async fn or method in the same scope, e.g. {example}"
            ),
        )
    })?;
    Ok(Fallback { lit, path })
}

fn unknown_argument(key: &Ident) -> syn::Error {
    let key_str = key.to_string();
    let hint = ALIASES
        .iter()
        .find(|(alias, _)| *alias == key_str)
        .map(|(_, ours)| *ours)
        .or_else(|| suggest(&key_str, KNOWN));
    let message = match hint {
        Some(ours) => format!(
            "unknown argument `{key_str}`: write `{ours} = ...` instead \
             (known arguments: `name`, `fallback`, `registry`)"
        ),
        None if key_str == "configuration" => "unknown argument `configuration`: the config \
             key is always `name`; configure `resilience4j.circuitbreaker.instances.<name>` \
             (known arguments: `name`, `fallback`, `registry`)"
            .to_string(),
        None => format!(
            "unknown argument `{key_str}`: known arguments are `name = \"...\"`, \
             `fallback = \"...\"` and `registry = path::TO::REGISTRY`"
        ),
    };
    syn::Error::new(key.span(), message)
}

fn bare_argument(expr: &Expr) -> syn::Error {
    if let Expr::Lit(syn::ExprLit {
        lit: Lit::Str(s), ..
    }) = expr
    {
        return syn::Error::new(
            s.span(),
            format!(
                "arguments are named: write `name = \"{}\"`",
                s.value().escape_default()
            ),
        );
    }
    syn::Error::new_spanned(
        expr,
        "expected `key = value`: write `name = \"...\"`, optionally followed by \
         `fallback = \"...\"` and `registry = path::TO::REGISTRY`",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse(tokens: TokenStream) -> syn::Result<Args> {
        Args::parse(tokens, Span::call_site())
    }

    fn err(tokens: TokenStream) -> String {
        match parse(tokens) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn parses_all_arguments() {
        let args = parse(quote!(
            name = "a",
            fallback = "Self::fb",
            registry = crate::REG
        ))
        .unwrap();
        assert_eq!(args.name.value(), "a");
        let fb = args.fallback.unwrap();
        assert_eq!(fb.path.segments.len(), 2);
        assert!(args.registry.is_some());
    }

    #[test]
    fn trailing_comma_is_fine() {
        assert!(parse(quote!(name = "a",)).is_ok());
    }

    #[test]
    fn missing_name() {
        assert!(err(quote!(fallback = "x")).contains("missing `name`"));
        assert!(err(quote!()).contains("missing `name`"));
    }

    #[test]
    fn empty_and_blank_name() {
        assert!(err(quote!(name = "")).contains("must not be empty"));
        assert!(err(quote!(name = "  ")).contains("must not be empty"));
        assert!(err(quote!(name = " a")).contains("write `name = \"a\"`"));
    }

    #[test]
    fn name_not_a_string() {
        assert!(err(quote!(name = backendA)).contains("write `name = \"backendA\"`"));
        assert!(err(quote!(name = 3)).contains("must be a string literal"));
    }

    #[test]
    fn unknown_with_suggestions() {
        assert!(err(quote!(name = "a", fallbackMethod = "f")).contains("write `fallback = ...`"));
        assert!(err(quote!(nmae = "a")).contains("write `name = ...`"));
        assert!(err(quote!(name = "a", registy = R)).contains("write `registry = ...`"));
        assert!(err(quote!(name = "a", zzzzzzzz = 1)).contains("known arguments are"));
    }

    #[test]
    fn duplicate() {
        assert!(err(quote!(name = "a", name = "b")).contains("duplicate `name`"));
    }

    #[test]
    fn bare_literal() {
        assert!(err(quote!("backendA")).contains("write `name = \"backendA\"`"));
    }

    #[test]
    fn fallback_not_a_path() {
        assert!(err(quote!(name = "a", fallback = "not a path")).contains("is not a fn name"));
        assert!(err(quote!(name = "a", fallback = "cached()")).contains("`fallback = \"cached\"`"));
        assert!(err(quote!(name = "a", fallback = "self.fb(x)")).contains("`fallback = \"fb\"`"));
        assert!(err(quote!(name = "a", fallback = "")).contains("must not be empty"));
    }

    #[test]
    fn missing_value() {
        assert!(err(quote!(name =)).contains("needs a value"));
    }
}
