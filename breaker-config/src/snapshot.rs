//! Reading the files of a [`LiveConfig`](crate::LiveConfig) for a reload: what a read saw of
//! every file (bytes, size, modification time), so that only content that stopped changing
//! is applied, and the guard against applying a half-written file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::config_files::ConfigFiles;
use crate::error::LoadError;
use crate::load::{source_from_bytes, Format, SourceText};

/// What a read saw of every file: path, bytes (`None`: unreadable), length and modification
/// time; two reads a settle time apart that are equal saw content that stopped changing.
pub(crate) type Fingerprint = Vec<(PathBuf, Option<Vec<u8>>, Option<(u64, Option<SystemTime>)>)>;

/// One read of the files.
pub(crate) struct Read {
    pub(crate) fingerprint: Fingerprint,
    /// The texts to load (exactly the bytes of the fingerprint), or why they cannot be.
    pub(crate) sources: Result<(Vec<SourceText>, Option<ConfigFiles>), LoadError>,
}

/// The default [`LiveConfig::set_settle_time`](crate::LiveConfig::set_settle_time): 100 ms.
pub const DEFAULT_SETTLE_TIME: Duration = Duration::from_millis(100);

/// Most settle rounds one reload waits for a file that keeps changing before it gives up
/// (the next change event tries again).
pub(crate) const MAX_SETTLE_ROUNDS: usize = 50;

pub(crate) fn stamp(p: &Path) -> Option<(u64, Option<SystemTime>)> {
    std::fs::metadata(p)
        .ok()
        .map(|m| (m.len(), m.modified().ok()))
}

pub(crate) fn read_paths(paths: &[PathBuf]) -> Read {
    let mut fingerprint = Vec::with_capacity(paths.len());
    let mut sources = Ok(Vec::with_capacity(paths.len()));
    for p in paths {
        let before = stamp(p);
        let bytes = std::fs::read(p);
        let after = stamp(p);
        // A write between the stamp and the read shows as a stamp that differs next time.
        let st = if before == after { after } else { None };
        let kept = bytes.as_ref().ok().cloned();
        if let Ok(list) = &mut sources {
            match bytes {
                Ok(b) => {
                    match source_from_bytes(p.display().to_string(), Format::from_path(p), b) {
                        Ok(s) => list.push(s),
                        Err(e) => sources = Err(e),
                    }
                }
                Err(e) => {
                    sources = Err(LoadError::Io {
                        path: p.display().to_string(),
                        message: e.to_string(),
                    })
                }
            }
        }
        fingerprint.push((p.clone(), kept, st));
    }
    Read {
        fingerprint,
        sources: sources.map(|s| (s, None)),
    }
}

/// Whether a file's text holds a `resilience4j` tree (`resilience4j: {}` counts: it says
/// "no settings" explicitly).
fn has_resilience4j(source: &SourceText, limits: &crate::Limits) -> bool {
    let file: Arc<str> = Arc::from(source.name.as_str());
    let docs = match source.format {
        Format::Yaml => crate::yaml::parse(&file, &source.text, limits, &mut Vec::new()),
        Format::Properties => crate::properties::parse(&file, &source.text, limits),
    };
    docs.map(|docs| {
        docs.iter().any(|d| {
            d.properties
                .iter()
                .any(|p| p.name.first().is_some_and(|e| e.is("resilience4j")))
        })
    })
    .unwrap_or(true)
}

/// Why `new` looks half-written next to `old` (the texts in force): a file that was not empty
/// and now is, or whose `resilience4j` tree is gone.
pub(crate) fn looks_torn(
    old: &[SourceText],
    new: &[SourceText],
    limits: &crate::Limits,
) -> Option<String> {
    for n in new {
        let Some(o) = old.iter().find(|o| o.name == n.name) else {
            continue;
        };
        if n.text.trim().is_empty() && !o.text.trim().is_empty() {
            return Some(format!("{} is empty", n.name));
        }
        if has_resilience4j(o, limits) && !has_resilience4j(n, limits) {
            return Some(format!("{} no longer has a resilience4j section", n.name));
        }
    }
    None
}

/// The fingerprint of files found from locations: their texts as read, and their stamps.
pub(crate) fn located_fingerprint(files: &ConfigFiles) -> Fingerprint {
    files
        .files
        .iter()
        .zip(&files.sources)
        .map(|(f, s)| {
            (
                f.path.clone(),
                Some(s.text.clone().into_bytes()),
                stamp(&f.path),
            )
        })
        .collect()
}
