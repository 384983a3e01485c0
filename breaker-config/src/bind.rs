//! Binding: picks the `resilience4j.circuitbreaker.configs.*` and `.instances.*` (alias
//! `backends`) properties out of the active documents, applies Spring's precedence (a later
//! document wins, a list is taken whole from one document), converts and validates each value,
//! and warns about unknown keys.

use std::collections::BTreeMap;

use crate::convert;
use crate::duration;
use crate::error::{ConfigError, Warning};
use crate::keys::{self, Id, Kind};
use crate::origin::Origin;
use crate::placeholders::Resolver;
use crate::property::{Document, Property};
use crate::relaxed::{self, map_key, respell, suggest};
use crate::validate::{check, Val};

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

/// Binds the circuit-breaker section of `docs` (lowest precedence first).
pub(crate) fn bind(
    docs: &[&Document],
    resolver: &Resolver<'_>,
    warnings: &mut Vec<Warning>,
) -> Section {
    let mut raw: BTreeMap<(bool, String), (Block, Raw<'_>)> = BTreeMap::new();
    for (di, doc) in docs.iter().enumerate() {
        for p in &doc.properties {
            collect(di, p, &mut raw, warnings);
        }
    }
    let mut section = Section::default();
    for ((is_config, name), (mut block, entries)) in raw {
        for (id, list) in entries {
            convert_entry(id, &list, &block.path.clone(), &mut block, resolver);
        }
        if is_config {
            section.configs.insert(name, block);
        } else {
            section.instances.insert(name, block);
        }
    }
    section
}

fn collect<'a>(
    di: usize,
    p: &'a Property,
    raw: &mut BTreeMap<(bool, String), (Block, Raw<'a>)>,
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
            let mut msg = format!("unknown key {}", n[2].text);
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
    let (block, entries) = raw.entry((is_config, name.clone())).or_insert_with(|| {
        (
            Block {
                path: format!("resilience4j.circuitbreaker.{section}.{name}"),
                ..Block::default()
            },
            BTreeMap::new(),
        )
    });
    let _ = block;
    if n.len() < 5 {
        return;
    }
    let setting = &n[4];
    let Some((id, camel, kind)) = keys::find(&setting.uniform()) else {
        let legacy = keys::LEGACY
            .iter()
            .find(|(k, _)| relaxed::uniform(k) == setting.uniform());
        let msg = match legacy {
            Some((_, advice)) => format!("{} is {advice}", setting.text),
            None => {
                let mut m = format!("unknown circuit-breaker setting {}", setting.text);
                if let Some(s) = suggest(&setting.text, keys::SETTINGS.iter().map(|(_, n, _)| *n)) {
                    m = format!("{}: did you mean {s}?", setting.text);
                }
                format!("{m} (Spring binds nothing for it)")
            }
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
                "{camel} names the Java class {}, which cannot be loaded here; give the predicate in code (CircuitBreakerConfigBuilder::{setter})",
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
        let text = text.trim();
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
