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
    fn doubles_print_as_java_does() {
        assert_eq!(java_double(50.0), "50.0");
        assert_eq!(java_double(0.5), "0.5");
        assert_eq!(java_double(1e10), "1.0E10");
        assert_eq!(java_double(1.5e-5), "1.5E-5");
    }
}
