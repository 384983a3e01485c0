//! Binding: picks the `resilience4j.circuitbreaker.configs.*` and `.instances.*` (alias
//! `backends`) properties out of the active documents, applies Spring's precedence (a later
//! document wins, a list is taken whole from one document), converts and validates each value,
//! and warns about unknown keys.
//!
//! As Spring's binder creates no map entry for a name under which no setting binds, such an
//! entry (`svc: {}`, `svc:` with no value, a block of only unknown keys, a list) is neither an
//! instance nor a config: a warning names it and, when the name is a setting's, the block just
//! above it, where it probably belongs. `breaker check`, registries and live reloads all load
//! through here, so they agree.

use std::collections::BTreeMap;

use crate::convert;
use crate::duration;
use crate::error::{ConfigError, Warning};
use crate::keys::{self, Id, Kind};
use crate::origin::Origin;
use crate::placeholders::Resolver;
use crate::property::{Document, Property};
use crate::relaxed::{self, map_key, respell, suggest};
use crate::validate::{check, conversion_allowed, Val};

/// A converted, validated value and where it is written.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    pub val: Val,
    pub origin: Origin,
    pub item_origins: Vec<Origin>,
}

/// The properties of one `configs.<name>` or `instances.<name>` block.
#[derive(Clone, Debug, Default)]
pub(crate) struct Block {
    /// The full key prefix, e.g. `resilience4j.circuitbreaker.instances.a`.
    pub path: String,
    pub values: BTreeMap<Id, Bound>,
    /// Conversion / validation failures (Spring fails binding for these).
    pub errors: Vec<ConfigError>,
}

impl Block {
    pub fn get(&self, id: Id) -> Option<&Bound> {
        self.values.get(&id)
    }
}

/// The circuit-breaker section of the files.
#[derive(Clone, Debug, Default)]
pub(crate) struct Section {
    pub configs: BTreeMap<String, Block>,
    pub instances: BTreeMap<String, Block>,
}

struct Entry<'a> {
    doc: usize,
    index: Option<usize>,
    prop: &'a Property,
}

type Raw<'a> = BTreeMap<Id, Vec<Entry<'a>>>;

/// What [`collect`] gathers for one `configs.<name>` / `instances.<name>` block.
struct Pending<'a> {
    block: Block,
    entries: Raw<'a>,
    /// Values written on the name itself (`instances.a = 10`, YAML `a: 10`), by document.
    direct: Vec<(usize, &'a Property)>,
    /// Where each of its keys is written, in file order: for "the block just above".
    origins: Vec<Origin>,
    /// Warnings about list items written directly under the name (`a[0]`), given only if
    /// the block turns out to bind something (else the block's own warning says it all).
    item_warnings: Vec<Warning>,
    /// The first document that names it.
    first_doc: usize,
}

/// Where the entries of one section (`configs` or `instances`) are written.
type Places = Vec<(String, Vec<Origin>)>;

/// Binds the circuit-breaker section of `docs` (lowest precedence first).
pub(crate) fn bind(
    docs: &[&Document],
    resolver: &Resolver<'_>,
    warnings: &mut Vec<Warning>,
) -> Section {
    let mut raw: BTreeMap<(bool, String), Pending<'_>> = BTreeMap::new();
    for (di, doc) in docs.iter().enumerate() {
        for p in &doc.properties {
            collect(di, p, &mut raw, warnings);
        }
    }
    let places = |configs: bool| -> Places {
        raw.iter()
            .filter(|((c, _), _)| *c == configs)
            .map(|((_, n), p)| (n.clone(), p.origins.clone()))
            .collect()
    };
    let (config_places, instance_places) = (places(true), places(false));
    let mut section = Section::default();
    let mut not_entries = Vec::new();
    for ((is_config, name), pending) in raw {
        let Pending {
            mut block,
            entries,
            direct,
            origins,
            item_warnings,
            first_doc,
        } = pending;
        let places = if is_config {
            &config_places
        } else {
            &instance_places
        };
        if entries.is_empty() {
            if let Some(e) = scalar_block(is_config, &direct, resolver, &name, places) {
                block.errors.push(e);
            }
        }
        for (id, list) in entries {
            convert_entry(id, &list, &block.path.clone(), &mut block, resolver);
        }
        // As Spring's binder: a map entry under which no setting binds is no entry at all.
        if block.values.is_empty() && block.errors.is_empty() {
            let w = binds_nothing(is_config, &name, &block.path, &origins, places);
            not_entries.push((first_doc, w));
            continue;
        }
        warnings.extend(item_warnings);
        if is_config {
            section.configs.insert(name, block);
        } else {
            section.instances.insert(name, block);
        }
    }
    // In the order they are written.
    not_entries.sort_by_key(|(doc, w)| (*doc, w.origin.as_ref().map(|o| (o.line, o.column))));
    warnings.extend(not_entries.into_iter().map(|(_, w)| w));
    section
}

/// Whether `name` is the name of a circuit-breaker setting (current or 1.x).
fn is_setting_name(name: &str) -> bool {
    let uniform = relaxed::uniform(name);
    keys::find(&uniform).is_some()
        || keys::LEGACY
            .iter()
            .any(|(k, _)| relaxed::uniform(k) == uniform)
}

/// The entry of `places` written last before `at` in the same file: the block a misplaced
/// key just below it probably belongs to.
fn block_above<'p>(name: &str, at: &Origin, places: &'p Places) -> Option<&'p str> {
    places
        .iter()
        .filter(|(n, _)| n != name)
        .filter_map(|(n, origins)| {
            origins
                .iter()
                .filter(|o| o.file == at.file && (o.line, o.column) < (at.line, at.column))
                .map(|o| (o.line, o.column))
                .max()
                .map(|pos| (pos, n.as_str()))
        })
        .max()
        .map(|(_, n)| n)
}

/// The hint for an entry named like a setting: where it probably belongs.
fn misplaced_setting_hint(name: &str, at: &Origin, places: &Places) -> Option<String> {
    if !is_setting_name(name) {
        return None;
    }
    Some(match block_above(name, at, places) {
        Some(above) => format!(
            "{name} is a circuit-breaker setting: it probably belongs under '{above}', the block just above, indented one level more"
        ),
        None => format!(
            "{name} is a circuit-breaker setting: is it indented one level too little, or is the name of its block missing?"
        ),
    })
}

/// The warning for an entry under which no setting binds: it is not an instance (or
/// config), as in Spring Boot, whose binder creates no map entry for it.
fn binds_nothing(
    is_config: bool,
    name: &str,
    path: &str,
    origins: &[Origin],
    places: &Places,
) -> Warning {
    let what = if is_config { "a config" } else { "an instance" };
    let at = origins.first().cloned();
    let mut message =
        format!("no setting binds under '{name}', so it is not {what} (Spring Boot creates none)");
    let hint = at
        .as_ref()
        .and_then(|at| misplaced_setting_hint(name, at, places));
    match hint {
        Some(h) => message.push_str(&format!("; {h}")),
        None if is_config => {}
        None => message.push_str(&format!(
            "; a breaker named '{name}' gets the default config when first used (give it a setting, e.g. baseConfig: default, to create it at start-up)"
        )),
    }
    Warning::new(at, path.to_string(), message)
}

/// Spring binds `instances.<name>` (and `configs.<name>`) to `InstanceProperties`: a value
/// written on the name itself cannot be converted to one, and with no settings under the name
/// to bind instead, binding fails. That is almost always a setting indented one level too
/// little (`slidingWindowSize: 10` beside the instance name instead of under it). A null or
/// empty value binds nothing (see the module docs).
fn scalar_block(
    is_config: bool,
    direct: &[(usize, &Property)],
    resolver: &Resolver<'_>,
    name: &str,
    places: &Places,
) -> Option<ConfigError> {
    // Spring reads the property from the highest-precedence document that has it.
    let top = direct.iter().map(|(d, _)| *d).max()?;
    let (_, p) = direct.iter().rev().find(|(d, _)| *d == top)?;
    let text = resolver
        .resolve(&p.value)
        .unwrap_or_else(|_| p.value.clone());
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let written = p.name.get(3).map_or("", |e| e.text.as_str());
    let mut message = format!(
        "expected a block of circuit-breaker settings under '{written}', found the value '{text}'"
    );
    if is_setting_name(written) {
        let what = if is_config { "config" } else { "instance" };
        let above = block_above(name, &p.key_origin, places)
            .map(|above| format!(" (it probably belongs under '{above}', the block just above)"))
            .unwrap_or_default();
        message.push_str(&format!(
            "; is this key indented one level too little{above}, or is the {what} name missing before it?"
        ));
    }
    Some(err(
        p,
        text,
        message,
        "circuit-breaker settings nested under the name (e.g. slidingWindowSize: 10)",
    ))
}

fn collect<'a>(
    di: usize,
    p: &'a Property,
    raw: &mut BTreeMap<(bool, String), Pending<'a>>,
    warnings: &mut Vec<Warning>,
) {
    let n = &p.name;
    if n.len() < 3 || !n[0].is("resilience4j") || !n[1].is("circuitbreaker") {
        return;
    }
    let is_config = if n[2].is("configs") {
        true
    } else if n[2].is("instances") || n[2].is("backends") {
        false
    } else {
        if !keys::TOP_LEVEL.iter().any(|k| n[2].is(k)) {
            // The warning prints the full key first: name the element only when it is not
            // the key's last one.
            let mut msg = if n.len() == 3 {
                "unknown key".to_string()
            } else {
                format!("unknown key {}", n[2].text)
            };
            if let Some(s) = suggest(&n[2].text, keys::TOP_LEVEL.iter().copied()) {
                msg.push_str(&format!(": did you mean {s}?"));
            }
            msg.push_str(" (Spring binds nothing for it)");
            warnings.push(Warning::new(Some(p.key_origin.clone()), p.key.clone(), msg));
        }
        return;
    };
    if n.len() < 4 {
        return;
    }
    let name = map_key(&n[3].text, n[3].bracketed);
    if name.is_empty() {
        warnings.push(Warning::new(
            Some(p.key_origin.clone()),
            p.key.clone(),
            "empty name after Spring drops characters other than letters, digits, '-' and '_' (use [brackets] to keep them); ignored".into(),
        ));
        return;
    }
    let section = if is_config {
        "configs"
    } else {
        n[2].text.as_str()
    };
    let pending = raw
        .entry((is_config, name.clone()))
        .or_insert_with(|| Pending {
            block: Block {
                path: format!("resilience4j.circuitbreaker.{section}.{name}"),
                ..Block::default()
            },
            entries: BTreeMap::new(),
            direct: Vec::new(),
            origins: Vec::new(),
            item_warnings: Vec::new(),
            first_doc: di,
        });
    pending.origins.push(p.key_origin.clone());
    if n.len() < 5 {
        pending.direct.push((di, p));
        return;
    }
    if n[4].index().is_some() {
        // A list written directly under the name (`a[0]`): no setting.
        pending.item_warnings.push(Warning::new(
            Some(p.key_origin.clone()),
            p.key.clone(),
            "a list item directly under the name binds nothing (settings go under the name)".into(),
        ));
        return;
    }
    let entries = &mut pending.entries;
    let setting = &n[4];
    let Some((id, camel, kind)) = keys::find(&setting.uniform()) else {
        let legacy = keys::LEGACY
            .iter()
            .find(|(k, _)| relaxed::uniform(k) == setting.uniform());
        // The warning prints the full key first: name the setting only when the key goes on
        // past it (`slidingWindowsSize.nested`).
        let last = n.len() == 5;
        let suggestion = suggest(&setting.text, keys::SETTINGS.iter().map(|(_, n, _)| *n));
        let msg = match (legacy, suggestion) {
            (Some((_, advice)), _) if last => advice.to_string(),
            (Some((_, advice)), _) => format!("{} is {advice}", setting.text),
            (None, Some(s)) if last => format!("did you mean {s}? (Spring binds nothing for it)"),
            (None, Some(s)) => format!(
                "unknown circuit-breaker setting {}: did you mean {s}? (Spring binds nothing for it)",
                setting.text
            ),
            (None, None) if last => {
                "unknown circuit-breaker setting (Spring binds nothing for it)".to_string()
            }
            (None, None) => format!(
                "unknown circuit-breaker setting {} (Spring binds nothing for it)",
                setting.text
            ),
        };
        warnings.push(Warning::new(Some(p.key_origin.clone()), p.key.clone(), msg));
        return;
    };
    if matches!(
        id,
        Id::RecordFailurePredicate | Id::RecordResultPredicate | Id::IgnoreExceptionPredicate
    ) && !p.value.trim().is_empty()
    {
        let setter = match id {
            Id::RecordResultPredicate => "record_result",
            Id::IgnoreExceptionPredicate => "ignore_exception",
            _ => "record_exception",
        };
        warnings.push(Warning::new(
            Some(p.value_origin.clone()),
            p.key.clone(),
            format!(
                "the Java class {} cannot be loaded here; give the predicate in code (CircuitBreakerConfigBuilder::{setter})",
                p.value.trim()
            ),
        ));
    }
    let index = match (kind, n.len()) {
        (_, 5) => None,
        (Kind::ClassList, 6) if n[5].index().is_some() => n[5].index(),
        _ => {
            warnings.push(Warning::new(
                Some(p.key_origin.clone()),
                p.key.clone(),
                format!(
                    "{} takes a single value, not nested keys; ignored",
                    respell(camel, &setting.text)
                ),
            ));
            return;
        }
    };
    entries.entry(id).or_default().push(Entry {
        doc: di,
        index,
        prop: p,
    });
}

fn err(p: &Property, text: &str, message: String, allowed: &str) -> ConfigError {
    ConfigError {
        origin: Some(p.value_origin.clone()),
        key: p.key.clone(),
        value: Some(text.to_string()),
        message,
        allowed: allowed.to_string(),
    }
}

fn convert_entry(
    id: Id,
    list: &[Entry<'_>],
    path: &str,
    block: &mut Block,
    resolver: &Resolver<'_>,
) {
    let Some(top) = list.iter().map(|e| e.doc).max() else {
        return;
    };
    let in_top: Vec<&Entry<'_>> = list.iter().filter(|e| e.doc == top).collect();
    let (_, camel, kind) = keys::SETTINGS
        .iter()
        .copied()
        .find(|(i, _, _)| *i == id)
        .unwrap_or((id, "?", Kind::Text));
    if let Some(scalar) = in_top.iter().rev().find(|e| e.index.is_none()) {
        let p = scalar.prop;
        let text = match resolver.resolve(&p.value) {
            Ok(t) => t,
            Err(m) => {
                block.errors.push(err(
                    p,
                    &p.value,
                    m,
                    "a value whose ${...} placeholders resolve",
                ));
                return;
            }
        };
        // Spring's converters trim numbers, booleans, enums and class names, but a duration
        // must match `DurationStyle` exactly ("10s " is not a valid duration) and a String
        // (`baseConfig`) is taken as written.
        let exact = kind == Kind::Duration || id == Id::BaseConfig;
        let text = if exact { text.as_str() } else { text.trim() };
        if text.is_empty() && kind != Kind::ClassList {
            return; // Spring converts "" to null: not set, inherited.
        }
        match convert_scalar(kind, text) {
            Ok(val) => store(id, val, p, text, vec![], block),
            Err(allowed) => {
                let message = match kind {
                    Kind::Duration => duration::parse(text).err().unwrap_or_default(),
                    _ => format!("Failed to convert '{text}' to {}", java_type(kind)),
                };
                let allowed = conversion_allowed(id, allowed);
                block.errors.push(err(p, text, message, allowed));
            }
        }
        return;
    }
    // Indexed list items: the last value per index, which must run 0, 1, 2, ... without gaps.
    let mut items: BTreeMap<usize, &Property> = BTreeMap::new();
    for e in &in_top {
        if let Some(i) = e.index {
            items.insert(i, e.prop);
        }
    }
    let mut names = Vec::new();
    let mut origins = Vec::new();
    for (expected, (i, p)) in items.iter().enumerate() {
        if *i != expected {
            let unbound: Vec<String> = items.range(*i..).map(|(_, q)| q.key.clone()).collect();
            block.errors.push(err(
                p,
                &p.value,
                format!("The elements [{}] were left unbound.", unbound.join(",")),
                &format!("indices {path}.{camel}[0], [1], ... without gaps"),
            ));
            return;
        }
        match resolver.resolve(&p.value) {
            Ok(t) => {
                let t = t.trim();
                if !t.is_empty() {
                    names.push(t.to_string());
                    origins.push(p.value_origin.clone());
                }
            }
            Err(m) => {
                block.errors.push(err(
                    p,
                    &p.value,
                    m,
                    "a value whose ${...} placeholders resolve",
                ));
                return;
            }
        }
    }
    if let Some((_, first)) = items.iter().next() {
        let text = names.join(",");
        store(id, Val::Names(names), first, &text, origins, block);
    }
}

fn store(id: Id, val: Val, p: &Property, text: &str, item_origins: Vec<Origin>, block: &mut Block) {
    if let Err((message, allowed)) = check(id, &val) {
        block.errors.push(err(p, text, message, allowed));
        return;
    }
    let item_origins = if item_origins.is_empty() {
        match &val {
            Val::Names(n) => vec![p.value_origin.clone(); n.len()],
            _ => vec![],
        }
    } else {
        item_origins
    };
    block.values.insert(
        id,
        Bound {
            val,
            origin: p.value_origin.clone(),
            item_origins,
        },
    );
}

fn java_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Float => "java.lang.Float",
        Kind::Double => "java.lang.Double",
        Kind::Int => "java.lang.Integer",
        Kind::Bool => "java.lang.Boolean",
        Kind::Duration => "java.time.Duration",
        Kind::WindowType => {
            "io.github.resilience4j.circuitbreaker.CircuitBreakerConfig$SlidingWindowType"
        }
        Kind::State => "io.github.resilience4j.circuitbreaker.CircuitBreaker$State",
        Kind::ClassList => "java.lang.Class<?>[]",
        Kind::Text => "java.lang.String",
    }
}

fn convert_scalar(kind: Kind, text: &str) -> Result<Val, &'static str> {
    Ok(match kind {
        Kind::Float => Val::Float(convert::float(text)?),
        Kind::Double => Val::Double(convert::double(text)?),
        Kind::Int => Val::Int(convert::int(text)?),
        Kind::Bool => Val::Bool(convert::boolean(text)?),
        Kind::Duration => Val::Duration(duration::parse(text).map_err(|_| {
            "a whole number of ms, or a number with a unit ns, us, ms, s, m, h, d (e.g. 500ms, 10s), or ISO-8601 (PT10S); no decimals"
        })?),
        Kind::WindowType => Val::Window(
            convert::lenient_enum(text, &crate::model::SLIDING_WINDOW_TYPES)
                .ok_or("COUNT_BASED or TIME_BASED (any case, '-' or '_' ignored)")?,
        ),
        Kind::State => Val::State(convert::lenient_enum(text, &crate::model::STATES).ok_or(
            "CLOSED, OPEN, HALF_OPEN, DISABLED, FORCED_OPEN or METRICS_ONLY (any case, '-' or '_' ignored)",
        )?),
        Kind::ClassList => Val::Names(convert::class_list(text)),
        Kind::Text => Val::Text(text.to_string()),
    })
}
