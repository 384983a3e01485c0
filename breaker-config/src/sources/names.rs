//! What the sources share with the rest of the crate: the names of their documents and which
//! property names breaker reads from them.

/// The [`Document::file`](crate::property::Document::file) of the environment-variable document.
pub(crate) const ENV_DOCUMENT: &str = "environment";
/// The [`Document::file`](crate::property::Document::file) of the `SPRING_APPLICATION_JSON` document.
pub(crate) const JSON_DOCUMENT: &str = "SPRING_APPLICATION_JSON";
/// The [`Document::file`](crate::property::Document::file) of the command-line document.
pub(crate) const ARGS_DOCUMENT: &str = "command line";

/// Whether a property named by `first` (its first element) is one breaker binds:
/// `resilience4j.*`, `management.*`, `breaker.*` or `spring.*`.
pub(crate) fn read_by_breaker(first: &str) -> bool {
    let u = crate::relaxed::uniform(first);
    matches!(
        u.as_str(),
        "resilience4j" | "management" | "breaker" | "spring"
    )
}
