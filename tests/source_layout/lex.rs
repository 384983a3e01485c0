//! A small Rust lexer for the layout checks: enough to find `mod`, `use`, paths and item
//! names, and to tell lines of code from blank and comment lines. It is not a parser: it
//! drops comments, turns string and char literals into one `"` token, and keeps
//! identifiers, `::` and single punctuation characters with their line numbers.

/// One token: its text and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub line: usize,
}

/// What the lexer makes of one file.
pub struct Lexed {
    /// The tokens, comments dropped. A string literal is one token, `"` then its text as
    /// written (a raw string's text is dropped); a char literal is `"`.
    pub tokens: Vec<Token>,
    /// `code_lines[i]` is true when line `i + 1` holds anything but whitespace and comments
    /// (a line inside a multi-line string literal counts as code).
    pub code_lines: Vec<bool>,
}

/// Splits `src` into tokens and marks its lines of code.
pub fn lex(src: &str) -> Lexed {
    let chars: Vec<char> = src.chars().collect();
    let line_count = src.lines().count().max(1);
    let mut code_lines = vec![false; line_count + 1];
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Marks line `l` as code (lines past the end, from a missing final newline, are ignored).
    let mut mark = |l: usize| {
        if l <= code_lines.len() {
            code_lines[l - 1] = true;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&chars, i) {
            let start = line;
            for &ch in &chars[i..end] {
                mark(line);
                if ch == '\n' {
                    line += 1;
                }
            }
            tokens.push(Token {
                text: "\"".into(),
                line: start,
            });
            i = end;
        } else if c == '"' || (c == 'b' && next == Some('"')) || (c == 'c' && next == Some('"')) {
            let start = line;
            i += if c == '"' { 1 } else { 2 };
            let from = i;
            mark(line);
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    line += 1;
                    mark(line);
                }
                i += 1;
            }
            let body: String = chars[from..i.min(chars.len())].iter().collect();
            i += 1;
            tokens.push(Token {
                text: format!("\"{body}"),
                line: start,
            });
        } else if c == '\'' || (c == 'b' && next == Some('\'')) {
            mark(line);
            let q = if c == '\'' { i } else { i + 1 };
            match char_literal_end(&chars, q) {
                Some(end) => {
                    tokens.push(Token {
                        text: "\"".into(),
                        line,
                    });
                    i = end;
                }
                None => {
                    // A lifetime or label: `'` then an identifier.
                    tokens.push(Token {
                        text: "'".into(),
                        line,
                    });
                    i = q + 1;
                }
            }
        } else if c.is_alphanumeric() || c == '_' {
            mark(line);
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            // `r#ident`
            let mut text: String = chars[start..i].iter().collect();
            if text == "r" && chars.get(i) == Some(&'#') {
                let s = i + 1;
                i = s;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                text = chars[s..i].iter().collect();
            }
            tokens.push(Token { text, line });
        } else if c == ':' && next == Some(':') {
            mark(line);
            tokens.push(Token {
                text: "::".into(),
                line,
            });
            i += 2;
        } else {
            mark(line);
            tokens.push(Token {
                text: c.to_string(),
                line,
            });
            i += 1;
        }
    }
    code_lines.truncate(line_count);
    Lexed { tokens, code_lines }
}

/// The index after a raw (byte/C) string literal starting at `i` (`r"..."`, `br#"..."#`).
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if matches!(chars.get(j), Some('b') | Some('c')) {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    // Not raw if the `r` continues an identifier (`for"`, `bar#`): the caller only asks at the
    // start of a token, so check the character before.
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// The index after a char literal whose opening quote is at `q`, or `None` for a lifetime.
fn char_literal_end(chars: &[char], q: usize) -> Option<usize> {
    match chars.get(q + 1) {
        Some('\\') => {
            // '\n', '\'', '\u{1F600}', '\x7f'
            let mut j = q + 2;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            Some(j + 1)
        }
        Some(_) if chars.get(q + 2) == Some(&'\'') => Some(q + 3),
        _ => None,
    }
}
