//! The `management.*` keys of Spring Boot Actuator that concern Resilience4j (metric tags,
//! health indicators, endpoint exposure), and each module section's `tags` and
//! `metrics.enabled`: bound with Spring's relaxed names, placeholders and precedence, each bad
//! value an error with its file and line. Every other `management.*` key gets a warning: it
//! configures a part of Spring Boot that does not exist here.

use std::collections::BTreeMap;

use crate::convert;
use crate::error::{ConfigError, Warning};
use crate::placeholders::Resolver;
use crate::property::{Document, Property};
use crate::relaxed::map_key;

/// `management.endpoint.health.show-details` / `show-components` (Spring Boot's `Show`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ShowDetails {
    /// `never` (the default): `/actuator/health` gives the status only.
    #[default]
    Never,
    /// `when-authorized`: only to authorized users. There is no authorization here, so it
    /// shows what `never` shows, as Spring Boot does for an unauthenticated request.
    WhenAuthorized,
    /// `always`: every component and its details.
    Always,
}

impl ShowDetails {
    /// Whether details (and components) are shown to an unauthenticated request.
    pub fn shown(self) -> bool {
        self == ShowDetails::Always
    }
}

/// `resilience4j.<module>.metrics.enabled` and `resilience4j.<module>.tags` of one module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleMetrics {
    /// `metrics.enabled` (default true): `false` registers no meter for the module.
    pub enabled: bool,
    /// `tags.<key>: <value>`: added to every meter of the module (Resilience4j's registry
    /// tags).
    pub tags: BTreeMap<String, String>,
}

impl Default for ModuleMetrics {
    fn default() -> Self {
        ModuleMetrics {
            enabled: true,
            tags: BTreeMap::new(),
        }
    }
}

/// Spring Boot's default `management.endpoint.health.status.order`.
pub const DEFAULT_STATUS_ORDER: [&str; 4] = ["DOWN", "OUT_OF_SERVICE", "UP", "UNKNOWN"];

/// The module sections whose `tags` / `metrics` are read, as `resilience4j.<section>`.
pub const METRIC_SECTIONS: [&str; 6] = [
    "circuitbreaker",
    "retry",
    "timelimiter",
    "bulkhead",
    "thread-pool-bulkhead",
    "ratelimiter",
];

/// What the files say about operating the service: Spring Boot Actuator's `management.*`
/// keys that breaker honours, with Spring Boot's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagementConfig {
    /// `management.metrics.tags.<key>: <value>`: tags on every meter (e.g. `application`).
    pub metrics_tags: BTreeMap<String, String>,
    /// `management.metrics.distribution.percentiles-histogram.<meter prefix>: true|false`:
    /// meter-name prefixes (`resilience4j.circuitbreaker.calls`, `all`) exported as
    /// Prometheus histograms (`_bucket{le=...}`) instead of summaries.
    pub percentiles_histogram: BTreeMap<String, bool>,
    /// `management.health.circuitbreakers.enabled` (default false): the `circuitBreakers`
    /// health component.
    pub health_circuit_breakers: bool,
    /// `management.health.ratelimiters.enabled` (default false): the `rateLimiters` health
    /// component.
    pub health_rate_limiters: bool,
    /// `management.health.ping.enabled` (default true): the `ping` component, always `UP`.
    pub health_ping: bool,
    /// `management.endpoint.health.show-details` (default `never`).
    pub show_details: ShowDetails,
    /// `management.endpoint.health.show-components` (default: as `show-details`).
    pub show_components: Option<ShowDetails>,
    /// `management.endpoint.health.status.order` (default `DOWN, OUT_OF_SERVICE, UP,
    /// UNKNOWN`): how statuses aggregate; statuses not listed do not count.
    pub status_order: Vec<String>,
    /// `management.endpoints.web.base-path` (default `/actuator`).
    pub base_path: String,
    /// `management.endpoints.web.exposure.include` (default `health`; `*` is every endpoint).
    pub exposure_include: Vec<String>,
    /// `management.endpoints.web.exposure.exclude` (default none; wins over `include`).
    pub exposure_exclude: Vec<String>,
    /// `resilience4j.<section>.metrics.enabled` and `.tags`, by section name
    /// ([`METRIC_SECTIONS`]).
    pub modules: BTreeMap<&'static str, ModuleMetrics>,
}

impl Default for ManagementConfig {
    fn default() -> Self {
        ManagementConfig {
            metrics_tags: BTreeMap::new(),
            percentiles_histogram: BTreeMap::new(),
            health_circuit_breakers: false,
            health_rate_limiters: false,
            health_ping: true,
            show_details: ShowDetails::Never,
            show_components: None,
            status_order: DEFAULT_STATUS_ORDER.iter().map(|s| s.to_string()).collect(),
            base_path: "/actuator".into(),
            exposure_include: vec!["health".into()],
            exposure_exclude: Vec::new(),
            modules: METRIC_SECTIONS
                .iter()
                .map(|s| (*s, ModuleMetrics::default()))
                .collect(),
        }
    }
}

impl ManagementConfig {
    /// Whether the web endpoint `id` (`health`, `prometheus`, `circuitbreakers`, ...) is
    /// exposed: listed in `exposure.include` (or `*` there) and not in `exposure.exclude`
    /// (`*` there excludes every endpoint), as Spring Boot decides.
    pub fn exposes(&self, id: &str) -> bool {
        let listed = |l: &[String]| l.iter().any(|e| e == "*" || e.eq_ignore_ascii_case(id));
        listed(&self.exposure_include) && !listed(&self.exposure_exclude)
    }

    /// Whether `/actuator/health` shows its components.
    pub fn components_shown(&self) -> bool {
        self.show_components.unwrap_or(self.show_details).shown()
    }

    /// Whether the meter `name` (e.g. `resilience4j.circuitbreaker.calls`) is exported as a
    /// histogram: the longest matching prefix of `percentiles-histogram` decides (`all`
    /// matches every meter), as Spring Boot's `PropertiesMeterFilter` does.
    pub fn percentiles_histogram_for(&self, name: &str) -> bool {
        let mut best: Option<(usize, bool)> = None;
        for (prefix, on) in &self.percentiles_histogram {
            let len = if prefix == "all" {
                0
            } else if name == prefix || name.starts_with(&format!("{prefix}.")) {
                prefix.len()
            } else {
                continue;
            };
            if best.is_none_or(|(l, _)| len >= l) {
                best = Some((len, *on));
            }
        }
        best.is_some_and(|(_, on)| on)
    }

    /// The tags of every meter of `section` ([`METRIC_SECTIONS`]): `management.metrics.tags`
    /// then the section's own `tags` (which win on the same key), sorted by key.
    pub fn tags_for(&self, section: &str) -> BTreeMap<String, String> {
        let mut tags = self.metrics_tags.clone();
        if let Some(m) = self.modules.get(section) {
            tags.extend(m.tags.clone());
        }
        tags
    }

    /// Whether `resilience4j.<section>.metrics.enabled` leaves the module's meters on.
    pub fn metrics_enabled(&self, section: &str) -> bool {
        self.modules.get(section).is_none_or(|m| m.enabled)
    }
}

/// One value of the files, after precedence: the property (or the list items) that win.
enum Found<'a> {
    Scalar(&'a Property),
    List(Vec<&'a Property>),
}

/// Reads the management settings of `docs` (lowest precedence first).
pub(crate) fn read(
    docs: &[&Document],
    resolver: &Resolver<'_>,
    warnings: &mut Vec<Warning>,
) -> (ManagementConfig, Vec<ConfigError>) {
    let mut c = ManagementConfig::default();
    let mut errors = Vec::new();
    let mut r = Reader {
        resolver,
        errors: &mut errors,
    };

    if let Some(v) = r.flag(
        docs,
        &["management", "health", "circuitbreakers", "enabled"],
    ) {
        c.health_circuit_breakers = v;
    }
    if let Some(v) = r.flag(docs, &["management", "health", "ratelimiters", "enabled"]) {
        c.health_rate_limiters = v;
    }
    if let Some(v) = r.flag(docs, &["management", "health", "ping", "enabled"]) {
        c.health_ping = v;
    }
    if let Some(v) = r.show(docs, &["management", "endpoint", "health", "show-details"]) {
        c.show_details = v;
    }
    if let Some(v) = r.show(
        docs,
        &["management", "endpoint", "health", "show-components"],
    ) {
        c.show_components = Some(v);
    }
    if let Some(v) = r.list(
        docs,
        &["management", "endpoint", "health", "status", "order"],
    ) {
        c.status_order = v.into_iter().map(|s| s.to_ascii_uppercase()).collect();
    }
    if let Some((p, v)) = r.text(docs, &["management", "endpoints", "web", "base-path"]) {
        match base_path(&v) {
            Ok(path) => c.base_path = path,
            Err(message) => r.errors.push(error(
                p,
                &v,
                message,
                "a path such as /actuator, /manage or / (no query, no '{')",
            )),
        }
    }
    if let Some(v) = r.list(
        docs,
        &["management", "endpoints", "web", "exposure", "include"],
    ) {
        c.exposure_include = v;
    }
    if let Some(v) = r.list(
        docs,
        &["management", "endpoints", "web", "exposure", "exclude"],
    ) {
        c.exposure_exclude = v;
    }

    // Maps: the last property of the highest document for each key wins.
    let mut tags: BTreeMap<String, &Property> = BTreeMap::new();
    let mut histogram: BTreeMap<String, &Property> = BTreeMap::new();
    let mut module_tags: BTreeMap<(&'static str, String), &Property> = BTreeMap::new();
    let mut module_enabled: BTreeMap<&'static str, &Property> = BTreeMap::new();
    for p in docs.iter().flat_map(|d| d.properties.iter()) {
        let n = &p.name;
        if n.is_empty() {
            continue;
        }
        if n[0].is("management") {
            if starts(p, &["management", "metrics", "tags"]) && n.len() == 4 {
                tags.insert(map_key(&n[3].text, n[3].bracketed), p);
            } else if starts(
                p,
                &[
                    "management",
                    "metrics",
                    "distribution",
                    "percentiles-histogram",
                ],
            ) && n.len() > 4
            {
                let prefix: Vec<&str> = n[4..].iter().map(|e| e.text.as_str()).collect();
                histogram.insert(prefix.join("."), p);
            } else if !is_scalar_key(p) {
                warnings.push(Warning::new(
                    Some(p.key_origin.clone()),
                    p.key.clone(),
                    "a Spring Boot management setting that breaker does not read; ignored (the README's \"Operating it\" lists those it reads)".into(),
                ));
            }
            continue;
        }
        if !n[0].is("resilience4j") || n.len() < 3 {
            continue;
        }
        let Some(section) = METRIC_SECTIONS.iter().find(|s| n[1].is(s)) else {
            continue;
        };
        if n[2].is("tags") && n.len() == 4 {
            module_tags.insert((section, map_key(&n[3].text, n[3].bracketed)), p);
        } else if n[2].is("metrics") {
            if n.len() == 4 && n[3].is("enabled") {
                module_enabled.insert(section, p);
            } else if !(n.len() == 5 && n[3].is("legacy") && n[4].is("enabled")) {
                warnings.push(Warning::new(
                    Some(p.key_origin.clone()),
                    p.key.clone(),
                    format!(
                        "unknown key (Spring binds resilience4j.{section}.metrics.enabled and .metrics.legacy.enabled); ignored"
                    ),
                ));
            }
        }
    }
    for (key, p) in tags {
        if let Some(v) = r.resolved(p) {
            c.metrics_tags.insert(key, v);
        }
    }
    for (prefix, p) in histogram {
        if let Some(v) = r.bool_of(p) {
            c.percentiles_histogram.insert(prefix, v);
        }
    }
    for ((section, key), p) in module_tags {
        if let Some(v) = r.resolved(p) {
            if let Some(m) = c.modules.get_mut(section) {
                m.tags.insert(key, v);
            }
        }
    }
    for (section, p) in module_enabled {
        if let Some(v) = r.bool_of(p) {
            if let Some(m) = c.modules.get_mut(section) {
                m.enabled = v;
            }
        }
    }
    (c, errors)
}

/// Whether `p` is one of the single-valued (or list) management keys read by [`read`].
fn is_scalar_key(p: &Property) -> bool {
    const KEYS: [&[&str]; 9] = [
        &["management", "health", "circuitbreakers", "enabled"],
        &["management", "health", "ratelimiters", "enabled"],
        &["management", "health", "ping", "enabled"],
        &["management", "endpoint", "health", "show-details"],
        &["management", "endpoint", "health", "show-components"],
        &["management", "endpoint", "health", "status", "order"],
        &["management", "endpoints", "web", "base-path"],
        &["management", "endpoints", "web", "exposure", "include"],
        &["management", "endpoints", "web", "exposure", "exclude"],
    ];
    KEYS.iter().any(|k| {
        starts(p, k)
            && (p.name.len() == k.len()
                || (p.name.len() == k.len() + 1 && p.name[k.len()].index().is_some()))
    })
}

/// Whether `p`'s name begins with `prefix` (relaxed).
fn starts(p: &Property, prefix: &[&str]) -> bool {
    p.name.len() >= prefix.len() && prefix.iter().zip(&p.name).all(|(k, e)| e.is(k))
}

/// The winning value of the key `name`: the highest-precedence document that writes it, as a
/// scalar or as indexed list items (taken whole from that document, as Spring does).
fn find<'a>(docs: &[&'a Document], name: &[&str]) -> Option<Found<'a>> {
    for d in docs.iter().rev() {
        let items: Vec<&Property> = d
            .properties
            .iter()
            .filter(|p| {
                starts(p, name)
                    && p.name.len() == name.len() + 1
                    && p.name[name.len()].index().is_some()
            })
            .collect();
        let scalar = d
            .properties
            .iter()
            .rev()
            .find(|p| starts(p, name) && p.name.len() == name.len());
        match (scalar, items.is_empty()) {
            (_, false) => {
                let mut items = items;
                items.sort_by_key(|p| p.name[name.len()].index());
                return Some(Found::List(items));
            }
            (Some(p), true) => return Some(Found::Scalar(p)),
            (None, true) => {}
        }
    }
    None
}

fn error(p: &Property, text: &str, message: String, allowed: &str) -> ConfigError {
    ConfigError {
        origin: Some(p.value_origin.clone()),
        key: p.key.clone(),
        value: Some(text.to_string()),
        message,
        allowed: allowed.to_string(),
    }
}

struct Reader<'r, 'a> {
    resolver: &'r Resolver<'a>,
    errors: &'r mut Vec<ConfigError>,
}

impl Reader<'_, '_> {
    /// `p`'s value with placeholders resolved, trimmed; `None` (and an error) when a
    /// placeholder does not resolve.
    fn resolved(&mut self, p: &Property) -> Option<String> {
        match self.resolver.resolve(&p.value) {
            Ok(t) => Some(t.trim().to_string()),
            Err(m) => {
                self.errors.push(error(
                    p,
                    &p.value,
                    m,
                    "a value whose ${...} placeholders resolve",
                ));
                None
            }
        }
    }

    fn bool_of(&mut self, p: &Property) -> Option<bool> {
        let text = self.resolved(p)?;
        if text.is_empty() {
            return None; // Spring converts "" to null: the default stays.
        }
        match convert::boolean(&text) {
            Ok(v) => Some(v),
            Err(allowed) => {
                self.errors.push(error(
                    p,
                    &text,
                    format!("Failed to convert '{text}' to java.lang.Boolean"),
                    allowed,
                ));
                None
            }
        }
    }

    fn text<'a>(&mut self, docs: &[&'a Document], name: &[&str]) -> Option<(&'a Property, String)> {
        match find(docs, name)? {
            Found::Scalar(p) => {
                let v = self.resolved(p)?;
                (!v.is_empty()).then_some((p, v))
            }
            Found::List(items) => {
                let p = items[0];
                self.errors.push(error(
                    p,
                    &p.value,
                    "expected a single value, found a list".into(),
                    "one value",
                ));
                None
            }
        }
    }

    fn flag(&mut self, docs: &[&Document], name: &[&str]) -> Option<bool> {
        match find(docs, name)? {
            Found::Scalar(p) => self.bool_of(p),
            Found::List(items) => {
                let p = items[0];
                self.errors.push(error(
                    p,
                    &p.value,
                    "expected true or false, found a list".into(),
                    "true or false",
                ));
                None
            }
        }
    }

    fn show(&mut self, docs: &[&Document], name: &[&str]) -> Option<ShowDetails> {
        const SHOW: [(&str, ShowDetails); 3] = [
            ("NEVER", ShowDetails::Never),
            ("WHEN_AUTHORIZED", ShowDetails::WhenAuthorized),
            ("ALWAYS", ShowDetails::Always),
        ];
        let (p, text) = self.text(docs, name)?;
        match convert::lenient_enum(&text, &SHOW) {
            Some(v) => Some(v),
            None => {
                self.errors.push(error(
                    p,
                    &text,
                    format!(
                        "Failed to convert '{text}' to org.springframework.boot.actuate.endpoint.Show"
                    ),
                    "never, when-authorized or always",
                ));
                None
            }
        }
    }

    /// A list: a comma-separated scalar or indexed items, each trimmed, empty ones dropped.
    fn list(&mut self, docs: &[&Document], name: &[&str]) -> Option<Vec<String>> {
        let texts: Vec<String> = match find(docs, name)? {
            Found::Scalar(p) => vec![self.resolved(p)?],
            Found::List(items) => {
                let mut out = Vec::new();
                for p in items {
                    out.push(self.resolved(p)?);
                }
                out
            }
        };
        Some(
            texts
                .iter()
                .flat_map(|t| t.split(','))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect(),
        )
    }
}

/// Spring Boot's `WebEndpointProperties.cleanBasePath`: a leading `/` added, a trailing one
/// dropped; `/` itself is the root.
fn base_path(text: &str) -> Result<String, String> {
    let t = text.trim();
    if t.contains(['?', '#', '{', '}', ' ']) {
        return Err(format!("'{t}' is not a usable base path"));
    }
    let t = t.trim_end_matches('/');
    if t.is_empty() {
        return Ok("/".into());
    }
    Ok(if t.starts_with('/') {
        t.to_string()
    } else {
        format!("/{t}")
    })
}
