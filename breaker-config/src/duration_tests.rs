//! Unit tests of `duration.rs`.

use super::*;

fn ms(v: &str) -> i128 {
    parse(v).expect(v).millis()
}

#[test]
fn simple_forms() {
    assert_eq!(ms("10000"), 10_000);
    assert_eq!(ms("500ms"), 500);
    assert_eq!(ms("10s"), 10_000);
    assert_eq!(ms("10S"), 10_000);
    assert_eq!(ms("1m"), 60_000);
    assert_eq!(ms("2h"), 7_200_000);
    assert_eq!(ms("1d"), 86_400_000);
    assert_eq!(parse("10us").unwrap().0, 10_000);
    assert_eq!(parse("10ns").unwrap().0, 10);
    assert_eq!(ms("-5s"), -5_000);
}

#[test]
fn iso_forms() {
    assert_eq!(ms("PT30S"), 30_000);
    assert_eq!(ms("pt5s"), 5_000);
    assert_eq!(ms("PT1M"), 60_000);
    assert_eq!(ms("P1D"), 86_400_000);
    assert_eq!(ms("PT1H30M"), 5_400_000);
    assert_eq!(ms("PT0.5S"), 500);
    assert_eq!(ms("-PT1S"), -1_000);
}

#[test]
fn spring_messages() {
    assert_eq!(parse("0.5s").unwrap_err(), "'0.5s' is not a valid duration");
    assert_eq!(
        parse("10x").unwrap_err(),
        "'10x' is not a valid simple duration"
    );
    assert_eq!(
        parse("PTxS").unwrap_err(),
        "'PTxS' is not a valid ISO-8601 duration"
    );
    assert_eq!(
        parse("P").unwrap_err(),
        "'P' is not a valid ISO-8601 duration"
    );
    assert_eq!(
        parse("PT").unwrap_err(),
        "'PT' is not a valid ISO-8601 duration"
    );
    assert_eq!(parse("ten").unwrap_err(), "'ten' is not a valid duration");
}

#[test]
fn java_to_string() {
    assert_eq!(JavaDuration(0).java_string(), "PT0S");
    assert_eq!(JavaDuration(60 * NANOS_PER_SECOND).java_string(), "PT1M");
    assert_eq!(JavaDuration(500_000_000).java_string(), "PT0.5S");
    assert_eq!(JavaDuration(-NANOS_PER_SECOND).java_string(), "PT-1S");
    assert_eq!(JavaDuration(-500_000_000).java_string(), "PT-0.5S");
    assert_eq!(
        JavaDuration(5_400 * NANOS_PER_SECOND).java_string(),
        "PT1H30M"
    );
    assert_eq!(JavaDuration(500_000).java_string(), "PT0.0005S");
}
