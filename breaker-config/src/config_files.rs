//! What [`ConfigLocations`](crate::ConfigLocations) finds: the files an application reads,
//! why each is read, and their texts and documents, loaded with [`ConfigFiles::load`].

use std::path::PathBuf;

use crate::error::{LoadError, Warning};
use crate::load::{Loaded, Loader, SourceText};
use crate::origin::Origin;
use crate::property::Document;

/// Why a file is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileReason {
    /// It is a config location, or the `{name}.yml` / `.yaml` / `.properties` of one; the
    /// text is the location as given (`optional:file:./config/`, a path on the command line).
    Location(String),
    /// It is the profile-specific file (`application-prod.yml`) of a location or import.
    Profile(String),
    /// It is named by the `spring.config.import` written here.
    Import(Origin),
}

impl std::fmt::Display for FileReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileReason::Location(l) => write!(f, "config location {l}"),
            FileReason::Profile(p) => write!(f, "profile {p}"),
            FileReason::Import(o) => write!(f, "imported at {o}"),
        }
    }
}

/// One file that is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigFile {
    /// The path (relative paths stay relative to the working directory).
    pub path: PathBuf,
    /// Why it is read.
    pub reason: FileReason,
}

/// The files an application reads, lowest precedence first, and what was looked for.
#[derive(Clone, Debug)]
pub struct ConfigFiles {
    /// The files read, lowest precedence first: later files override earlier ones.
    pub files: Vec<ConfigFile>,
    /// Every path looked for, found or not (for "no config file found" messages).
    pub looked_for: Vec<PathBuf>,
    /// The active profiles the profile-specific files were chosen with.
    pub profiles: Vec<String>,
    /// Locations and imports that are not read (`classpath:`, `configserver:`, ...).
    pub warnings: Vec<Warning>,
    /// The texts read, one per file, in the same order.
    pub(crate) sources: Vec<SourceText>,
    /// Every document of the files, lowest precedence first: a document's imports right
    /// after it (so a later document of the importing file wins over them, as in Spring).
    pub(crate) documents: Vec<Document>,
    /// The warnings of parsing the files (duplicate keys, ...).
    pub(crate) parse_warnings: Vec<Warning>,
}

impl ConfigFiles {
    /// The paths of [`files`](Self::files).
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }
}

impl ConfigFiles {
    /// Loads the texts read by [`ConfigLocations::resolve`](crate::ConfigLocations::resolve) (no file is read again) with
    /// `loader` and the profiles found; the location warnings come first.
    ///
    /// # Errors
    /// Parse errors, as [`Loader::load_sources`].
    pub fn load(&self, loader: &Loader) -> Result<Loaded, LoadError> {
        let mut loader = loader.clone().profiles(self.profiles.clone());
        loader.imports_followed = true;
        let mut warnings = self.warnings.clone();
        warnings.extend(self.parse_warnings.iter().cloned());
        loader.load_documents(self.documents.clone(), warnings)
    }
}
