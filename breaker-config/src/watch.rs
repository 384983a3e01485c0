//! Watching config files for changes: the directory of each file, debounced.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_mini::{new_debouncer, DebounceEventResult, Debouncer};

/// A running file watch started by [`LiveConfig::watch`](crate::LiveConfig::watch); dropping
/// it stops watching.
#[must_use = "watching stops when the Watch is dropped; keep it alive"]
pub struct Watch {
    _debouncer: Debouncer<notify::RecommendedWatcher>,
    dirs: Vec<PathBuf>,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").field("dirs", &self.dirs).finish()
    }
}

impl Watch {
    /// Watches the directories of `files` and calls `on_change` (debounced by `debounce`)
    /// after any change in them; the caller compares contents.
    pub(crate) fn start(
        files: &[PathBuf],
        debounce: Duration,
        on_change: impl Fn() + Send + 'static,
    ) -> Result<Watch, notify::Error> {
        // Directories, not files: an editor saves by writing a new file and renaming it over
        // the old one, and a Kubernetes ConfigMap swaps a `..data` symlink; both replace the
        // watched inode, which a watch on the file itself would lose.
        let dirs: BTreeSet<PathBuf> = files
            .iter()
            .map(|f| match f.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => Path::new(".").to_path_buf(),
            })
            .collect();
        let mut debouncer = new_debouncer(debounce, move |res: DebounceEventResult| {
            if let Err(e) = &res {
                tracing::warn!("config file watch error: {e}");
            }
            on_change();
        })?;
        for d in &dirs {
            debouncer.watcher().watch(d, RecursiveMode::NonRecursive)?;
        }
        Ok(Watch {
            _debouncer: debouncer,
            dirs: dirs.into_iter().collect(),
        })
    }
}
