//! Spring Boot's duration conversion (`DurationStyle`): a bare number is milliseconds,
//! `10s`/`500ms`/`1m`/`2h`/`1d`/`10us`/`10ns` (unit case-insensitive), or ISO-8601 `PT10S`.
//! Decimals (`0.5s`) are rejected. Values are kept as signed nanoseconds, as `java.time.Duration`.

const NANOS_PER_SECOND: i128 = 1_000_000_000;
/// `java.time.Duration` holds at most `Long.MAX_VALUE` seconds.
const MAX_SECONDS: i128 = i64::MAX as i128;

/// A parsed duration in nanoseconds (may be negative, as Java's `Duration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct JavaDuration(pub i128);

impl JavaDuration {
    /// Java's `toMillis()` (floor division).
    pub fn millis(self) -> i128 {
        self.0.div_euclid(1_000_000)
    }

    /// Java's `toNanos()`; `None` when Java would throw `ArithmeticException` (overflow).
    pub fn nanos_checked(self) -> Option<i64> {
        i64::try_from(self.0).ok()
    }

    /// The duration as `std::time::Duration`, `None` when negative.
    pub fn to_std(self) -> Option<std::time::Duration> {
        let n = u128::try_from(self.0).ok()?;
        let secs = u64::try_from(n / NANOS_PER_SECOND as u128).ok()?;
        Some(std::time::Duration::new(
            secs,
            (n % NANOS_PER_SECOND as u128) as u32,
        ))
    }

    /// Java's `Duration.toString()` (`PT1M`, `PT0.5S`, `PT-1S`, `PT0S`).
    pub fn java_string(self) -> String {
        let seconds = self.0.div_euclid(NANOS_PER_SECOND);
        let nanos = self.0.rem_euclid(NANOS_PER_SECOND);
        if self.0 == 0 {
            return "PT0S".into();
        }
        let mut eff = seconds;
        if seconds < 0 && nanos > 0 {
            eff += 1;
        }
        let hours = eff / 3600;
        let minutes = (eff % 3600) / 60;
        let secs = eff % 60;
        let mut buf = String::from("PT");
        if hours != 0 {
            buf.push_str(&format!("{hours}H"));
        }
        if minutes != 0 {
            buf.push_str(&format!("{minutes}M"));
        }
        if secs == 0 && nanos == 0 && buf.len() > 2 {
            return buf;
        }
        if seconds < 0 && nanos > 0 && secs == 0 {
            buf.push_str("-0");
        } else {
            buf.push_str(&secs.to_string());
        }
        if nanos > 0 {
            let frac = if seconds < 0 {
                2 * NANOS_PER_SECOND - nanos
            } else {
                nanos + NANOS_PER_SECOND
            };
            let digits = frac.to_string();
            let trimmed = digits.trim_end_matches('0');
            buf.push('.');
            buf.push_str(trimmed.get(1..).unwrap_or(""));
        }
        buf.push('S');
        buf
    }
}

/// Parses a duration the way Spring Boot's `StringToDurationConverter` does (no `@DurationUnit`,
/// so the default unit is milliseconds). The error text is Spring's message, e.g.
/// `'0.5s' is not a valid duration`.
pub fn parse(value: &str) -> Result<JavaDuration, String> {
    if is_simple(value) {
        parse_simple(value).ok_or_else(|| format!("'{value}' is not a valid simple duration"))
    } else if is_iso(value) {
        parse_iso(value).ok_or_else(|| format!("'{value}' is not a valid ISO-8601 duration"))
    } else {
        Err(format!("'{value}' is not a valid duration"))
    }
}

/// `^([+-]?\d+)([a-zA-Z]{0,2})$`
fn is_simple(v: &str) -> bool {
    let b = v.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let ds = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == ds {
        return false;
    }
    let rest = &b[i..];
    rest.len() <= 2 && rest.iter().all(u8::is_ascii_alphabetic)
}

/// `^[+-]?[pP].*$`
fn is_iso(v: &str) -> bool {
    let t = v.strip_prefix(['+', '-']).unwrap_or(v);
    t.starts_with(['p', 'P'])
}

fn parse_simple(v: &str) -> Option<JavaDuration> {
    let split = v
        .char_indices()
        .find(|(i, c)| c.is_ascii_alphabetic() && *i > 0)
        .map(|(i, _)| i)
        .unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let amount: i64 = num.parse().ok()?;
    let per: i128 = match unit.to_ascii_lowercase().as_str() {
        "" | "ms" => 1_000_000,
        "ns" => 1,
        "us" => 1_000,
        "s" => NANOS_PER_SECOND,
        "m" => 60 * NANOS_PER_SECOND,
        "h" => 3600 * NANOS_PER_SECOND,
        "d" => 86_400 * NANOS_PER_SECOND,
        _ => return None,
    };
    checked(amount as i128 * per)
}

fn checked(nanos: i128) -> Option<JavaDuration> {
    (nanos.div_euclid(NANOS_PER_SECOND).abs() <= MAX_SECONDS).then_some(JavaDuration(nanos))
}

/// Java's `Duration.parse`: `[-+]P[nD][T[nH][nM][n[.fffffffff]S]]`, case-insensitive.
fn parse_iso(v: &str) -> Option<JavaDuration> {
    let up = v.to_ascii_uppercase();
    let (neg, rest) = match up.as_bytes().first()? {
        b'-' => (true, &up[1..]),
        b'+' => (false, &up[1..]),
        _ => (false, &up[..]),
    };
    let rest = rest.strip_prefix('P')?;
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut total: i128 = 0;
    let mut any = false;
    if !date.is_empty() {
        let days = date.strip_suffix('D')?;
        total += parse_signed(days)? * 86_400 * NANOS_PER_SECOND;
        any = true;
    }
    if let Some(mut t) = time {
        if t.is_empty() {
            return None;
        }
        for (suffix, per) in [('H', 3600 * NANOS_PER_SECOND), ('M', 60 * NANOS_PER_SECOND)] {
            if let Some(pos) = t.find(suffix) {
                let (n, r) = t.split_at(pos);
                if n.contains('S') {
                    return None;
                }
                total += parse_signed(n)? * per;
                t = &r[1..];
                any = true;
            }
        }
        if !t.is_empty() {
            let n = t.strip_suffix('S')?;
            let (whole, frac) = match n.split_once(['.', ',']) {
                Some((w, f)) => (w, Some(f)),
                None => (n, None),
            };
            let secs = parse_signed(whole)?;
            let mut nanos: i128 = 0;
            if let Some(f) = frac {
                if f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let padded = format!("{f:0<9}");
                nanos = padded.parse::<i128>().ok()?;
                if whole.starts_with('-') {
                    nanos = -nanos;
                }
            }
            total += secs * NANOS_PER_SECOND + nanos;
            any = true;
        }
    }
    if !any {
        return None;
    }
    checked(if neg { -total } else { total })
}

fn parse_signed(s: &str) -> Option<i128> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i128 = digits.parse().ok()?;
    Some(if s.starts_with('-') { -n } else { n })
}

#[cfg(test)]
#[path = "duration_tests.rs"]
mod tests;
