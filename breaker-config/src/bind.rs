//! Binding: picks the `resilience4j.circuitbreaker.configs.*` and `.instances.*` (alias
//! `backends`) properties out of the active documents, applies Spring's precedence (a later
//! document wins, a list is taken whole from one document), converts and validates each value,
//! and warns about unknown keys.
//!
//! As Spring's binder creates no map entry for a name under which no setting binds, such an
//! entry (`svc: {}`, `svc:` with no value, a block of only unknown keys, a list) is neither an
//! instance nor a config, in every section: a warning names it and, when the name is a
//! setting's, the block just above it, where it probably belongs. `breaker check`, registries
//! and live reloads all load through here, so they agree.

use std::collections::BTreeMap;

use crate::circuit_breaker_schema::CircuitBreakerSchema;
use crate::convert;
use crate::duration;
use crate::error::{ConfigError, Warning};
use crate::keys::Id;
use crate::origin::Origin;
use crate::placeholders::Resolver;
use crate::property::{Document, Property};
use crate::relaxed::{self, map_key, respell, suggest};
use crate::schema::{self, Kind, Schema, Val};

/// A converted, validated value and where it is written.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    pub val: Val,
    pub origin: Origin,
    pub item_origins: Vec<Origin>,
    /// The value as written (placeholders resolved), for messages.
    pub text: String,
}

/// The properties of one `configs.<name>` or `instances.<name>` block.
#[derive(Clone, Debug)]
pub(crate) struct Block<I = Id> {
    /// The full key prefix, e.g. `resilience4j.circuitbreaker.instances.a`.
    pub path: String,
    pub values: BTreeMap<I, Bound>,
    /// Conversion / validation failures (Spring fails binding for these).
    pub errors: Vec<ConfigError>,
}

impl<I> Default for Block<I> {
    fn default() -> Self {
        Block {
            path: String::new(),
            values: BTreeMap::new(),
            errors: Vec::new(),
        }
    }
}

impl<I: Ord> Block<I> {
    pub fn get(&self, id: I) -> Option<&Bound> {
        self.values.get(&id)
    }

    /// Whether Spring creates this map entry: something under it binds (a value, or a value
    /// Spring refuses, which fails binding). An entry with only unknown keys, or with no
    /// value at all (`svc:`, `svc: {}`), binds nothing and is not created.
    pub fn binds_anything(&self) -> bool {
        !self.values.is_empty() || !self.errors.is_empty()
    }
}

/// One `resilience4j.<section>` of the files.
#[derive(Clone, Debug)]
pub(crate) struct Section<I = Id> {
    pub configs: BTreeMap<String, Block<I>>,
    pub instances: BTreeMap<String, Block<I>>,
    /// Every entry as `(is_config, name)`, in the order Spring's binder first meets it
    /// (highest-precedence document first, then file order): the order in which it fills
    /// the `configs` / `instances` maps.
    pub binder_order: Vec<(bool, String)>,
    /// Where each entry's first key is written (same keys as `binder_order`).
    pub entry_origins: BTreeMap<(bool, String), Origin>,
}

impl<I> Default for Section<I> {
    fn default() -> Self {
        Section {
            configs: BTreeMap::new(),
            instances: BTreeMap::new(),
            binder_order: Vec::new(),
            entry_origins: BTreeMap::new(),
        }
    }
}

struct Entry<'a> {
    doc: usize,
    index: Option<usize>,
    prop: &'a Property,
}

type Raw<'a, I> = BTreeMap<I, Vec<Entry<'a>>>;

/// What [`collect`] gathers for one `configs.<name>` / `instances.<name>` block.
struct Pending<'a, I> {
    block: Block<I>,
    entries: Raw<'a, I>,
    /// Values written on the name itself (`instances.a = 10`, YAML `a: 10`), by document.
    direct: Vec<(usize, &'a Property)>,
    /// Where Spring's binder first meets the entry: (highest document, first property in it).
    first: (std::cmp::Reverse<usize>, usize),
    /// Where the entry's first key is written.
    origin: Origin,
    /// Where each of its keys is written, in file order: for "the block just above".
    origins: Vec<Origin>,
    /// Warnings about list items written directly under the name (`a[0]`), given only if
    /// the block turns out to bind something (else the block's own warning says it all).
    item_warnings: Vec<Warning>,
    /// The first document that names it.
    first_doc: usize,
}

/// Where the entries of one map (`configs` or `instances`) are written.
type Places = Vec<(String, Vec<Origin>)>;

/// Binds the circuit-breaker section of `docs` (lowest precedence first).
pub(crate) fn bind(
    docs: &[&Document],
    resolver: &Resolver<'_>,
    warnings: &mut Vec<Warning>,
) -> Section {
    bind_section::<CircuitBreakerSchema>(docs, resolver, warnings)
}

/// Binds the section `S` of `docs` (lowest precedence first).
pub(crate) fn bind_section<S: Schema>(
    docs: &[&Document],
    resolver: &Resolver<'_>,
    warnings: &mut Vec<Warning>,
) -> Section<S::Id> {
    let mut raw: BTreeMap<(bool, String), Pending<'_, S::Id>> = BTreeMap::new();
    for (di, doc) in docs.iter().enumerate() {
        for (pi, p) in doc.properties.iter().enumerate() {
            collect::<S>((di, pi), p, &mut raw, warnings);
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
    let mut order = Vec::new();
    let mut not_entries = Vec::new();
    for ((is_config, name), pending) in raw {
        let Pending {
            mut block,
            entries,
            direct,
            first,
            origin,
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
            if let Some(e) = scalar_block::<S>(is_config, &direct, resolver, &name, places) {
                block.errors.push(e);
            }
        }
        for (id, list) in entries {
            convert_entry::<S>(id, &list, &block.path.clone(), &mut block, resolver);
        }
        // As Spring's binder: a map entry under which no setting binds is no entry at all.
        if !block.binds_anything() {
            let w = binds_nothing::<S>(is_config, &name, &block.path, &origins, places);
            not_entries.push((first_doc, w));
            continue;
        }
        warnings.extend(item_warnings);
        order.push((first, (is_config, name.clone())));
        section
            .entry_origins
            .insert((is_config, name.clone()), origin);
        if is_config {
            section.configs.insert(name, block);
        } else {
            section.instances.insert(name, block);
        }
    }
    order.sort();
    section.binder_order = order.into_iter().map(|(_, k)| k).collect();
    // In the order they are written.
    not_entries.sort_by_key(|(doc, w)| (*doc, w.origin.as_ref().map(|o| (o.line, o.column))));
    warnings.extend(not_entries.into_iter().map(|(_, w)| w));
    section
}

/// Whether `name` is the name of a setting of `S` (current or legacy).
fn is_setting_name<S: Schema>(name: &str) -> bool {
    let uniform = relaxed::uniform(name);
    schema::find::<S>(&uniform).is_some()
        || S::LEGACY
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

/// The warning for an entry under which no setting binds: it is not an instance (or
/// config), as in Spring Boot, whose binder creates no map entry for it. When its name is a
/// setting's, it says which block the setting probably belongs to.
fn binds_nothing<S: Schema>(
    is_config: bool,
    name: &str,
    path: &str,
    origins: &[Origin],
    places: &Places,
) -> Warning {
    let noun = S::NOUN;
    let what = if is_config { "a config" } else { "an instance" };
    let at = origins.first().cloned();
    let mut message = format!(
        "no {noun} setting binds under '{name}', so it is not {what} (Spring Boot creates none)"
    );
    if is_setting_name::<S>(name) {
        let camel = schema::find::<S>(&relaxed::uniform(name)).map_or(name, |(_, c, _)| c);
        message.push_str(&format!("; {camel} is a {noun} setting, not a name: "));
        match at.as_ref().and_then(|at| block_above(name, at, places)) {
            Some(above) => message.push_str(&format!(
                "it probably belongs under '{above}', the block just above, indented one level further"
            )),
            None => message.push_str(
                "is it indented one level too little, or is the name of its block missing?",
            ),
        }
    } else if !is_config {
        message.push_str(&format!(
            "; made at run time, '{name}' gets the default config (give it a setting, e.g. baseConfig: default, to create it at start-up)"
        ));
    }
    Warning::new(at, path.to_string(), message)
}

/// Spring binds `instances.<name>` (and `configs.<name>`) to `InstanceProperties`: a value
/// written on the name itself cannot be converted to one, and with no settings under the name
/// to bind instead, binding fails. That is almost always a setting indented one level too
/// little (`slidingWindowSize: 10` beside the instance name instead of under it). A null or
/// empty value binds nothing (see the module docs).
fn scalar_block<S: Schema>(
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
        "expected a block of {} settings under '{written}', found the value '{text}'",
        S::NOUN
    );
    if is_setting_name::<S>(written) {
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
        &format!(
            "{} settings nested under the name (e.g. {})",
            S::NOUN,
            S::EXAMPLE
        ),
    ))
}

fn collect<'a, S: Schema>(
    (di, pi): (usize, usize),
    p: &'a Property,
    raw: &mut BTreeMap<(bool, String), Pending<'a, S::Id>>,
    warnings: &mut Vec<Warning>,
) {
    let n = &p.name;
    if n.len() < 3 || !n[0].is("resilience4j") || !n[1].is(S::SECTION) {
        return;
    }
    let is_config = if n[2].is("configs") {
        true
    } else if S::INSTANCE_MAPS.iter().any(|m| n[2].is(m)) {
        false
    } else {
        if let Some((_, advice)) = S::MISPLACED_TOP_LEVEL.iter().find(|(k, _)| n[2].is(k)) {
            let msg = if n.len() == 3 {
                advice.to_string()
            } else {
                format!("{} is {advice}", n[2].text)
            };
            warnings.push(Warning::new(Some(p.key_origin.clone()), p.key.clone(), msg));
        } else if !S::TOP_LEVEL.iter().any(|k| n[2].is(k)) {
            // The warning prints the full key first: name the element only when it is not
            // the key's last one.
            let mut msg = if n.len() == 3 {
                "unknown key".to_string()
            } else {
                format!("unknown key {}", n[2].text)
            };
            if let Some(s) = suggest(&n[2].text, S::TOP_LEVEL.iter().copied()) {
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
    let here = (std::cmp::Reverse(di), pi);
    let pending = raw
        .entry((is_config, name.clone()))
        .or_insert_with(|| Pending {
            block: Block {
                path: format!("{}.{section}.{name}", S::PREFIX),
                ..Block::default()
            },
            entries: BTreeMap::new(),
            direct: Vec::new(),
            first: here,
            origin: p.key_origin.clone(),
            origins: Vec::new(),
            item_warnings: Vec::new(),
            first_doc: di,
        });
    pending.first = pending.first.min(here);
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
    let Some((id, camel, kind)) = schema::find::<S>(&setting.uniform()) else {
        let legacy = S::LEGACY
            .iter()
            .find(|(k, _)| relaxed::uniform(k) == setting.uniform());
        // The warning prints the full key first: name the setting only when the key goes on
        // past it (`slidingWindowsSize.nested`).
        let last = n.len() == 5;
        let suggestion = suggest(&setting.text, S::SETTINGS.iter().map(|(_, n, _)| *n));
        let noun = S::NOUN;
        let msg = match (legacy, suggestion) {
            (Some((_, advice)), _) if last => advice.to_string(),
            (Some((_, advice)), _) => format!("{} is {advice}", setting.text),
            (None, Some(s)) if last => format!("did you mean {s}? (Spring binds nothing for it)"),
            (None, Some(s)) => format!(
                "unknown {noun} setting {}: did you mean {s}? (Spring binds nothing for it)",
                setting.text
            ),
            (None, None) if last => format!("unknown {noun} setting (Spring binds nothing for it)"),
            (None, None) => format!(
                "unknown {noun} setting {} (Spring binds nothing for it)",
                setting.text
            ),
        };
        warnings.push(Warning::new(Some(p.key_origin.clone()), p.key.clone(), msg));
        return;
    };
    if let Some(advice) = S::class_advice(id) {
        if !p.value.trim().is_empty() {
            warnings.push(Warning::new(
                Some(p.value_origin.clone()),
                p.key.clone(),
                format!(
                    "the Java class {} cannot be loaded here; {advice}",
                    p.value.trim()
                ),
            ));
        }
    }
    let index = match (kind, n.len()) {
        (_, 5) => None,
        (Kind::ClassList, 6) if n[5].index().is_some() => n[5].index(),
        _ => {
            let written = respell(camel, &setting.text);
            if kind != Kind::Duration {
                // Spring's binder finds no constructor to bind nested keys to a number,
                // boolean, enum, text or list (several constructors, or none), so it binds
                // nothing there and the default applies: a warning, as for an unknown key.
                warnings.push(Warning::new(
                    Some(p.key_origin.clone()),
                    p.key.clone(),
                    format!("{written} takes a single value, not nested keys; ignored"),
                ));
                return;
            }
            // A map where a duration belongs, e.g. `wait-duration: {seconds: 2s}`: Spring's
            // binder binds nested keys to `java.time.Duration`'s one constructor
            // `(long seconds, int nanos)` and fails to convert them, so the application does
            // not start: the entry is refused (once per setting).
            let key = format!("{}.{written}", pending.block.path);
            if !pending.block.errors.iter().any(|e| e.key == key) {
                let rest: Vec<&str> = n[5..].iter().map(|e| e.text.as_str()).collect();
                pending.block.errors.push(ConfigError {
                    origin: Some(p.key_origin.clone()),
                    key: key.clone(),
                    value: Some(format!("{}: {}", rest.join("."), p.value.trim())),
                    message: format!(
                        "Failed to bind properties under '{key}' to {}: nested keys are given where a single value belongs",
                        convert::java_type(kind)
                    ),
                    allowed: format!("a single value, e.g. {written}: {}", convert::example(kind)),
                });
            }
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

fn convert_entry<S: Schema>(
    id: S::Id,
    list: &[Entry<'_>],
    path: &str,
    block: &mut Block<S::Id>,
    resolver: &Resolver<'_>,
) {
    let Some(top) = list.iter().map(|e| e.doc).max() else {
        return;
    };
    let in_top: Vec<&Entry<'_>> = list.iter().filter(|e| e.doc == top).collect();
    let (_, camel, kind) = S::SETTINGS
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
        let exact = kind == Kind::Duration || id == S::BASE_CONFIG;
        let text = if exact { text.as_str() } else { text.trim() };
        if text.is_empty() && kind != Kind::ClassList {
            return; // Spring converts "" to null: not set, inherited.
        }
        match convert::scalar(kind, text) {
            Ok(val) => store::<S>(id, val, p, text, vec![], block),
            Err(allowed) => {
                let message = match kind {
                    Kind::Duration => duration::parse(text).err().unwrap_or_default(),
                    _ => format!("Failed to convert '{text}' to {}", convert::java_type(kind)),
                };
                let allowed = S::conversion_allowed(id, allowed);
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
        store::<S>(id, Val::Names(names), first, &text, origins, block);
    }
}

fn store<S: Schema>(
    id: S::Id,
    val: Val,
    p: &Property,
    text: &str,
    item_origins: Vec<Origin>,
    block: &mut Block<S::Id>,
) {
    if let Err((message, allowed)) = S::check(id, &val) {
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
            text: text.to_string(),
        },
    );
}
