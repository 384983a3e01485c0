//! The workspace's crates, each as a tree of modules read from its source files: which file
//! holds each module, which items it defines, what it imports (`use`) and which
//! `crate::`/`super::`/`self::`/child-module paths its code names.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::lex::{lex, Lexed, Token};

/// One source file of a crate.
pub struct SourceFile {
    /// Path relative to the workspace root, with `/` separators.
    pub path: String,
    pub lexed: Lexed,
    /// Declared under `#[cfg(test)]` (or a loom cfg): a sibling test or model file.
    pub test_only: bool,
}

/// One module, inline (`mod x { .. }`) or a file of its own.
pub struct Module {
    pub parent: Option<usize>,
    /// Index into [`Crate::files`] of the file holding the module.
    pub file: usize,
    pub children: BTreeMap<String, usize>,
    /// Names of the items defined at the module's top level (fn, struct, enum, ...).
    pub items: BTreeSet<String>,
    /// Paths named in the module, relative as written, resolved in [`Crate::absolute`].
    pub raw: Vec<RawPath>,
}

/// A path as written in a module: in a `use` declaration (with the name it binds, `None` for
/// a glob) or in code.
pub struct RawPath {
    pub segs: Vec<String>,
    pub line: usize,
    pub use_binding: Option<Option<String>>,
    /// A `pub use` (any visibility): a re-export.
    pub reexport: bool,
}

/// A crate of the workspace (a library or binary target's source tree).
pub struct Crate {
    /// The package directory relative to the workspace root (`.` for the facade).
    pub package: String,
    pub files: Vec<SourceFile>,
    pub modules: Vec<Module>,
}

/// Every crate root under `src/` of every workspace member (and of the root package).
pub fn workspace_crates(root: &Path) -> Vec<Crate> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml");
    let members = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .expect("Cargo.toml has a [workspace] members list");
    let mut packages: Vec<String> = members
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect();
    packages.insert(0, ".".to_string());
    let mut crates = Vec::new();
    for package in packages {
        let src = root.join(&package).join("src");
        let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
            .iter()
            .map(|f| src.join(f))
            .filter(|p| p.is_file())
            .collect();
        if let Ok(bins) = fs::read_dir(src.join("bin")) {
            let mut bins: Vec<PathBuf> = bins.flatten().map(|e| e.path()).collect();
            bins.sort();
            roots.extend(
                bins.into_iter()
                    .filter(|p| p.extension() == Some("rs".as_ref())),
            );
        }
        for crate_root in roots {
            let mut c = Crate {
                package: package.clone(),
                files: Vec::new(),
                modules: Vec::new(),
            };
            c.read_file(root, &crate_root, None, src.clone(), false);
            crates.push(c);
        }
    }
    crates
}

impl Crate {
    /// Reads `path` as the module that `parent` declares, then the files it declares in turn.
    /// `dir` is where its `mod x;` children live.
    fn read_file(
        &mut self,
        root: &Path,
        path: &Path,
        parent: Option<usize>,
        dir: PathBuf,
        test_only: bool,
    ) -> usize {
        let text =
            fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let rel = path
            .strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        let file = self.files.len();
        self.files.push(SourceFile {
            path: rel,
            lexed: lex(&text),
            test_only,
        });
        let module = self.new_module(parent, file);
        let tokens = self.files[file].lexed.tokens.clone();
        let file_dir = path.parent().expect("a file has a directory").to_path_buf();
        self.scan(root, &tokens, module, dir, &file_dir, test_only);
        module
    }

    fn new_module(&mut self, parent: Option<usize>, file: usize) -> usize {
        self.modules.push(Module {
            parent,
            file,
            children: BTreeMap::new(),
            items: BTreeSet::new(),
            raw: Vec::new(),
        });
        self.modules.len() - 1
    }

    /// One pass over a file's tokens: module declarations, items, `use` trees and paths.
    fn scan(
        &mut self,
        root: &Path,
        t: &[Token],
        module: usize,
        dir: PathBuf,
        file_dir: &Path,
        test_only: bool,
    ) {
        // (module, brace depth inside it, directory of its `mod x;` children)
        let mut stack: Vec<(usize, usize, PathBuf)> = vec![(module, 0, dir)];
        let mut depth = 0;
        let mut attrs: Vec<String> = Vec::new();
        let mut i = 0;
        let is = |i: usize, s: &str| t.get(i).map(|k| k.text == s).unwrap_or(false);
        while i < t.len() {
            let (current, base, cdir) = stack.last().cloned().expect("the file's own module");
            let word = t[i].text.as_str();
            match word {
                "#" if is(i + 1, "[") || (is(i + 1, "!") && is(i + 2, "[")) => {
                    let open = if is(i + 1, "[") { i + 1 } else { i + 2 };
                    let close = matching(t, open);
                    let attr: Vec<&str> =
                        t[open + 1..close].iter().map(|k| k.text.as_str()).collect();
                    if is(i + 1, "[") {
                        attrs.push(attr.join(" "));
                    }
                    i = close + 1;
                    continue;
                }
                "{" => {
                    depth += 1;
                    attrs.clear();
                }
                "}" => {
                    depth -= 1;
                    if stack.len() > 1 && depth < stack.last().expect("nonempty").1 {
                        stack.pop();
                    }
                    attrs.clear();
                }
                ";" => attrs.clear(),
                "mod" if depth == base && t.get(i + 1).is_some_and(|k| is_ident(&k.text)) => {
                    let name = t[i + 1].text.clone();
                    let child_test = test_only || attrs.iter().any(|a| is_test_cfg(a));
                    if is(i + 2, ";") {
                        let explicit = attrs.iter().find_map(|a| path_attr(a));
                        let path = match explicit {
                            Some(ref p) => file_dir.join(p),
                            None if cdir.join(format!("{name}.rs")).is_file() => {
                                cdir.join(format!("{name}.rs"))
                            }
                            None => cdir.join(&name).join("mod.rs"),
                        };
                        let child_dir =
                            if path.file_name() == Some("mod.rs".as_ref()) || explicit.is_some() {
                                path.parent().expect("dir").to_path_buf()
                            } else {
                                cdir.join(&name)
                            };
                        let child =
                            self.read_file(root, &path, Some(current), child_dir, child_test);
                        self.modules[current].children.insert(name, child);
                        attrs.clear();
                        i += 3;
                        continue;
                    }
                    if is(i + 2, "{") {
                        let child = self.new_module(Some(current), self.modules[current].file);
                        self.modules[current].children.insert(name.clone(), child);
                        depth += 1;
                        stack.push((child, depth, cdir.join(&name)));
                        attrs.clear();
                        i += 3;
                        continue;
                    }
                }
                "use" if t.get(i + 1).is_some_and(|k| k.text != "<") => {
                    let end = (i..t.len()).find(|&j| t[j].text == ";").unwrap_or(t.len());
                    let mut out = Vec::new();
                    use_tree(&t[i + 1..end], &mut Vec::new(), &mut out);
                    let reexport = i > 0 && (t[i - 1].text == "pub" || t[i - 1].text == ")");
                    for (segs, binding) in out {
                        let line = t[i].line;
                        let use_binding = Some(binding);
                        self.modules[current].raw.push(RawPath {
                            segs,
                            line,
                            use_binding,
                            reexport,
                        });
                    }
                    attrs.clear();
                    i = end + 1;
                    continue;
                }
                "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "union"
                    if depth == base && t.get(i + 1).is_some_and(|k| is_ident(&k.text)) =>
                {
                    self.modules[current].items.insert(t[i + 1].text.clone());
                }
                // Code a proc macro generates names paths of the user's crate, not this one.
                "quote" | "quote_spanned" | "parse_quote" | "parse_quote_spanned"
                    if is(i + 1, "!")
                        && t.get(i + 2)
                            .is_some_and(|k| matches!(k.text.as_str(), "(" | "[" | "{")) =>
                {
                    i = matching(t, i + 2) + 1;
                    continue;
                }
                "macro_rules" if depth == base && is(i + 1, "!") => {
                    if let Some(k) = t.get(i + 2) {
                        self.modules[current].items.insert(k.text.clone());
                    }
                }
                _ if is_ident(word) && is(i + 1, "::") && (i == 0 || t[i - 1].text != "::") => {
                    let mut segs = vec![word.to_string()];
                    let mut j = i + 1;
                    while is(j, "::") && t.get(j + 1).is_some_and(|k| is_ident(&k.text)) {
                        segs.push(t[j + 1].text.clone());
                        j += 2;
                    }
                    let line = t[i].line;
                    self.modules[current].raw.push(RawPath {
                        segs,
                        line,
                        use_binding: None,
                        reexport: false,
                    });
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The path `segs`, written in `module`, from the crate root; `None` for another crate's.
    pub fn absolute(&self, module: usize, segs: &[String]) -> Option<Vec<String>> {
        let first = segs.first()?;
        let mut at = module;
        let mut rest = segs;
        match first.as_str() {
            "crate" => {
                at = 0;
                rest = &segs[1..];
            }
            "self" => rest = &segs[1..],
            "super" => {
                while rest.first().map(String::as_str) == Some("super") {
                    at = self.modules[at].parent?;
                    rest = &rest[1..];
                }
                if rest.first().map(String::as_str) == Some("self") {
                    rest = &rest[1..];
                }
            }
            name if self.modules[module].children.contains_key(name) => {}
            _ => return None,
        }
        let mut path = self.module_path(at);
        path.extend(rest.iter().cloned());
        Some(path)
    }

    /// The names from the crate root down to `module`.
    pub fn module_path(&self, module: usize) -> Vec<String> {
        let mut names = Vec::new();
        let mut at = module;
        while let Some(parent) = self.modules[at].parent {
            let name = self.modules[parent]
                .children
                .iter()
                .find(|(_, &c)| c == at)
                .map(|(n, _)| n.clone())
                .expect("a child is listed by its parent");
            names.push(name);
            at = parent;
        }
        names.reverse();
        names
    }

    /// The file defining what the absolute path `path` names, following `use` re-exports, and
    /// whether the name was found (`false`: the last module reached is given); `None` when
    /// the name comes from another crate (`use other::Name`, `pub use other::*`).
    pub fn resolve(&self, path: &[String], hops: usize) -> Option<(usize, bool)> {
        let mut at = 0;
        for (k, seg) in path.iter().enumerate() {
            let m = &self.modules[at];
            if let Some(&child) = m.children.get(seg) {
                at = child;
                continue;
            }
            if m.items.contains(seg) || hops > 8 {
                return Some((m.file, m.items.contains(seg)));
            }
            let mut external_glob = false;
            for glob in [false, true] {
                for raw in &m.raw {
                    let binds = match &raw.use_binding {
                        Some(Some(name)) => !glob && name == seg,
                        Some(None) => glob,
                        None => false,
                    };
                    if !binds {
                        continue;
                    }
                    let Some(mut target) = self.absolute(at, &raw.segs) else {
                        if glob {
                            external_glob = true;
                            continue;
                        }
                        return None;
                    };
                    target.extend(path[if glob { k } else { k + 1 }..].iter().cloned());
                    match self.resolve(&target, hops + 1) {
                        Some((file, true)) => return Some((file, true)),
                        None if !glob => return None,
                        _ => {}
                    }
                }
            }
            return if external_glob {
                None
            } else {
                Some((m.file, false))
            };
        }
        Some((self.modules[at].file, true))
    }
}

/// Expands a `use` tree (`a::{b, c::*, d as e}`) into full paths and the names they bind.
fn use_tree(t: &[Token], prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let mut i = 0;
    let depth = prefix.len();
    if t.first().is_some_and(|k| k.text == "::") {
        return; // `use ::other_crate::..`
    }
    while i < t.len() {
        let k = t[i].text.as_str();
        if k == "{" {
            let close = matching(t, i);
            for part in split_top(&t[i + 1..close]) {
                use_tree(part, prefix, out);
            }
            break;
        } else if k == "*" {
            out.push((prefix.clone(), None));
            break;
        } else if is_ident(k) {
            if k == "self" && i == 0 && depth > 0 {
                let name = prefix.last().cloned();
                out.push((prefix.clone(), name));
                break;
            }
            prefix.push(k.to_string());
            if t.get(i + 1).is_some_and(|n| n.text == "::") {
                i += 2;
                continue;
            }
            let name = match (t.get(i + 1), t.get(i + 2)) {
                (Some(a), Some(n)) if a.text == "as" => Some(n.text.clone()).filter(|n| n != "_"),
                _ => Some(k.to_string()),
            };
            out.push((prefix.clone(), name));
            break;
        } else {
            break;
        }
    }
    prefix.truncate(depth);
}

/// The parts of a comma-separated token list, commas inside braces kept.
fn split_top(t: &[Token]) -> Vec<&[Token]> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, k) in t.iter().enumerate() {
        match k.text.as_str() {
            "{" => depth += 1,
            "}" => depth -= 1,
            "," if depth == 0 => {
                parts.push(&t[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&t[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// The index of the bracket closing the one at `open`.
fn matching(t: &[Token], open: usize) -> usize {
    let (o, c) = match t[open].text.as_str() {
        "[" => ("[", "]"),
        "(" => ("(", ")"),
        _ => ("{", "}"),
    };
    let mut depth = 0;
    for (j, k) in t.iter().enumerate().skip(open) {
        if k.text == o {
            depth += 1;
        } else if k.text == c {
            depth -= 1;
            if depth == 0 {
                return j;
            }
        }
    }
    t.len() - 1
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// `cfg ( test )`, `cfg ( all ( test , loom ) )`, `cfg ( loom )`: code only tests build.
fn is_test_cfg(attr: &str) -> bool {
    let words: Vec<&str> = attr.split(' ').collect();
    words.first() == Some(&"cfg")
        && !words.contains(&"not")
        && !words.contains(&"any")
        && words.iter().any(|w| *w == "test" || *w == "loom")
}

/// The file named by `#[path = "..."]`.
fn path_attr(attr: &str) -> Option<String> {
    attr.strip_prefix("path = \"").map(str::to_string)
}
