//! Java's decimal rendering of `float` and `double` (`Float.toString`, `Double.toString`), so
//! that messages and events read exactly as Resilience4j's do: `0.0`, `-5.0`, `33.333332`,
//! `1.0E-4`.

/// Formats an `f32` as Java's `Float.toString` does (`0.0`, `-5.0`, `100.5`, `1.0E-4`).
pub fn java_float(v: f32) -> String {
    java_decimal(v as f64, || format!("{v}"), || format!("{v:e}"))
}

/// Formats an `f64` as Java's `Double.toString` does (`50.0`, `0.5`, `1.0E10`).
pub fn java_double(v: f64) -> String {
    java_decimal(v, || format!("{v}"), || format!("{v:e}"))
}

/// Formats a whole number of milliseconds as Java's `Duration.toString()` does (ISO-8601:
/// `PT0S`, `PT0.5S`, `PT1.234S`, `PT1M30S`, `PT2H`, `PT-0.001S`), as Resilience4j's events
/// print their wait intervals.
pub fn java_duration_millis(millis: i64) -> String {
    if millis == 0 {
        return "PT0S".into();
    }
    // Java keeps floor seconds and a non-negative nano part, and prints a negative value
    // with a fraction as -(|seconds| - 1).fraction: -1500 ms is PT-1.5S.
    let seconds = millis.div_euclid(1000);
    let frac = millis.rem_euclid(1000);
    let effective = if seconds < 0 && frac > 0 {
        seconds + 1
    } else {
        seconds
    };
    let hours = effective / 3600;
    let minutes = (effective % 3600) / 60;
    let secs = effective % 60;
    let mut out = String::from("PT");
    if hours != 0 {
        out.push_str(&format!("{hours}H"));
    }
    if minutes != 0 {
        out.push_str(&format!("{minutes}M"));
    }
    if secs == 0 && frac == 0 && out.len() > 2 {
        return out;
    }
    if seconds < 0 && frac > 0 && secs == 0 {
        out.push_str("-0");
    } else {
        out.push_str(&secs.to_string());
    }
    if frac > 0 {
        let shown = if seconds < 0 { 1000 - frac } else { frac };
        out.push('.');
        out.push_str(format!("{shown:03}").trim_end_matches('0'));
    }
    out.push('S');
    out
}

/// Java prints plain decimals for magnitudes in `[1e-3, 1e7)` (and zero), always with a
/// fraction, and `<mantissa>E<exponent>` otherwise. `plain` and `scientific` give Rust's
/// shortest round-trip digits for the original type.
fn java_decimal(v: f64, plain: impl Fn() -> String, scientific: impl Fn() -> String) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = plain();
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        let s = scientific();
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        if mantissa.contains('.') {
            format!("{mantissa}E{exp}")
        } else {
            format!("{mantissa}.0E{exp}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_java_does() {
        assert_eq!(java_float(0.0), "0.0");
        assert_eq!(java_float(-5.0), "-5.0");
        assert_eq!(java_float(100.5), "100.5");
        assert_eq!(java_float(33.333332), "33.333332");
        assert_eq!(java_float(66.666664), "66.666664");
        assert_eq!(java_float(1e-4), "1.0E-4");
    }

    #[test]
    fn durations_print_as_java_does() {
        assert_eq!(java_duration_millis(0), "PT0S");
        assert_eq!(java_duration_millis(500), "PT0.5S");
        assert_eq!(java_duration_millis(1234), "PT1.234S");
        assert_eq!(java_duration_millis(1000), "PT1S");
        assert_eq!(java_duration_millis(90_000), "PT1M30S");
        assert_eq!(java_duration_millis(7_200_000), "PT2H");
        assert_eq!(java_duration_millis(3_600_010), "PT1H0.01S");
        assert_eq!(java_duration_millis(-1), "PT-0.001S");
        assert_eq!(java_duration_millis(-5), "PT-0.005S");
        assert_eq!(java_duration_millis(-1500), "PT-1.5S");
        assert_eq!(java_duration_millis(-59_500), "PT-59.5S");
        assert_eq!(java_duration_millis(-60_500), "PT-1M-0.5S");
    }

    #[test]
    fn doubles_print_as_java_does() {
        assert_eq!(java_double(50.0), "50.0");
        assert_eq!(java_double(0.5), "0.5");
        assert_eq!(java_double(1e10), "1.0E10");
        assert_eq!(java_double(1.5e-5), "1.5E-5");
    }
}
