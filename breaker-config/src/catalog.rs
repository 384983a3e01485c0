//! Exception names nothing claims: `recordExceptions` / `ignoreExceptions` name Java classes;
//! the application tells which names its error types answer to (breaker-core's error
//! catalog), and names that nothing claims are reported.

use std::collections::HashSet;
use std::fmt;

use crate::model::ResolvedConfig;
use crate::origin::Origin;

/// Which list a name appears in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExceptionList {
    /// `recordExceptions`
    Record,
    /// `ignoreExceptions`
    Ignore,
    /// A retry's `retryExceptions`
    RetryExceptions,
    /// A retry's `ignoreExceptions`
    RetryIgnoreExceptions,
}

/// An exception name in the files that no registered error type answers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnclaimedName {
    /// The instance (or `default` for the default config).
    pub instance: String,
    /// The list it is in.
    pub list: ExceptionList,
    /// The name as written, e.g. `java.io.IOException`.
    pub name: String,
    /// Where it is written.
    pub origin: Option<Origin>,
}

impl fmt::Display for UnclaimedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = &self.origin {
            write!(f, "{o}: ")?;
        }
        let (module, list) = match self.list {
            ExceptionList::Record => ("circuit breaker", "recordExceptions"),
            ExceptionList::Ignore => ("circuit breaker", "ignoreExceptions"),
            ExceptionList::RetryExceptions => ("retry", "retryExceptions"),
            ExceptionList::RetryIgnoreExceptions => ("retry", "ignoreExceptions"),
        };
        write!(
            f,
            "{module} '{}': {list} names '{}', which no registered error type claims",
            self.instance, self.name
        )
    }
}

impl ResolvedConfig {
    /// Every exception name (in every instance and in the default config) for which
    /// `is_claimed` returns false, in instance order, each name reported once per instance
    /// and list.
    pub fn unclaimed_exception_names(
        &self,
        is_claimed: &dyn Fn(&str) -> bool,
    ) -> Vec<UnclaimedName> {
        let mut out = Vec::new();
        let all = self
            .instances
            .values()
            .chain(self.default_config.as_ref().ok());
        for i in all {
            push_unclaimed(
                &i.name,
                [
                    (
                        ExceptionList::Record,
                        &i.record_exceptions.value,
                        &i.record_exceptions_origins,
                    ),
                    (
                        ExceptionList::Ignore,
                        &i.ignore_exceptions.value,
                        &i.ignore_exceptions_origins,
                    ),
                ],
                is_claimed,
                &mut out,
            );
        }
        out
    }
}

/// One exception list of an instance: which list, its names (`None` when not configured) and
/// the positions of its items.
pub(crate) type NamedList<'a> = (ExceptionList, &'a Option<Vec<String>>, &'a Vec<Origin>);

/// The names of `lists` (each with the positions of its items) that `is_claimed` refuses,
/// each reported once per list, for the instance `instance`.
pub(crate) fn push_unclaimed(
    instance: &str,
    lists: [NamedList<'_>; 2],
    is_claimed: &dyn Fn(&str) -> bool,
    out: &mut Vec<UnclaimedName>,
) {
    for (list, names, origins) in lists {
        let Some(names) = names else { continue };
        // Each name once per list: a set, so that a list of 90,000 names stays linear
        // (a scan of the names before each one took seconds).
        let mut seen: HashSet<&str> = HashSet::with_capacity(names.len());
        for (k, n) in names.iter().enumerate() {
            if !seen.insert(n.as_str()) || is_claimed(n) {
                continue;
            }
            out.push(UnclaimedName {
                instance: instance.to_string(),
                list,
                name: n.clone(),
                origin: origins.get(k).cloned(),
            });
        }
    }
}
