//! Spring Boot's relaxed names: `failureRateThreshold`, `failure-rate-threshold` and
//! `failure_rate_threshold` (any case) are the same property; map keys keep their spelling.

/// The uniform form of a property-name element: ASCII-lowercased, with `-` and `_` removed.
///
/// Two property names match when their uniform forms are equal (Spring Boot relaxed binding).
pub fn uniform(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The key of a map entry (an instance or config name) as Spring keeps it: an unbracketed key
/// loses every character other than ASCII letters, digits, `-` and `_`; a bracketed key
/// (`[my.backend]`) is kept verbatim.
pub fn map_key(element: &str, bracketed: bool) -> String {
    if bracketed {
        element.to_string()
    } else {
        element
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect()
    }
}

/// The canonical lowercase form used by Spring's lenient enum converter: letters and digits only.
pub fn enum_canonical(value: &str) -> String {
    value
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Returns the candidate closest to `written` (compared in uniform form), if it is close enough
/// to be a plausible typo. The suggestion is spelled like `written`: kebab-case when the user
/// wrote kebab-case, snake_case for snake_case, camelCase otherwise.
pub fn suggest<'a>(written: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let w = uniform(written);
    if w.is_empty() {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = strsim::damerau_levenshtein(&w, &uniform(c));
        if best.map_or(true, |(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    let (dist, name) = best?;
    let limit = (w.chars().count() / 4).clamp(1, 4);
    (dist <= limit).then(|| respell(name, written))
}

/// Spells the camelCase `name` in the style of `like` (kebab-case, snake_case or camelCase).
pub fn respell(name: &str, like: &str) -> String {
    let sep = if like.contains('-') {
        Some('-')
    } else if like.contains('_') {
        Some('_')
    } else {
        None
    };
    match sep {
        None => name.to_string(),
        Some(sep) => {
            let mut out = String::with_capacity(name.len() + 4);
            for c in name.chars() {
                if c.is_ascii_uppercase() {
                    out.push(sep);
                    out.push(c.to_ascii_lowercase());
                } else {
                    out.push(c);
                }
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_forms_match() {
        assert_eq!(uniform("failureRateThreshold"), "failureratethreshold");
        assert_eq!(uniform("failure-rate-threshold"), "failureratethreshold");
        assert_eq!(uniform("FAILURE_RATE_THRESHOLD"), "failureratethreshold");
    }

    #[test]
    fn map_keys_drop_invalid_characters_unless_bracketed() {
        assert_eq!(
            map_key("simple_circuit_breaker", false),
            "simple_circuit_breaker"
        );
        assert_eq!(map_key("order@v2", false), "orderv2");
        assert_eq!(map_key("my.backend", true), "my.backend");
    }

    #[test]
    fn suggestions() {
        let known = [
            "slidingWindowSize",
            "slidingWindowType",
            "minimumNumberOfCalls",
        ];
        assert_eq!(
            suggest("slidingWindowsSize", known).as_deref(),
            Some("slidingWindowSize")
        );
        assert_eq!(
            suggest("sliding-windows-size", known).as_deref(),
            Some("sliding-window-size")
        );
        assert_eq!(suggest("completelyDifferent", known), None);
    }
}
