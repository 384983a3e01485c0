//! Parsers for the values the `simulate` and `explain` flags take: call rates (`50/s`),
//! durations (`2000ms`, `15s`), percentages (`5%`), time ranges (`15s..35s`). Each returns a
//! message that clap prints after the flag's name, so an error always names the flag.

use std::time::Duration;

/// Parses a duration with a unit: `20ms`, `15s`, `2m`, `1h 30m`, `500us` (via `humantime`).
/// A bare number is refused, since it would be ambiguous (Spring reads it as milliseconds).
pub fn duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(format!(
            "'{s}' has no unit; write e.g. {t}ms or {t}s (units: us, ms, s, m, h, d)"
        ));
    }
    humantime::parse_duration(t)
        .map_err(|e| format!("'{s}' is not a duration ({e}); write e.g. 20ms, 15s, 2m or 1h"))
}

/// Parses a duration that must be longer than zero.
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err(format!("'{s}' must be longer than zero"));
    }
    Ok(d)
}

/// Parses a call rate in calls per second: `50/s`, `50`, `3000/min`, `100000/h`. Must be
/// finite and greater than zero.
pub fn rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, per_s) = match t.split_once('/') {
        None => (t, 1.0),
        Some((n, unit)) => {
            let per = match unit.trim() {
                "s" | "sec" | "second" => 1.0,
                "m" | "min" | "minute" => 60.0,
                "h" | "hour" => 3600.0,
                "d" | "day" => 86_400.0,
                other => {
                    return Err(format!(
                        "'{s}': unknown unit '/{other}'; write calls per s, min, h or d, e.g. 50/s"
                    ))
                }
            };
            (n.trim(), per)
        }
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a rate; write calls per second, e.g. 50/s"))?;
    let r = n / per_s;
    if !(r.is_finite() && r > 0.0) {
        return Err(format!("'{s}': the rate must be greater than zero"));
    }
    Ok(r)
}

/// Parses a probability: `5%` (percent) or `0.05` (a fraction). Must lie in [0, 100 %].
pub fn fraction(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let p = if let Some(pct) = t.strip_suffix('%') {
        pct.trim()
            .parse::<f64>()
            .map_err(|_| format!("'{s}' is not a percentage; write e.g. 5%"))?
            / 100.0
    } else {
        let f: f64 = t
            .parse()
            .map_err(|_| format!("'{s}' is not a rate; write e.g. 5% or 0.05"))?;
        if f > 1.0 {
            return Err(format!("'{s}' is more than 1; did you mean {t}%?"));
        }
        f
    };
    if !(0.0..=1.0).contains(&p) {
        return Err(format!("'{s}' must lie between 0% and 100%"));
    }
    Ok(p)
}

/// A half-open span of virtual time `[start, end)`, from `15s..35s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Start, from the beginning of the run.
    pub start: Duration,
    /// End (exclusive), from the beginning of the run.
    pub end: Duration,
}

impl Span {
    /// Whether `t` (from the beginning of the run) lies in the span.
    pub fn contains(&self, t: Duration) -> bool {
        self.start <= t && t < self.end
    }
}

/// Parses `START..END`, e.g. `15s..35s`, with END after START.
pub fn span(s: &str) -> Result<Span, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("'{s}' is not a time range; write START..END, e.g. 15s..35s"))?;
    let start = duration(a)?;
    let end = duration(b)?;
    if end <= start {
        return Err(format!("'{s}': the end must come after the start"));
    }
    Ok(Span { start, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(duration("2000ms"), Ok(Duration::from_millis(2000)));
        assert_eq!(duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert!(duration("15").unwrap_err().contains("no unit"));
        assert!(duration("fast").is_err());
        assert!(positive_duration("0s").is_err());
    }

    #[test]
    fn rates_in_calls_per_second() {
        assert_eq!(rate("50/s"), Ok(50.0));
        assert_eq!(rate("50"), Ok(50.0));
        assert_eq!(rate("3000/min"), Ok(50.0));
        assert_eq!(rate("7200/h"), Ok(2.0));
        assert!(rate("0/s").is_err());
        assert!(rate("-3/s").is_err());
        assert!(rate("50/week").unwrap_err().contains("/week"));
        assert!(rate("fifty").is_err());
    }

    #[test]
    fn fractions_as_percent_or_share() {
        assert_eq!(fraction("5%"), Ok(0.05));
        assert_eq!(fraction("0.05"), Ok(0.05));
        assert_eq!(fraction("100%"), Ok(1.0));
        assert!(fraction("5").unwrap_err().contains("did you mean 5%"));
        assert!(fraction("120%").is_err());
        assert!(fraction("-1%").is_err());
    }

    #[test]
    fn spans() {
        let s = span("15s..35s").unwrap();
        assert_eq!(s.start, Duration::from_secs(15));
        assert_eq!(s.end, Duration::from_secs(35));
        assert!(s.contains(Duration::from_secs(15)));
        assert!(!s.contains(Duration::from_secs(35)));
        assert!(span("35s..15s").is_err());
        assert!(span("15s-35s").is_err());
    }
}
