//! The media types a write operation consumes, as Spring Boot's actuator declares them
//! (`ActuatorMediaType.V3_JSON`, `V2_JSON`, `application/json`; `EndpointMediaTypes`).

use axum::http::{header, HeaderMap};

/// What `POST /actuator/circuitbreakers/{name}` accepts as its body's `Content-Type`.
pub(crate) const WRITE_CONSUMES: [&str; 3] = [
    "application/vnd.spring-boot.actuator.v3+json",
    "application/vnd.spring-boot.actuator.v2+json",
    "application/json",
];

/// Whether the request's `Content-Type` is one of [`WRITE_CONSUMES`]: type and subtype
/// compared without regard to case, parameters (`; charset=UTF-8`) ignored, as Spring's
/// `ConsumesRequestCondition` matches them. No `Content-Type` (Spring reads it as
/// `application/octet-stream`), an unparsable one or several do not match.
pub(crate) fn consumes_json(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return false;
    };
    let Ok(value) = value.to_str() else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    WRITE_CONSUMES
        .iter()
        .any(|t| t.eq_ignore_ascii_case(essence))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::CONTENT_TYPE, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn json_and_the_actuator_types_match_with_or_without_parameters() {
        for ok in [
            "application/json",
            "application/json;charset=UTF-8",
            "Application/JSON ; charset=utf-8",
            "application/vnd.spring-boot.actuator.v3+json",
            "application/vnd.spring-boot.actuator.v2+json;charset=UTF-8",
        ] {
            assert!(consumes_json(&with(&[ok])), "{ok}");
        }
    }

    #[test]
    fn other_types_none_or_several_do_not() {
        for bad in [
            "text/plain",
            "text/plain;charset=UTF-8",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/*",
            "*/*",
            "application/jsonp",
            "application/vnd.spring-boot.actuator.v1+json",
            "application/problem+json",
            "",
        ] {
            assert!(!consumes_json(&with(&[bad])), "{bad}");
        }
        assert!(!consumes_json(&HeaderMap::new()));
        assert!(!consumes_json(&with(&["application/json", "text/plain"])));
    }
}
