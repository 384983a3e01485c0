//! The order in which Resilience4j's Spring support walks its `configs` and `instances` maps:
//! they are `java.util.HashMap`s that Spring's binder fills (`putAll`) in the order it meets
//! the entries, so iteration goes by hash bucket, then by insertion within a bucket.
//!
//! The order matters because building a config copies some properties into the properties
//! of the entries that inherit from it (`ConfigUtils.mergePropertiesIfAny`), so what an
//! instance inherits through a chain of configs can depend on which config was built first.

/// `String.hashCode()`: over UTF-16 code units, `h = 31 * h + c` with `int` overflow.
pub(crate) fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `HashMap.hash`: the high half folded into the low half.
fn spread(h: i32) -> u32 {
    let h = h as u32;
    h ^ (h >> 16)
}

/// `HashMap.tableSizeFor`: the smallest power of two >= `cap` (at least 1).
fn table_size_for(cap: usize) -> usize {
    cap.max(1).next_power_of_two()
}

/// A `new HashMap<>()` as far as iteration order goes: its table size and its keys in
/// insertion order.
#[derive(Debug, Default)]
pub(crate) struct JavaHashMap {
    capacity: usize,
    threshold: usize,
    keys: Vec<String>,
}

impl JavaHashMap {
    /// `HashMap.resize()` (0.75 load factor, default capacity 16).
    fn resize(&mut self) {
        if self.capacity > 0 {
            let old = self.capacity;
            self.capacity *= 2;
            self.threshold = if old >= 16 {
                self.threshold * 2
            } else {
                (self.capacity as f32 * 0.75) as usize
            };
        } else {
            self.capacity = if self.threshold > 0 {
                self.threshold
            } else {
                16
            };
            self.threshold = (self.capacity as f32 * 0.75) as usize;
        }
    }

    /// `putAll` of a map whose iteration order is `batch` (`HashMap.putMapEntries`).
    pub(crate) fn put_all(&mut self, batch: &[String]) {
        let s = batch.len();
        if s == 0 {
            return;
        }
        if self.capacity == 0 {
            let t = (s as f32 / 0.75 + 1.0) as usize;
            if t > self.threshold {
                self.threshold = table_size_for(t);
            }
        } else {
            while s > self.threshold {
                self.resize();
            }
        }
        for k in batch {
            if self.keys.contains(k) {
                continue; // a put of an existing key keeps its place
            }
            if self.capacity == 0 {
                self.resize();
            }
            self.keys.push(k.clone());
            if self.keys.len() > self.threshold {
                self.resize();
            }
        }
    }

    /// The iteration order: by bucket, then by insertion (a resize splits buckets without
    /// reordering their entries).
    pub(crate) fn iteration_order(&self) -> Vec<String> {
        let mask = self.capacity.saturating_sub(1) as u32;
        let mut keyed: Vec<(u32, usize, &String)> = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, k)| (spread(string_hash(k)) & mask, i, k))
            .collect();
        keyed.sort();
        keyed.into_iter().map(|(_, _, k)| k.clone()).collect()
    }
}

/// The iteration order of a `HashMap` filled by one `putAll` in `insertion` order.
pub(crate) fn iteration_order(insertion: &[String]) -> Vec<String> {
    let mut m = JavaHashMap::default();
    m.put_all(insertion);
    m.iteration_order()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn string_hash_is_javas() {
        // Values of "…".hashCode() worked out from s[0]*31^(n-1) + ... + s[n-1].
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        assert_eq!(string_hash("ab"), 97 * 31 + 98);
        // "default": overflows int; 1544803905 as java.lang.String#hashCode gives.
        assert_eq!(string_hash("default"), 1544803905);
        // Non-ASCII counts UTF-16 units: 'é' is 233.
        assert_eq!(string_hash("é"), 233);
    }

    #[test]
    fn small_maps_iterate_by_bucket() {
        // Three keys: table of 8 (3 / 0.75 + 1 = 5 -> 8). "c" = 99 -> bucket 3, "b" = 98 ->
        // 2, "a" = 97 -> 1: bucket order, whatever the insertion order.
        assert_eq!(
            iteration_order(&names(&["c", "b", "a"])),
            names(&["a", "b", "c"])
        );
        // "a" (97) and "i" (105) share bucket 1 of 8: insertion order within the bucket.
        assert_eq!(
            iteration_order(&names(&["i", "a", "b"])),
            names(&["i", "a", "b"])
        );
        assert_eq!(
            iteration_order(&names(&["a", "i", "b"])),
            names(&["a", "i", "b"])
        );
    }

    #[test]
    fn a_second_put_all_grows_the_table() {
        // One key: table of 2 (1 / 0.75 + 1 = 2.33 -> 2); "a" (97) -> bucket 1, "b" (98) -> 0.
        let mut m = JavaHashMap::default();
        m.put_all(&names(&["a"]));
        assert_eq!(m.capacity, 2);
        // Adding "b" makes 2 > threshold 1: table 4; "a" -> 1, "b" -> 2.
        m.put_all(&names(&["b"]));
        assert_eq!(m.capacity, 4);
        assert_eq!(m.iteration_order(), names(&["a", "b"]));
    }
}
