//! Rust tokens as a user would write them, for messages (`Result<u64, PayError>`, not
//! `Result < u64 , PayError >`).

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// `tokens` with conventional spacing.
pub fn tokens(tokens: TokenStream) -> String {
    let mut out = String::new();
    let mut word = false;
    write(tokens, &mut out, &mut word);
    out
}

/// Braces in messages given to `#[diagnostic::on_unimplemented]`, whose `{..}` are
/// placeholders: `{` becomes `{{`.
pub fn escape_braces(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

/// Words after which a bracketed or parenthesised group is spaced: `&mut [T]`, `dyn (..)`.
const KEYWORDS: &[&str] = &["mut", "dyn", "impl", "const", "as", "in", "where", "unsafe"];

fn write(tokens: TokenStream, out: &mut String, word: &mut bool) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Ident(ident) => {
                if *word {
                    out.push(' ');
                }
                out.push_str(&ident.to_string());
                *word = true;
            }
            TokenTree::Literal(lit) => {
                if *word {
                    out.push(' ');
                }
                out.push_str(&lit.to_string());
                *word = true;
            }
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                let after_keyword = KEYWORDS.iter().any(|k| {
                    out.strip_suffix(k)
                        .is_some_and(|rest| rest.is_empty() || rest.ends_with([' ', '&', '<', '(']))
                });
                if *word && (group.delimiter() == Delimiter::Brace || after_keyword) {
                    out.push(' ');
                }
                out.push_str(open);
                let mut inner = false;
                write(group.stream(), out, &mut inner);
                out.push_str(close);
                *word = group.delimiter() == Delimiter::None && inner;
            }
            TokenTree::Punct(punct) => {
                let c = punct.as_char();
                let joint = punct.spacing() == Spacing::Joint;
                let next = tokens.get(i + 1);
                let next_char = match next {
                    Some(TokenTree::Punct(p)) => Some(p.as_char()),
                    _ => None,
                };
                match c {
                    '\'' if joint => {
                        // A lifetime: `'a`.
                        if *word {
                            out.push(' ');
                        }
                        out.push('\'');
                        if let Some(TokenTree::Ident(name)) = next {
                            out.push_str(&name.to_string());
                            i += 1;
                        }
                        *word = true;
                    }
                    ':' if joint && next_char == Some(':') => {
                        out.push_str("::");
                        i += 1;
                        *word = false;
                    }
                    '-' if joint && next_char == Some('>') => {
                        out.push_str(" -> ");
                        i += 1;
                        *word = false;
                    }
                    ',' | ';' | ':' => {
                        out.push(c);
                        out.push(' ');
                        *word = false;
                    }
                    '=' | '+' => {
                        if !out.ends_with(' ') {
                            out.push(' ');
                        }
                        out.push(c);
                        out.push(' ');
                        *word = false;
                    }
                    _ => {
                        if *word && matches!(c, '&' | '*' | '!') && !out.ends_with(['<', '(', '['])
                        {
                            out.push(' ');
                        }
                        out.push(c);
                        *word = false;
                    }
                }
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn types_read_as_written() {
        assert_eq!(
            tokens(quote!(Result<u64, PayError>)),
            "Result<u64, PayError>"
        );
        assert_eq!(tokens(quote!(&'a mut [T])), "&'a mut [T]");
        assert_eq!(tokens(quote!(std::io::Result<()>)), "std::io::Result<()>");
        assert_eq!(
            tokens(quote!(Box<dyn Fn(u8) -> u32 + Send + 'static>)),
            "Box<dyn Fn(u8) -> u32 + Send + 'static>"
        );
        assert_eq!(
            tokens(quote!(impl Iterator<Item = u8>)),
            "impl Iterator<Item = u8>"
        );
        assert_eq!(tokens(quote!([u8; 4])), "[u8; 4]");
        assert_eq!(tokens(quote!(self: Arc<Self>)), "self: Arc<Self>");
        assert_eq!(tokens(quote!((a, b): (u32, u32))), "(a, b): (u32, u32)");
        assert_eq!(
            tokens(quote!(<'a, T: Display + 'a>)),
            "<'a, T: Display + 'a>"
        );
        assert_eq!(tokens(quote!(*const u8)), "*const u8");
    }

    #[test]
    fn braces_are_escaped() {
        assert_eq!(escape_braces("[u8; { N }]"), "[u8; {{ N }}]");
    }
}
