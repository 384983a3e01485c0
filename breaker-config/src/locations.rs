//! Which files a Spring Boot application loads, as Spring Boot's `ConfigDataEnvironment`
//! finds them: the config locations (the defaults `./` and `./config/` (and `./config/*/`),
//! or `SPRING_CONFIG_LOCATION`, plus `SPRING_CONFIG_ADDITIONAL_LOCATION`), the
//! `application-{profile}` files beside each location, and the files named by
//! `spring.config.import`, each imported file taking precedence over the file that imports
//! it. `breaker check` / `simulate` / `explain` and the facade's global registry all use
//! [`ConfigLocations`], so they read the same files.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config_files::{ConfigFile, ConfigFiles, FileReason};
use crate::convert::class_list;
use crate::error::{LoadError, Warning};
use crate::load::{read_source, Format, Loaded, Loader, SourceText};
use crate::origin::Origin;
use crate::placeholders::Resolver;
use crate::profiles::{document_active, ActiveProfiles};
use crate::property::{parse_name, Document};

/// The longest chain of `spring.config.import`s followed (a file importing a file importing
/// ...); a deeper chain is a [`LoadError::Location`], never a stack overflow.
pub const MAX_IMPORT_DEPTH: usize = 32;

/// Where Spring Boot looks for configuration files.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("application.yml"), "spring.config.import: extra.yml\n").unwrap();
/// std::fs::write(dir.path().join("extra.yml"),
///     "resilience4j.retry.instances.a.maxAttempts: 5\n").unwrap();
/// let env = std::collections::HashMap::new();
/// let (files, loaded) = breaker_config::ConfigLocations::new()
///     .base_dir(dir.path())
///     .load(&breaker_config::Loader::new().env(env))
///     .unwrap();
/// assert_eq!(files.files.len(), 2); // application.yml, then extra.yml (which wins)
/// assert_eq!(loaded.modules.retry.instances["a"].max_attempts.value, 5);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ConfigLocations {
    files: Option<Vec<PathBuf>>,
    location: Option<String>,
    additional: Option<String>,
    base_dir: Option<PathBuf>,
}

/// One location: a file, or a directory holding `{name}.yml`, ...
#[derive(Clone, Debug)]
struct Loc {
    given: String,
    path: PathBuf,
    dir: bool,
    optional: bool,
}

impl ConfigLocations {
    /// Spring Boot's default locations (`optional:file:./;optional:file:./config/;
    /// optional:file:./config/*/`), replaced by `SPRING_CONFIG_LOCATION` and extended by
    /// `SPRING_CONFIG_ADDITIONAL_LOCATION` when those are set in the loader's environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// These files instead of the default locations (as `spring.config.location` naming
    /// files): each is read, with its profile-specific variants beside it
    /// (`application-prod.yml` beside `application.yml`) and its imports. A missing file is
    /// an error.
    pub fn files<P: AsRef<Path>>(paths: &[P]) -> Self {
        ConfigLocations {
            files: Some(paths.iter().map(|p| p.as_ref().to_path_buf()).collect()),
            ..Self::default()
        }
    }

    /// Uses `spec` as `spring.config.location` (overrides `SPRING_CONFIG_LOCATION`): comma-
    /// separated locations, each a file or a directory ending in `/`, with optional
    /// `optional:` and `file:` prefixes.
    pub fn location(mut self, spec: impl Into<String>) -> Self {
        self.location = Some(spec.into());
        self
    }

    /// Uses `spec` as `spring.config.additional-location` (overrides
    /// `SPRING_CONFIG_ADDITIONAL_LOCATION`): locations read after the others, so they win.
    pub fn additional_location(mut self, spec: impl Into<String>) -> Self {
        self.additional = Some(spec.into());
        self
    }

    /// Resolves relative locations against `dir` instead of the working directory.
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// Finds and reads the files, with the loader's environment and profiles.
    ///
    /// # Errors
    /// [`LoadError::Location`] for a missing non-optional location or import, an import
    /// chain deeper than [`MAX_IMPORT_DEPTH`] (a file imported again is read once, as Spring Boot does); the read and parse errors of
    /// [`Loader::load_files`].
    pub fn resolve(&self, loader: &Loader) -> Result<ConfigFiles, LoadError> {
        let process_env;
        let env = match &loader.env {
            Some(e) => e,
            None => {
                process_env = std::env::vars().collect::<HashMap<_, _>>();
                &process_env
            }
        };
        let mut warnings = Vec::new();
        let groups = self.groups(env, &mut warnings)?;
        let name = env
            .get("SPRING_CONFIG_NAME")
            .filter(|n| !n.trim().is_empty())
            .map_or("application", |n| n.trim())
            .to_string();
        // Pass 1: the files without profiles, to learn the active profiles from them.
        let mut first = Walk::new(loader, env, &name, None);
        first.locations(&groups)?;
        let profiles = ActiveProfiles::choose_resolved(
            &loader.profiles,
            env.get("SPRING_PROFILES_ACTIVE").map(String::as_str),
            &first.docs,
            &|v: &str| first.resolve(v),
        );
        // Pass 2: with the profiles, which add profile-specific files and the imports of
        // documents activated by a profile.
        let mut walk = Walk::new(loader, env, &name, Some(&profiles));
        walk.locations(&groups)?;
        for group in &groups {
            for p in &profiles.names {
                for loc in group {
                    walk.location(loc, Some(p), &mut Vec::new())?;
                }
            }
        }
        warnings.extend(walk.warnings);
        Ok(ConfigFiles {
            files: walk.files,
            looked_for: walk.looked_for,
            profiles: profiles.names.clone(),
            warnings,
            sources: walk.sources,
            documents: walk.docs,
            parse_warnings: walk.parse_warnings,
        })
    }

    /// [`resolve`](Self::resolve), then loads the files with `loader` (with the profiles
    /// found), the location warnings first among the loaded ones.
    ///
    /// # Errors
    /// As [`resolve`](Self::resolve).
    pub fn load(&self, loader: &Loader) -> Result<(ConfigFiles, Loaded), LoadError> {
        let files = self.resolve(loader)?;
        let loaded = files.load(loader)?;
        Ok((files, loaded))
    }

    /// The location groups, lowest precedence first. Spring reads a comma-separated list as
    /// separate groups and a `;`-separated one as one group (whose profile files come
    /// profile by profile).
    fn groups(
        &self,
        env: &HashMap<String, String>,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<Vec<Loc>>, LoadError> {
        let base = self.base_dir.clone().unwrap_or_else(|| PathBuf::from("."));
        let rel = |p: &str| -> PathBuf {
            if self.base_dir.is_none() {
                PathBuf::from(p)
            } else {
                base.join(p.trim_start_matches("./"))
            }
        };
        let mut groups: Vec<Vec<Loc>> = Vec::new();
        let location = self
            .location
            .clone()
            .or_else(|| env.get("SPRING_CONFIG_LOCATION").cloned())
            .filter(|s| !s.trim().is_empty());
        if let Some(files) = &self.files {
            for f in files {
                groups.push(vec![Loc {
                    given: f.display().to_string(),
                    path: f.clone(),
                    dir: f.is_dir(),
                    optional: false,
                }]);
            }
        } else if let Some(spec) = &location {
            groups.extend(parse_spec(spec, "SPRING_CONFIG_LOCATION", &rel, warnings)?);
        } else {
            let mut group = vec![
                dir_loc("optional:file:./", rel("./")),
                dir_loc("optional:file:./config/", rel("./config/")),
            ];
            group.extend(wildcard(&rel("./config/"), "optional:file:./config/*/"));
            groups.push(group);
        }
        let additional = self
            .additional
            .clone()
            .or_else(|| env.get("SPRING_CONFIG_ADDITIONAL_LOCATION").cloned())
            .filter(|s| !s.trim().is_empty());
        if let Some(spec) = additional {
            groups.extend(parse_spec(
                &spec,
                "SPRING_CONFIG_ADDITIONAL_LOCATION",
                &rel,
                warnings,
            )?);
        }
        Ok(groups)
    }
}

fn dir_loc(given: &str, path: PathBuf) -> Loc {
    Loc {
        given: given.to_string(),
        path,
        dir: true,
        optional: true,
    }
}

/// The subdirectories of `parent` (Spring's `config/*/`), in name order.
fn wildcard(parent: &Path, given: &str) -> Vec<Loc> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs.into_iter().map(|d| dir_loc(given, d)).collect()
}

/// One location item: `optional:`, `file:` prefixes, a directory ending in `/`, a
/// wildcard directory `config/*/` (its subdirectories); `classpath:` and other resolvers
/// (`configserver:`, `configtree:`) are not read and give a warning (no location).
fn parse_item(
    item: &str,
    rel: &dyn Fn(&str) -> PathBuf,
    at: Option<&Origin>,
    key: &str,
    warnings: &mut Vec<Warning>,
) -> Vec<Loc> {
    let given = item.trim().to_string();
    let mut rest = given.as_str();
    let optional = match rest.strip_prefix("optional:") {
        Some(r) => {
            rest = r;
            true
        }
        None => false,
    };
    if let Some(r) = rest.strip_prefix("file:") {
        rest = r;
    } else if let Some(prefix) = resolver_prefix(rest) {
        let why = if prefix == "classpath" {
            "classpath resources are inside the Java application's jar, which breaker cannot \
             read; copy the file beside application.yml and name it with `file:`"
        } else {
            "breaker reads files only"
        };
        warnings.push(Warning::new(
            at.cloned(),
            key.to_string(),
            format!("location '{given}' is not read ({why})"),
        ));
        return Vec::new();
    }
    if rest.is_empty() {
        return Vec::new();
    }
    if let Some(parent) = rest.strip_suffix("*/") {
        return wildcard(&rel(parent), &given);
    }
    vec![Loc {
        dir: rest.ends_with('/') || rest.ends_with('\\'),
        path: rel(rest),
        given,
        optional,
    }]
}

/// The resolver prefix of a location (`classpath`, `configserver`, ...), if any: letters,
/// digits or `-` before a `:` (a Windows drive letter `C:` is not one).
fn resolver_prefix(s: &str) -> Option<&str> {
    let (prefix, _) = s.split_once(':')?;
    let is_name = prefix.len() > 1
        && prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    is_name.then_some(prefix)
}

fn parse_spec(
    spec: &str,
    var: &str,
    rel: &dyn Fn(&str) -> PathBuf,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Vec<Loc>>, LoadError> {
    let mut groups = Vec::new();
    for group in spec.split(',') {
        let mut locs = Vec::new();
        for item in group.split(';').filter(|i| !i.trim().is_empty()) {
            for loc in parse_item(item, rel, None, var, warnings) {
                let exists = if loc.dir {
                    loc.path.is_dir()
                } else {
                    loc.path.is_file()
                };
                if !loc.optional && !exists {
                    return Err(LoadError::Location {
                        at: format!("environment {var}"),
                        message: format!(
                            "config location '{}' does not exist ({}); Spring Boot refuses to \
                             start; prefix it with `optional:` if it may be absent",
                            loc.given,
                            loc.path.display()
                        ),
                    });
                }
                locs.push(loc);
            }
        }
        if !locs.is_empty() {
            groups.push(locs);
        }
    }
    Ok(groups)
}

/// One pass over the locations: the files found, their texts and documents.
struct Walk<'a> {
    loader: &'a Loader,
    env: &'a HashMap<String, String>,
    name: &'a str,
    profiles: Option<&'a ActiveProfiles>,
    files: Vec<ConfigFile>,
    sources: Vec<SourceText>,
    docs: Vec<Document>,
    seen: HashSet<PathBuf>,
    looked_for: Vec<PathBuf>,
    warnings: Vec<Warning>,
    parse_warnings: Vec<Warning>,
}

/// The extensions Spring reads, lowest precedence first (`.properties` wins over `.yml` in
/// the same place).
const EXTENSIONS: [&str; 3] = ["yaml", "yml", "properties"];

impl<'a> Walk<'a> {
    fn new(
        loader: &'a Loader,
        env: &'a HashMap<String, String>,
        name: &'a str,
        profiles: Option<&'a ActiveProfiles>,
    ) -> Self {
        Walk {
            loader,
            env,
            name,
            profiles,
            files: Vec::new(),
            sources: Vec::new(),
            docs: Vec::new(),
            seen: HashSet::new(),
            looked_for: Vec::new(),
            warnings: Vec::new(),
            parse_warnings: Vec::new(),
        }
    }

    /// Placeholders in imports and profile names, against the environment and the
    /// documents read so far; an unresolvable one stays as written.
    fn resolve(&self, v: &str) -> String {
        let refs: Vec<&Document> = self.docs.iter().collect();
        let r = Resolver {
            env: self.env,
            docs: &refs,
            limits: &self.loader.limits,
            work: Default::default(),
        };
        r.resolve(v).unwrap_or_else(|_| v.to_string())
    }

    /// The files of every location without profile.
    fn locations(&mut self, groups: &[Vec<Loc>]) -> Result<(), LoadError> {
        for group in groups {
            for loc in group {
                self.location(loc, None, &mut Vec::new())?;
            }
        }
        Ok(())
    }

    /// The files of one location (its profile-specific ones with `profile`).
    fn location(
        &mut self,
        loc: &Loc,
        profile: Option<&str>,
        chain: &mut Vec<PathBuf>,
    ) -> Result<(), LoadError> {
        self.location_from(loc, profile, chain, None)
    }

    fn location_from(
        &mut self,
        loc: &Loc,
        profile: Option<&str>,
        chain: &mut Vec<PathBuf>,
        import: Option<&Origin>,
    ) -> Result<(), LoadError> {
        let reason = |path_given: &str| match (profile, import) {
            (Some(p), _) => FileReason::Profile(p.to_string()),
            (None, Some(o)) => FileReason::Import(o.clone()),
            (None, None) => FileReason::Location(path_given.to_string()),
        };
        if loc.dir {
            if !loc.path.is_dir() && !loc.optional && profile.is_none() {
                return Err(missing(loc, import));
            }
            let stem = match profile {
                Some(p) => format!("{}-{p}", self.name),
                None => self.name.to_string(),
            };
            for ext in EXTENSIONS {
                let path = loc.path.join(format!("{stem}.{ext}"));
                self.looked_for.push(path.clone());
                if path.is_file() {
                    self.file(path, reason(&loc.given), chain)?;
                }
            }
            return Ok(());
        }
        let path = match profile {
            Some(p) => profile_variant(&loc.path, p),
            None => loc.path.clone(),
        };
        self.looked_for.push(path.clone());
        if path.is_file() {
            self.file(path, reason(&loc.given), chain)
        } else if profile.is_none() && !loc.optional {
            Err(missing(loc, import))
        } else {
            Ok(())
        }
    }

    /// Reads one file (once, however often it is named), then its imports, each after it.
    fn file(
        &mut self,
        path: PathBuf,
        reason: FileReason,
        chain: &mut Vec<PathBuf>,
    ) -> Result<(), LoadError> {
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        // A file named again (an import cycle, or two documents importing it) is read once, at
        // its first place, as Spring Boot's ConfigDataImporter loads each resource once.
        if self.seen.contains(&key) {
            return Ok(());
        }
        if chain.len() >= MAX_IMPORT_DEPTH {
            return Err(LoadError::Location {
                at: reason_at(&reason),
                message: format!(
                    "spring.config.import chain deeper than {MAX_IMPORT_DEPTH} files (at {})",
                    path.display()
                ),
            });
        }
        if !self.seen.insert(key.clone()) {
            return Ok(());
        }
        let source = read_source(&path, &self.loader.limits)?;
        let file: Arc<str> = Arc::from(source.name.as_str());
        let docs = match source.format {
            Format::Yaml => crate::yaml::parse(
                &file,
                &source.text,
                &self.loader.limits,
                &mut self.parse_warnings,
            )?,
            Format::Properties => {
                crate::properties::parse(&file, &source.text, &self.loader.limits)?
            }
        };
        self.files.push(ConfigFile {
            path: path.clone(),
            reason,
        });
        self.sources.push(source);
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        chain.push(key);
        // Each document, then what it imports (which wins over it and loses to the file's
        // later documents, as Spring Boot orders a document's imports).
        for doc in docs {
            let imports = self.imports(std::slice::from_ref(&doc));
            self.docs.push(doc);
            for (item, origin) in imports {
                let rel = |p: &str| dir.join(p);
                let locs = parse_item(
                    &item,
                    &rel,
                    Some(&origin),
                    "spring.config.import",
                    &mut self.warnings,
                );
                for loc in locs {
                    self.location_from(&loc, None, chain, Some(&origin))?;
                    if let Some(profiles) = self.profiles {
                        for p in &profiles.names {
                            self.location_from(&loc, Some(p), chain, Some(&origin))?;
                        }
                    }
                }
            }
        }
        chain.pop();
        Ok(())
    }

    /// The `spring.config.import` items of the documents that apply (without profiles: the
    /// documents without a profile condition), placeholders resolved.
    fn imports(&self, docs: &[Document]) -> Vec<(String, Origin)> {
        let key = parse_name("spring.config.import");
        let none = ActiveProfiles { names: Vec::new() };
        let mut out = Vec::new();
        for d in docs {
            let active = match self.profiles {
                Some(p) => document_active(d, p, &mut Vec::new()),
                None => {
                    document_active(d, &none, &mut Vec::new()) && crate::profiles::unconditional(d)
                }
            };
            if !active {
                continue;
            }
            for p in d.get_list(&key).unwrap_or_default() {
                for item in class_list(&self.resolve(&p.value)) {
                    out.push((item, p.value_origin.clone()));
                }
            }
        }
        out
    }
}

/// `dir/app.yml` with profile `prod`: `dir/app-prod.yml`.
fn profile_variant(path: &Path, profile: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{profile}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{profile}"),
    };
    path.with_file_name(name)
}

fn reason_at(reason: &FileReason) -> String {
    match reason {
        FileReason::Import(o) => o.to_string(),
        other => other.to_string(),
    }
}

fn missing(loc: &Loc, import: Option<&Origin>) -> LoadError {
    let what = if loc.dir { "directory" } else { "file" };
    match import {
        Some(o) => LoadError::Location {
            at: o.to_string(),
            message: format!(
                "spring.config.import = '{}': no {what} {}; Spring Boot refuses to start; \
                 write `optional:{}` if it may be absent",
                loc.given,
                loc.path.display(),
                loc.given
            ),
        },
        None => LoadError::Io {
            path: loc.path.display().to_string(),
            message: format!(
                "no such {what} (config location '{}'; Spring Boot refuses to start)",
                loc.given
            ),
        },
    }
}

#[cfg(test)]
#[path = "locations_tests.rs"]
mod tests;
