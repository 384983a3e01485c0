//! The loader: reads files (or strings), picks the active documents, binds and resolves.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::bind;
use crate::error::{LoadError, Warning};
use crate::limits::Limits;
use crate::management::ManagementConfig;
use crate::model::ResolvedConfig;
use crate::modules::ModulesConfig;
use crate::placeholders::Resolver;
use crate::profiles::{document_active, ActiveProfiles};
use crate::property::Document;
use crate::resolve;

/// The syntax of a configuration source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `application.yml` / `.yaml` (multi-document).
    Yaml,
    /// `application.properties` (`#---` separates documents).
    Properties,
}

impl Format {
    /// `.properties` files are [`Format::Properties`]; everything else is YAML.
    pub fn from_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("properties") => Format::Properties,
            _ => Format::Yaml,
        }
    }
}

/// One source text to load, lowest precedence first when several are given.
#[derive(Clone, Debug)]
pub struct SourceText {
    /// Name used in positions (`name:line:column`), usually the path.
    pub name: String,
    /// The syntax.
    pub format: Format,
    /// The content.
    pub text: String,
}

/// The result of a load: the resolved circuit-breaker configuration, the other modules'
/// sections, the warnings, and the active documents (all their properties).
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The resolved circuit-breaker configuration (check [`ResolvedConfig::all_errors`]).
    pub config: ResolvedConfig,
    /// The resolved retry, time-limiter, bulkhead, thread-pool-bulkhead and rate-limiter
    /// sections and the aspect orders.
    pub modules: ModulesConfig,
    /// Unknown keys, 1.x keys, ignored documents.
    pub warnings: Vec<Warning>,
    /// Every active document, lowest precedence first: the parsed model of all sections
    /// (retry, bulkhead, spring.*, ...), kept for callers that need them. After the files'
    /// documents come those of the environment, `SPRING_APPLICATION_JSON` (when set) and the
    /// command line (their properties' origins name the variable or argument).
    pub documents: Vec<Document>,
    /// The `management.*` settings (metric tags, health indicators, endpoint exposure) and
    /// each module's `tags` / `metrics.enabled`.
    pub management: ManagementConfig,
    /// `management.*` values Spring Boot could not bind (part of [`errors`](Self::errors)).
    pub management_errors: Vec<crate::ConfigError>,
    /// breaker's own `breaker.*` keys: which instances share their state through Redis,
    /// and the Redis settings (issue #16).
    pub shared_store: crate::SharedStoreConfig,
    /// `breaker.*` values that are not valid (part of [`errors`](Self::errors)).
    pub shared_store_errors: Vec<crate::ConfigError>,
    /// breaker's own budget keys: `breaker.deadline.*`, and the `breaker.retry.instances.*`
    /// deadline, nesting and retry-budget settings (issue #27).
    pub budgets: crate::BudgetsConfig,
    /// Budget values that are not valid (part of [`errors`](Self::errors)).
    pub budgets_errors: Vec<crate::ConfigError>,
    /// breaker's drills, `breaker.drill.instances.<name>.*` (issue #28).
    pub drills: crate::DrillsConfig,
    /// `breaker.drill.*` values that are not valid (part of [`errors`](Self::errors)).
    pub drill_errors: Vec<crate::ConfigError>,
}

impl Loaded {
    /// Every error of every section: empty when Spring Boot would start with these files
    /// (it refuses to start on any of them).
    pub fn errors(&self) -> Vec<&crate::ConfigError> {
        let mut out = self.config.all_errors();
        out.extend(self.modules.all_errors());
        out.extend(self.management_errors.iter());
        out.extend(self.shared_store_errors.iter());
        out.extend(self.budgets_errors.iter());
        out.extend(self.drill_errors.iter());
        out
    }
}

/// Loads Spring Boot configuration files.
///
/// ```
/// let loaded = breaker_config::Loader::new()
///     .env(std::collections::HashMap::new())
///     .load_str("application.yml", breaker_config::Format::Yaml,
///         "resilience4j.circuitbreaker.instances.a.slidingWindowSize: 10\n")
///     .unwrap();
/// assert_eq!(loaded.config.instances["a"].sliding_window_size.value, 10);
/// ```
#[derive(Clone, Debug)]
pub struct Loader {
    pub(crate) profiles: Vec<String>,
    pub(crate) env: Option<HashMap<String, String>>,
    pub(crate) args: Vec<String>,
    pub(crate) limits: Limits,
    /// Whether `spring.config.import` was followed before (by [`crate::ConfigLocations`]);
    /// otherwise an import gives a warning.
    pub(crate) imports_followed: bool,
}

impl Default for Loader {
    fn default() -> Self {
        Self::new()
    }
}

impl Loader {
    /// A loader using the process environment (overrides, `SPRING_APPLICATION_JSON`,
    /// placeholders, `SPRING_PROFILES_ACTIVE`), no command-line arguments, and default
    /// [`Limits`].
    pub fn new() -> Self {
        Loader {
            profiles: Vec::new(),
            env: None,
            args: Vec::new(),
            limits: Limits::default(),
            imports_followed: false,
        }
    }

    /// Activates these Spring profiles (overrides `SPRING_PROFILES_ACTIVE` and
    /// `spring.profiles.active`). Items may be comma-separated.
    pub fn profiles<I, S>(mut self, profiles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.profiles = profiles.into_iter().map(Into::into).collect();
        self
    }

    /// Uses `vars` instead of the process environment, for everything the environment
    /// feeds: overrides with Spring Boot's relaxed names
    /// (`RESILIENCE4J_RETRY_INSTANCES_PAYMENTS_MAXATTEMPTS=5`), `SPRING_APPLICATION_JSON`,
    /// placeholders and `SPRING_PROFILES_ACTIVE`.
    pub fn env(mut self, vars: HashMap<String, String>) -> Self {
        self.env = Some(vars);
        self
    }

    /// Reads these command-line arguments as Spring Boot's `SpringApplication.run(args)`
    /// does: `--resilience4j.retry.instances.payments.max-attempts=5` overrides every other
    /// source. Pass the program's arguments without the program name
    /// (`std::env::args().skip(1)`); arguments that are not `--name[=value]` are ignored,
    /// and a bare `--` ends the options.
    ///
    /// Precedence, as Spring Boot's externalized configuration: command line >
    /// `SPRING_APPLICATION_JSON` > OS environment > profile files > application files.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// This loader with the process environment read now and kept: later loads (a live
    /// reload) see the environment as it was at start, as a running Spring Boot application
    /// does. A loader given [`env`](Self::env) is returned unchanged.
    pub fn with_environment_fixed(mut self) -> Self {
        if self.env.is_none() {
            self.env = Some(std::env::vars().collect());
        }
        self
    }

    /// Uses these budgets.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Loads files, later ones overriding earlier ones. The format follows the extension.
    ///
    /// Errors: [`LoadError::Io`] for an unreadable or non-UTF-8 file, [`LoadError::Budget`]
    /// for a file larger than [`Limits::max_file_bytes`], and parse errors.
    pub fn load_files<P: AsRef<Path>>(&self, paths: &[P]) -> Result<Loaded, LoadError> {
        let mut sources = Vec::with_capacity(paths.len());
        for p in paths {
            sources.push(read_source(p.as_ref(), &self.limits)?);
        }
        self.load_sources(&sources)
    }

    /// Loads one text.
    pub fn load_str(&self, name: &str, format: Format, text: &str) -> Result<Loaded, LoadError> {
        self.load_sources(&[SourceText {
            name: name.to_string(),
            format,
            text: text.to_string(),
        }])
    }

    /// Loads several texts, later ones overriding earlier ones; the environment,
    /// `SPRING_APPLICATION_JSON` and the command-line arguments override them all.
    ///
    /// Errors: as [`load_files`](Self::load_files), and [`LoadError::Syntax`] for a
    /// `SPRING_APPLICATION_JSON` that is not a JSON object or an argument `--=value`.
    pub fn load_sources(&self, sources: &[SourceText]) -> Result<Loaded, LoadError> {
        let mut warnings = Vec::new();
        let mut docs = Vec::new();
        for s in sources {
            if s.text.len() > self.limits.max_file_bytes {
                return Err(too_large(&s.name, s.text.len(), &self.limits));
            }
            let file: Arc<str> = Arc::from(s.name.as_str());
            let parsed = match s.format {
                Format::Yaml => crate::yaml::parse(&file, &s.text, &self.limits, &mut warnings)?,
                Format::Properties => crate::properties::parse(&file, &s.text, &self.limits)?,
            };
            docs.extend(parsed);
        }
        self.load_documents(docs, warnings)
    }

    /// Binds and resolves parsed documents, lowest precedence first, after `warnings` (of
    /// parsing them).
    pub(crate) fn load_documents(
        &self,
        mut docs: Vec<Document>,
        mut warnings: Vec<Warning>,
    ) -> Result<Loaded, LoadError> {
        let process_env;
        let env = match &self.env {
            Some(e) => e,
            None => {
                process_env = std::env::vars().collect::<HashMap<_, _>>();
                &process_env
            }
        };
        // The environment, SPRING_APPLICATION_JSON and the command line rank above every file.
        docs.extend(crate::sources::documents(env, &self.args)?);
        let all: Vec<&Document> = docs.iter().collect();
        let pre = Resolver {
            env,
            docs: &all,
            limits: &self.limits,
            work: Default::default(),
        };
        let profiles = ActiveProfiles::choose_resolved(
            &self.profiles,
            // SPRING_PROFILES_ACTIVE is in the environment document, ranked below the
            // JSON and command-line documents, as in Spring Boot.
            None,
            &docs,
            &|v: &str| pre.resolve(v).unwrap_or_else(|_| v.to_string()),
        );
        let active: Vec<Document> = docs
            .into_iter()
            .filter(|d| document_active(d, &profiles, &mut warnings))
            .collect();
        if !self.imports_followed {
            warn_imports(&active, &mut warnings);
        }
        // Names spelled differently under relaxed equality bind the same settings (Spring's
        // binder); the documents returned stay as written.
        let shared = crate::map_keys::share_relaxed_entries(&active);
        let refs: Vec<&Document> = shared.as_ref().unwrap_or(&active).iter().collect();
        let resolver = Resolver {
            env,
            docs: &refs,
            limits: &self.limits,
            work: Default::default(),
        };
        crate::unresolved::warnings(&refs, &resolver, &mut warnings);
        let section = bind::bind(&refs, &resolver, &mut warnings);
        let mut config = resolve::resolve_all(&section, profiles.names);
        crate::to_core::validate_with_core(&mut config);
        let modules = crate::modules::load(&refs, &resolver, &mut warnings);
        let (management, management_errors) =
            crate::management::read(&refs, &resolver, &mut warnings);
        let (shared_store, shared_store_errors) =
            crate::shared_store::read(&refs, &resolver, &mut warnings);
        let (budgets, budgets_errors) = crate::budgets::read(&refs, &resolver);
        let (drills, drill_errors) = crate::drill::read(&refs, &resolver, &mut warnings);
        if shared.is_some() {
            // A setting bound under two spellings of a name is warned about once.
            let mut seen = std::collections::HashSet::new();
            warnings.retain(|w| seen.insert((w.origin.clone(), w.message.clone())));
        }
        Ok(Loaded {
            config,
            modules,
            warnings,
            documents: active,
            management,
            management_errors,
            shared_store,
            shared_store_errors,
            budgets,
            budgets_errors,
            drills,
            drill_errors,
        })
    }
}

/// Warns about `spring.config.import` in files loaded as given (not through
/// [`crate::ConfigLocations`], which follows imports).
fn warn_imports(docs: &[Document], warnings: &mut Vec<Warning>) {
    let key = crate::property::parse_name("spring.config.import");
    for d in docs {
        if let Some(p) = d.get_list(&key).and_then(|l| l.into_iter().next()) {
            warnings.push(Warning::new(
                Some(p.key_origin.clone()),
                "spring.config.import".into(),
                "not followed here: these files are loaded exactly as given; load them with \
                 breaker_config::ConfigLocations (as `breaker check` and the global registry \
                 do) to read the imported files"
                    .into(),
            ));
        }
    }
}

/// Reads one file as a [`SourceText`]: `.properties` as ISO-8859-1 when not UTF-8 (every
/// byte one character, as Spring reads them), YAML as UTF-8.
///
/// Errors: [`LoadError::Io`] for an unreadable or non-UTF-8 YAML file, [`LoadError::Budget`]
/// for a file larger than [`Limits::max_file_bytes`].
pub(crate) fn read_source(p: &Path, limits: &Limits) -> Result<SourceText, LoadError> {
    let name = p.display().to_string();
    let io = |e: std::io::Error| LoadError::Io {
        path: name.clone(),
        message: e.to_string(),
    };
    let meta = std::fs::metadata(p).map_err(io)?;
    if meta.len() > limits.max_file_bytes as u64 {
        return Err(too_large(&name, meta.len() as usize, limits));
    }
    let bytes = std::fs::read(p).map_err(io)?;
    source_from_bytes(name, Format::from_path(p), bytes)
}

/// The [`SourceText`] of bytes read from a file named `name`.
pub(crate) fn source_from_bytes(
    name: String,
    format: Format,
    bytes: Vec<u8>,
) -> Result<SourceText, LoadError> {
    let text = match format {
        // `.properties` files are ISO-8859-1 for Spring: every byte is one character.
        Format::Properties => match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => e.into_bytes().iter().map(|&b| b as char).collect(),
        },
        Format::Yaml => String::from_utf8(bytes).map_err(|e| LoadError::Io {
            path: name.clone(),
            message: format!("not UTF-8: {e}"),
        })?,
    };
    Ok(SourceText { name, format, text })
}

fn too_large(name: &str, size: usize, limits: &Limits) -> LoadError {
    LoadError::Budget {
        origin: crate::Origin::new(Arc::from(name), 1, 1),
        message: format!(
            "file is {size} bytes, more than the limit of {} bytes",
            limits.max_file_bytes
        ),
    }
}
