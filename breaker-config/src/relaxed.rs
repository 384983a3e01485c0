//! Spring Boot's relaxed names: `failureRateThreshold`, `failure-rate-threshold` and
//! `failure_rate_threshold` (any case) are the same property; map keys keep their spelling.

/// The uniform form of a property-name element: ASCII-lowercased, with `-` and `_` removed.
///
/// Two property names match when their uniform forms are equal (Spring Boot relaxed binding).
pub fn uniform(name: &str) -> String {
    // Spring compares unbracketed name elements by their lowercase ASCII letters and digits
    // only (`ConfigurationPropertyName.defaultElementEquals`).
    name.chars()
        .filter_map(java_lower)
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

/// Java's `Character.toLowerCase(char)` for the cases that matter here: the first char of
/// Rust's lowercase mapping (`'İ'` lowercases to `'i'`, as in Java).
fn java_lower(c: char) -> Option<char> {
    c.to_lowercase().next()
}

/// Whether Spring keeps character `c` at position `index` of an unbracketed name element
/// (`ElementsParser.isValidChar` on the lowercased char): ASCII letters and digits anywhere,
/// `-` anywhere but first.
fn valid_char(c: char, index: usize) -> bool {
    java_lower(c).is_some_and(|l| l.is_ascii_lowercase() || l.is_ascii_digit())
        || (index != 0 && c == '-')
}

/// Whether Spring drops an unbracketed name element altogether: one with no character it
/// keeps (for example `断路器` or `___`) leaves no element at all in the adapted name.
pub fn element_vanishes(element: &str) -> bool {
    !element.chars().enumerate().any(|(i, c)| valid_char(c, i))
}

/// The key of a map entry (an instance or config name) as Spring keeps it: an unbracketed key
/// loses every character other than ASCII letters, digits, `-` (except as its first character)
/// and `_` (`ConfigurationPropertyName.convertToOriginalForm`); a bracketed key
/// (`[my.backend]`) is kept verbatim.
pub fn map_key(element: &str, bracketed: bool) -> String {
    if bracketed {
        element.to_string()
    } else {
        element
            .chars()
            .enumerate()
            .filter(|(i, c)| *c == '_' || valid_char(*c, *i))
            .map(|(_, c)| c)
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
        if best.is_none_or(|(bd, _)| d < bd) {
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
        assert_eq!(map_key("-lead", false), "lead");
        assert_eq!(map_key("a-b-", false), "a-b-");
        assert_eq!(map_key("café", false), "caf");
        assert_eq!(map_key("Upper_Case-x", false), "Upper_Case-x");
        assert!(element_vanishes("断路器"));
        assert!(element_vanishes("___"));
        assert!(!element_vanishes("_-"));
        assert!(!element_vanishes("é1"));
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
