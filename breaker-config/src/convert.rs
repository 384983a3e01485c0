//! Spring's text-to-value conversions for the types settings use: integers, floats,
//! booleans, durations, lenient enums and class-name lists, and a setting's [`Kind`] to its
//! [`Val`]. Each returns the text of what is allowed on failure.

use crate::duration;
use crate::relaxed::enum_canonical;
use crate::schema::{Kind, Val};

/// `Integer.valueOf` / `Integer.decode` (as Spring's `NumberUtils.parseNumber`): decimal with
/// optional sign, or `0x`/`#` hexadecimal.
pub fn int(text: &str) -> Result<i32, &'static str> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, &t[..]),
    };
    let parsed = if let Some(hex) = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0X"))
        .or_else(|| body.strip_prefix('#'))
    {
        i64::from_str_radix(hex, 16).ok()
    } else if body.bytes().all(|b| b.is_ascii_digit()) && !body.is_empty() && body.len() < 19 {
        body.parse::<i64>().ok()
    } else {
        None
    };
    parsed
        .map(|v| if neg { -v } else { v })
        .and_then(|v| i32::try_from(v).ok())
        .ok_or("an integer between -2147483648 and 2147483647")
}

/// Java's `Double.valueOf` for ordinary numbers: `50`, `50.5`, `5e1`, with an optional `f`/`d`
/// suffix. NaN and infinities are refused.
pub fn double(text: &str) -> Result<f64, &'static str> {
    let t = text.trim();
    let t = t.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(t);
    let ok = !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && t.bytes().any(|b| b.is_ascii_digit());
    let v: f64 = if ok {
        t.parse().map_err(|_| "a number")?
    } else {
        return Err("a number");
    };
    if v.is_finite() {
        Ok(v)
    } else {
        Err("a finite number")
    }
}

/// `Float.valueOf`, see [`double`].
pub fn float(text: &str) -> Result<f32, &'static str> {
    let v = double(text)? as f32;
    if v.is_finite() {
        Ok(v)
    } else {
        Err("a finite number")
    }
}

/// Spring's `StringToBooleanConverter`: `true`/`on`/`yes`/`1` and `false`/`off`/`no`/`0`,
/// case-insensitive.
pub fn boolean(text: &str) -> Result<bool, &'static str> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Ok(true),
        "false" | "off" | "no" | "0" => Ok(false),
        _ => Err("true or false (also on/off, yes/no, 1/0)"),
    }
}

/// Spring Boot's lenient enum conversion: the exact constant name, else the constant whose
/// letters and digits match case-insensitively (`time-based`, `timeBased`, `TIME_BASED`).
pub fn lenient_enum<T: Copy>(text: &str, constants: &[(&str, T)]) -> Option<T> {
    let t = text.trim();
    if let Some((_, v)) = constants.iter().find(|(n, _)| *n == t) {
        return Some(*v);
    }
    let c = enum_canonical(t);
    constants
        .iter()
        .find(|(n, _)| enum_canonical(n) == c)
        .map(|(_, v)| *v)
}

/// Splits a comma-separated class list the way Spring converts a String to `Class[]`:
/// items trimmed, empty items dropped; an empty text is an empty list.
pub fn class_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A value of `kind` as a user would write it, for "allowed" texts.
pub(crate) fn example(kind: Kind) -> &'static str {
    match kind {
        Kind::Float | Kind::Double => "50",
        Kind::Int => "10",
        Kind::Bool => "true",
        Kind::Duration => "2s",
        Kind::WindowType => "COUNT_BASED",
        Kind::State => "OPEN",
        Kind::ClassList => "[java.io.IOException]",
        Kind::Text => "a name",
    }
}

/// The Java type Spring converts a `kind` setting to, as its conversion errors name it.
pub(crate) fn java_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Float => "java.lang.Float",
        Kind::Double => "java.lang.Double",
        Kind::Int => "java.lang.Integer",
        Kind::Bool => "java.lang.Boolean",
        Kind::Duration => "java.time.Duration",
        Kind::WindowType => {
            "io.github.resilience4j.circuitbreaker.CircuitBreakerConfig$SlidingWindowType"
        }
        Kind::State => "io.github.resilience4j.circuitbreaker.CircuitBreaker$State",
        Kind::ClassList => "java.lang.Class<?>[]",
        Kind::Text => "java.lang.String",
    }
}

/// `text` converted to `kind` as Spring's binder converts it; on failure, what is allowed.
pub(crate) fn scalar(kind: Kind, text: &str) -> Result<Val, &'static str> {
    Ok(match kind {
        Kind::Float => Val::Float(float(text)?),
        Kind::Double => Val::Double(double(text)?),
        Kind::Int => Val::Int(int(text)?),
        Kind::Bool => Val::Bool(boolean(text)?),
        Kind::Duration => Val::Duration(duration::parse(text).map_err(|_| {
            "a whole number of ms, or a number with a unit ns, us, ms, s, m, h, d (e.g. 500ms, 10s), or ISO-8601 (PT10S); no decimals"
        })?),
        Kind::WindowType => Val::Window(
            lenient_enum(text, &crate::model::SLIDING_WINDOW_TYPES)
                .ok_or("COUNT_BASED or TIME_BASED (any case, '-' or '_' ignored)")?,
        ),
        Kind::State => Val::State(lenient_enum(text, &crate::model::STATES).ok_or(
            "CLOSED, OPEN, HALF_OPEN, DISABLED, FORCED_OPEN or METRICS_ONLY (any case, '-' or '_' ignored)",
        )?),
        Kind::ClassList => Val::Names(class_list(text)),
        Kind::Text => Val::Text(text.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints() {
        assert_eq!(int("10"), Ok(10));
        assert_eq!(int(" +7 "), Ok(7));
        assert_eq!(int("-3"), Ok(-3));
        assert_eq!(int("0x10"), Ok(16));
        assert!(int("1.5").is_err());
        assert!(int("2147483648").is_err());
        assert!(int("10_000").is_err());
    }

    #[test]
    fn floats_and_bools() {
        assert_eq!(float("50"), Ok(50.0));
        assert_eq!(float("50.5"), Ok(50.5));
        assert_eq!(float("5e1"), Ok(50.0));
        assert_eq!(float("50f"), Ok(50.0));
        assert!(float("NaN").is_err());
        assert!(float("fifty").is_err());
        assert_eq!(boolean("TRUE"), Ok(true));
        assert_eq!(boolean("off"), Ok(false));
        assert!(boolean("maybe").is_err());
    }

    #[test]
    fn enums_and_lists() {
        let c = [("COUNT_BASED", 1), ("TIME_BASED", 2)];
        assert_eq!(lenient_enum("time-based", &c), Some(2));
        assert_eq!(lenient_enum("timeBased", &c), Some(2));
        assert_eq!(lenient_enum("count_based", &c), Some(1));
        assert_eq!(lenient_enum("hourly", &c), None);
        assert_eq!(class_list(" a.B , c.D,, "), vec!["a.B", "c.D"]);
        assert!(class_list("").is_empty());
    }
}
