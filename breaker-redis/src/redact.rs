//! Keeping credentials out of logs and errors: a Redis URL is shown as its scheme, host and
//! port only, and any message is stripped of the URL's password.

/// `redis://user:secret@host:6379/2` -> `redis://host:6379/2`; a URL that does not parse is
/// shown as `<redis url>` (the same rule `breaker check` shows the configured URL with).
pub fn redact_url(url: &str) -> String {
    breaker_config::SharedStoreConfig::redacted_url(url)
}

/// The URL's password (and user), for [`scrub`].
pub(crate) fn secrets(url: &str) -> Vec<String> {
    let Some((_, rest)) = url.split_once("://") else {
        return Vec::new();
    };
    let Some((userinfo, _)) = rest.rsplit_once('@') else {
        return Vec::new();
    };
    userinfo
        .split(':')
        .filter(|s| s.len() >= 3)
        .map(str::to_string)
        .collect()
}

/// `message` with every secret replaced by `***`.
pub(crate) fn scrub(message: &str, secrets: &[String]) -> String {
    let mut m = message.to_string();
    for s in secrets {
        m = m.replace(s.as_str(), "***");
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_shown() {
        assert_eq!(
            redact_url("redis://alice:s3cret@cache.internal:6380/2"),
            "redis://cache.internal:6380/2"
        );
        assert_eq!(redact_url("redis://:s3cret@h:1"), "redis://h:1");
        assert_eq!(redact_url("rediss://h:1/0?password=x"), "rediss://h:1/0");
        assert_eq!(
            redact_url("redis://127.0.0.1:6379"),
            "redis://127.0.0.1:6379"
        );
        assert_eq!(redact_url("nonsense"), "<redis url>");
        let s = secrets("redis://alice:s3cret@h:1");
        assert_eq!(
            scrub("auth failed for alice with s3cret", &s),
            "auth failed for *** with ***"
        );
    }
}
