//! Parsing of an attribute's arguments, shared by every attribute: `name = ...`,
//! `fallback = "..."`, `crate = "..."`, plus the keys an attribute adds (the breaker's
//! `registry = ...`), given by its [`Spec`].
//!
//! Parsing knows nothing of code generation: it yields [`Args`], and every error is spanned
//! on the exact token that is wrong and says what to write instead.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, LitStr, Path, Token};

use crate::diag::suggest;

/// What an attribute accepts, for parsing and for its messages.
pub struct Spec {
    /// The attribute's name, as written: `circuit_breaker`.
    pub attribute: &'static str,
    /// The keys this attribute adds to `name`, `fallback` and `crate`, with an example
    /// value each (for messages): `("registry", "path::TO::REGISTRY")`.
    pub extra_keys: &'static [(&'static str, &'static str)],
    /// Where a name's settings live in a Spring file: `resilience4j.circuitbreaker.instances`.
    pub config_section: &'static str,
    /// An example instance name: `backendA`.
    pub example_name: &'static str,
}

impl Spec {
    fn known(&self) -> Vec<&'static str> {
        let mut keys = vec!["name", "fallback", "crate"];
        keys.extend(self.extra_keys.iter().map(|(k, _)| *k));
        keys
    }

    fn known_list(&self) -> String {
        let mut parts = vec![
            "`name = \"...\"`".to_string(),
            "`fallback = \"...\"`".to_string(),
        ];
        parts.extend(
            self.extra_keys
                .iter()
                .map(|(key, example)| format!("`{key} = {example}`")),
        );
        parts.push("`crate = \"...\"`".to_string());
        let last = parts.pop().unwrap_or_default();
        format!("{} and {last}", parts.join(", "))
    }
}

/// Spellings users bring from Resilience4j / Spring, mapped to ours.
const ALIASES: &[(&str, &str)] = &[
    ("fallbackMethod", "fallback"),
    ("fallback_method", "fallback"),
    ("fallbackmethod", "fallback"),
    ("fallback_fn", "fallback"),
    ("instance", "name"),
    ("breaker", "name"),
    ("value", "name"),
    ("krate", "crate"),
];

/// The parsed arguments of one attribute.
pub struct Args {
    /// The instance's name.
    pub name: Name,
    /// The fallback, if any.
    pub fallback: Option<Fallback>,
    /// `crate = path`: where the facade is, instead of finding it in Cargo.toml.
    pub krate: Option<Path>,
    /// The attribute's own keys (`registry = ...`), in the order written.
    pub extra: Vec<(Ident, Expr)>,
}

impl Args {
    /// The value of the attribute's own key `key`, if given.
    pub fn extra(&self, key: &str) -> Option<&Expr> {
        self.extra.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// `name = ...`.
pub enum Name {
    /// A string literal (checked non-empty and without surrounding whitespace).
    Literal(LitStr),
    /// Any other expression giving a `&str`: a const (`name = BACKEND`, as Java's
    /// `@CircuitBreaker(name = BACKEND)`), `Self::NAME`, a `concat!`, ...
    Expr(Expr),
}

/// `fallback = "path"` (or `fallback = path`).
pub struct Fallback {
    /// The path of the fallback fn, every token spanned on the argument as written.
    pub path: Path,
    /// The argument as written (the string literal or the path), where errors go.
    pub span: Span,
    /// Whether the user wrote a single name (`"cached"`), which on a method means a method
    /// or associated fn of `Self`.
    pub unqualified: bool,
}

impl Fallback {
    /// The fallback as written, for messages: `cached`, `Self::cached`.
    pub fn display(&self) -> String {
        crate::pretty::tokens(quote::ToTokens::to_token_stream(&self.path))
    }

    /// The fn's own name (the path's last segment).
    pub fn fn_name(&self) -> String {
        self.path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default()
    }
}

/// One `key = value` (or a bare value, which we reject with a hint).
enum RawArg {
    KeyValue { key: Ident, value: Expr },
    Bare(Expr),
}

impl Parse for RawArg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if (input.peek(Ident) || input.peek(Token![crate])) && input.peek2(Token![=]) {
            let key = Ident::parse_any(input)?;
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
    /// Parses the attribute's tokens. `attr_span` is where a missing `name` is reported.
    pub fn parse(tokens: TokenStream, attr_span: Span, spec: &Spec) -> syn::Result<Self> {
        let raw =
            syn::parse::Parser::parse2(Punctuated::<RawArg, Token![,]>::parse_terminated, tokens)
                .map_err(|e| {
                // Our own messages (they quote what to write) stand alone; syn's get the
                // list of arguments.
                if e.to_string().starts_with('`') {
                    e
                } else {
                    syn::Error::new(e.span(), format!("{e}; expected {}", spec.known_list()))
                }
            })?;

        let mut name: Option<Name> = None;
        let mut fallback: Option<Fallback> = None;
        let mut krate: Option<Path> = None;
        let mut extra: Vec<(Ident, Expr)> = Vec::new();

        for arg in raw {
            let (key, value) = match arg {
                RawArg::KeyValue { key, value } => (key, value),
                RawArg::Bare(expr) => return Err(bare_argument(&expr, spec)),
            };
            let key_str = key.to_string();
            let known = spec.known();
            if !known.contains(&key_str.as_str()) {
                return Err(unknown_argument(&key, spec));
            }
            let already = match key_str.as_str() {
                "name" => name.is_some(),
                "fallback" => fallback.is_some(),
                "crate" => krate.is_some(),
                _ => extra.iter().any(|(k, _)| *k == key_str),
            };
            if already {
                return Err(syn::Error::new(
                    key.span(),
                    format!("duplicate `{key_str}` argument: give `{key_str}` only once"),
                ));
            }
            match key_str.as_str() {
                "name" => name = Some(parse_name(value, spec)?),
                "fallback" => fallback = Some(parse_fallback(value)?),
                "crate" => krate = Some(parse_crate(value)?),
                _ => extra.push((key, ungroup(value))),
            }
        }

        let name = name.ok_or_else(|| {
            syn::Error::new(
                attr_span,
                format!(
                    "missing `name`: every {what} needs one, e.g. `#[{attr}(name = \"{example}\")]` \
                     (the key under `{section}` in application.yml)",
                    what = spec.attribute.replace('_', " "),
                    attr = spec.attribute,
                    example = spec.example_name,
                    section = spec.config_section,
                ),
            )
        })?;
        Ok(Args {
            name,
            fallback,
            krate,
            extra,
        })
    }
}

/// Removes the invisible groups `macro_rules!` puts around an `$x:expr` or `$x:literal`
/// it forwards, and parentheses.
pub fn ungroup(expr: Expr) -> Expr {
    match expr {
        Expr::Group(g) => ungroup(*g.expr),
        Expr::Paren(p) => ungroup(*p.expr),
        other => other,
    }
}

fn parse_name(value: Expr, spec: &Spec) -> syn::Result<Name> {
    match ungroup(value) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => {
            let text = lit.value();
            if text.trim().is_empty() {
                return Err(syn::Error::new(
                    lit.span(),
                    format!(
                        "`name` must not be empty: write the {what}'s name, e.g. \
                         `name = \"{example}\"`",
                        what = spec.attribute.replace('_', " "),
                        example = spec.example_name
                    ),
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
            Ok(Name::Literal(lit))
        }
        Expr::Lit(other) => Err(syn::Error::new(
            other.span(),
            format!(
                "`name` must be a string: write `name = \"{}\"`",
                spec.example_name
            ),
        )),
        other => Ok(Name::Expr(other)),
    }
}

fn parse_fallback(value: Expr) -> syn::Result<Fallback> {
    match ungroup(value) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => fallback_from_literal(lit),
        Expr::Path(p) if p.qself.is_none() => Ok(Fallback {
            span: p.span(),
            unqualified: p.path.get_ident().is_some(),
            path: p.path,
        }),
        other => Err(syn::Error::new(
            other.span(),
            "`fallback` names an async fn or method in the same scope: write \
             `fallback = \"cached_rate\"` or `fallback = \"Self::cached_rate\"`",
        )),
    }
}

fn fallback_from_literal(lit: LitStr) -> syn::Result<Fallback> {
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
    Ok(Fallback {
        span: lit.span(),
        unqualified: path.get_ident().is_some(),
        path,
    })
}

fn parse_crate(value: Expr) -> syn::Result<Path> {
    match ungroup(value) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => lit.parse::<Path>().map_err(|_| {
            syn::Error::new(
                lit.span(),
                format!(
                    "`crate = \"{}\"` is not a path: write the path to the `resilience4rs` \
                     crate as your code names it, e.g. `crate = \"my_framework::resilience4rs\"`",
                    lit.value()
                ),
            )
        }),
        Expr::Path(p) if p.qself.is_none() => Ok(p.path),
        other => Err(syn::Error::new(
            other.span(),
            "`crate` is the path to the `resilience4rs` crate: write e.g. \
             `crate = \"my_framework::resilience4rs\"`",
        )),
    }
}

fn unknown_argument(key: &Ident, spec: &Spec) -> syn::Error {
    let key_str = key.to_string();
    let known = spec.known();
    let hint = ALIASES
        .iter()
        .find(|(alias, _)| *alias == key_str)
        .map(|(_, ours)| *ours)
        .filter(|ours| known.contains(ours))
        .or_else(|| suggest(&key_str, &known));
    let names = known
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let message = match hint {
        Some(ours) => format!(
            "unknown argument `{key_str}`: write `{ours} = ...` instead (known arguments: \
             {names})"
        ),
        None if key_str == "configuration" => format!(
            "unknown argument `configuration`: the config key is always `name`; configure \
             `{}.<name>` (known arguments: {names})",
            spec.config_section
        ),
        None => format!(
            "unknown argument `{key_str}`: known arguments are {}",
            spec.known_list()
        ),
    };
    syn::Error::new(key.span(), message)
}

fn bare_argument(expr: &Expr, spec: &Spec) -> syn::Error {
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
    syn::Error::new(
        expr.span(),
        format!("expected `key = value`: write {}", spec.known_list()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    const SPEC: Spec = Spec {
        attribute: "circuit_breaker",
        extra_keys: &[("registry", "path::TO::REGISTRY")],
        config_section: "resilience4j.circuitbreaker.instances",
        example_name: "backendA",
    };

    fn parse(tokens: TokenStream) -> syn::Result<Args> {
        Args::parse(tokens, Span::call_site(), &SPEC)
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
            registry = crate::REG,
            crate = "my::r4"
        ))
        .unwrap();
        assert!(matches!(&args.name, Name::Literal(l) if l.value() == "a"));
        let fb = args.fallback.as_ref().unwrap();
        assert_eq!(fb.path.segments.len(), 2);
        assert!(!fb.unqualified);
        assert_eq!(fb.display(), "Self::fb");
        assert!(args.extra("registry").is_some());
        assert_eq!(args.krate.unwrap().segments.len(), 2);
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
    fn name_expressions() {
        assert!(matches!(
            parse(quote!(name = BACKEND)).unwrap().name,
            Name::Expr(_)
        ));
        assert!(matches!(
            parse(quote!(name = Self::NAME)).unwrap().name,
            Name::Expr(_)
        ));
        assert!(err(quote!(name = 3)).contains("must be a string"));
        // `("a")` and forwarded `$n:expr` groups are literals.
        assert!(matches!(
            parse(quote!(name = ("a"))).unwrap().name,
            Name::Literal(_)
        ));
    }

    #[test]
    fn unknown_with_suggestions() {
        assert!(err(quote!(name = "a", fallbackMethod = "f")).contains("write `fallback = ...`"));
        assert!(err(quote!(nmae = "a")).contains("write `name = ...`"));
        assert!(err(quote!(name = "a", registy = R)).contains("write `registry = ...`"));
        assert!(err(quote!(name = "a", krate = "x")).contains("write `crate = ...`"));
        assert!(err(quote!(name = "a", zzzzzzzz = 1)).contains("known arguments are"));
    }

    #[test]
    fn duplicate() {
        assert!(err(quote!(name = "a", name = "b")).contains("duplicate `name`"));
        assert!(err(quote!(name = "a", registry = A, registry = B)).contains("duplicate"));
    }

    #[test]
    fn bare_literal() {
        assert!(err(quote!("backendA")).contains("write `name = \"backendA\"`"));
    }

    #[test]
    fn fallback_forms() {
        assert!(err(quote!(name = "a", fallback = "not a path")).contains("is not a fn name"));
        assert!(err(quote!(name = "a", fallback = "cached()")).contains("`fallback = \"cached\"`"));
        assert!(err(quote!(name = "a", fallback = "self.fb(x)")).contains("`fallback = \"fb\"`"));
        assert!(err(quote!(name = "a", fallback = "")).contains("must not be empty"));
        assert!(err(quote!(name = "a", fallback = 3)).contains("names an async fn"));
        let bare = parse(quote!(name = "a", fallback = cached)).unwrap();
        assert!(bare.fallback.unwrap().unqualified);
    }

    #[test]
    fn crate_forms() {
        assert!(err(quote!(name = "a", crate = "not a path")).contains("is not a path"));
        assert!(parse(quote!(name = "a", crate = ::r4)).is_ok());
    }

    #[test]
    fn missing_value() {
        assert!(err(quote!(name =)).contains("needs a value"));
    }
}
