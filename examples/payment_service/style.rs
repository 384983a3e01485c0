//! A little colour on a terminal (none when piped, or with `NO_COLOR` set).

use std::io::IsTerminal;
use std::sync::OnceLock;

use resilience4rs::State;

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none())
}

fn paint(code: &str, text: &str) -> String {
    if enabled() {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// Bold.
pub fn bold(text: &str) -> String {
    paint("1", text)
}

/// Dimmed.
pub fn dim(text: &str) -> String {
    paint("2", text)
}

/// Red.
pub fn red(text: &str) -> String {
    paint("31", text)
}

/// Green.
pub fn green(text: &str) -> String {
    paint("32", text)
}

/// Cyan.
pub fn cyan(text: &str) -> String {
    paint("36", text)
}

/// A state name in its colour: CLOSED green, OPEN red, HALF_OPEN yellow.
pub fn state(s: State) -> String {
    let code = match s {
        State::Closed => "32",
        State::Open | State::ForcedOpen => "31",
        State::HalfOpen => "33",
        _ => "0",
    };
    paint(code, s.name())
}

/// `text` padded to `width` characters, then painted by `f` (padding outside the escapes).
pub fn pad(text: &str, width: usize, f: fn(&str) -> String) -> String {
    let fill = width.saturating_sub(text.chars().count());
    format!("{}{}", f(text), " ".repeat(fill))
}
