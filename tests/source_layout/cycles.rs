//! Import cycles between the files of one crate: the strongly connected components of the
//! graph "file A names an item that file B defines" (through `use`, `crate::`/`super::` paths
//! and re-exports, followed to the defining file). A module re-exporting its own children
//! (`pub use child::Item` in a `mod.rs` or the crate root) is not counted: the folder's face
//! depends on its files, not the other way round; its code naming them still counts.

use std::collections::{BTreeMap, BTreeSet};

use crate::tree::Crate;

/// One cycle: its files, and each import between two of them (`from -> to (line N)`).
#[derive(Debug)]
pub struct Cycle {
    pub files: Vec<String>,
    pub imports: Vec<String>,
}

/// For each file (by index), the files it imports from, each with the first line naming it.
pub fn edges(c: &Crate) -> Vec<BTreeMap<usize, usize>> {
    let mut out = vec![BTreeMap::new(); c.files.len()];
    for (m, module) in c.modules.iter().enumerate() {
        for raw in &module.raw {
            let Some(path) = c.absolute(m, &raw.segs) else {
                continue;
            };
            // A folder's `mod.rs` (or the crate root) re-exporting its own files is how the
            // folder shows its face, not a dependency of its code on theirs.
            if raw.reexport && path.starts_with(&c.module_path(m)) {
                continue;
            }
            let Some((to, _)) = c.resolve(&path, 0) else {
                continue;
            };
            if to != module.file {
                let line = out[module.file].entry(to).or_insert(raw.line);
                *line = (*line).min(raw.line);
            }
        }
    }
    out
}

/// The import cycles of `c`: groups of two or more files that import each other,
/// directly or around a loop.
pub fn cycles(c: &Crate) -> Vec<Cycle> {
    let edges = edges(c);
    let n = edges.len();
    let reach: Vec<BTreeSet<usize>> = (0..n)
        .map(|from| {
            let mut seen = BTreeSet::new();
            let mut todo: Vec<usize> = edges[from].keys().copied().collect();
            while let Some(f) = todo.pop() {
                if seen.insert(f) {
                    todo.extend(edges[f].keys().copied());
                }
            }
            seen
        })
        .collect();
    let mut placed = vec![false; n];
    let mut out = Vec::new();
    for a in 0..n {
        if placed[a] || !reach[a].contains(&a) {
            continue;
        }
        let group: Vec<usize> = (0..n)
            .filter(|&b| reach[a].contains(&b) && reach[b].contains(&a))
            .collect();
        for &g in &group {
            placed[g] = true;
        }
        let imports = group
            .iter()
            .flat_map(|&f| {
                let edges = &edges;
                let group = &group;
                edges[f]
                    .iter()
                    .filter(move |(to, _)| group.contains(to))
                    .map(move |(&to, line)| {
                        format!("{} -> {} (line {line})", c.files[f].path, c.files[to].path)
                    })
            })
            .collect();
        out.push(Cycle {
            files: group.iter().map(|&f| c.files[f].path.clone()).collect(),
            imports,
        });
    }
    out
}
