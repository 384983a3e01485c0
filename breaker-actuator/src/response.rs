//! The JSON responses every endpoint answers with.

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::Response;
use serde::Serialize;
use serde_json::json;

/// `body` as `application/json` with `status` (200 if `status` is not a valid code).
pub(crate) fn json(status: u16, body: &impl Serialize) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::OK))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(bytes))
        .unwrap_or_default()
}

/// `{"error": message}` with `status`.
pub(crate) fn error(status: u16, message: String) -> Response {
    json(status, &json!({"error": message}))
}
