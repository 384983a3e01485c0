//! `creationTime` as Java's `ZonedDateTime.toString()` prints it, in UTC:
//! `2026-11-30T19:37:45.132172896Z`, the fraction in 3, 6 or 9 digits as its precision needs
//! and the seconds left out when they and the fraction are 0 (`2024-01-02T03:04Z`).

/// Formats `epoch_nanos` (nanoseconds since the Unix epoch) as `ZonedDateTime.toString()`
/// with the zone `Z` (UTC).
pub fn zoned_date_time(epoch_nanos: u64) -> String {
    let secs = epoch_nanos / 1_000_000_000;
    let nanos = (epoch_nanos % 1_000_000_000) as u32;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let (y, mo, d) = civil_from_days(days);
    let mut out = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}");
    if s > 0 || nanos > 0 {
        out.push_str(&format!(":{s:02}"));
        if nanos > 0 {
            if nanos.is_multiple_of(1_000_000) {
                out.push_str(&format!(".{:03}", nanos / 1_000_000));
            } else if nanos.is_multiple_of(1_000) {
                out.push_str(&format!(".{:06}", nanos / 1_000));
            } else {
                out.push_str(&format!(".{nanos:09}"));
            }
        }
    }
    out.push('Z');
    out
}

/// (year, month, day) of the proleptic Gregorian calendar for a day count since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_java() {
        // 2026-11-30T19:37:45.132172896Z (the spec's example, in UTC).
        assert_eq!(
            zoned_date_time(1_796_067_465_132_172_896),
            "2026-11-30T19:37:45.132172896Z"
        );
        assert_eq!(
            zoned_date_time(1_704_164_640_000_000_000),
            "2024-01-02T03:04Z"
        );
        assert_eq!(
            zoned_date_time(1_704_164_645_000_000_000),
            "2024-01-02T03:04:05Z"
        );
        assert_eq!(
            zoned_date_time(1_704_164_645_120_000_000),
            "2024-01-02T03:04:05.120Z"
        );
        assert_eq!(
            zoned_date_time(1_704_164_645_000_123_000),
            "2024-01-02T03:04:05.000123Z"
        );
        assert_eq!(zoned_date_time(0), "1970-01-01T00:00Z");
        assert_eq!(
            zoned_date_time(951_782_400_000_000_000),
            "2000-02-29T00:00Z"
        );
    }
}
