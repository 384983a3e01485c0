//! Hints for a fallback named in the wrong namespace, shared by every attribute.
//!
//! `fallback = "cached"` names a method of `Self` on a method, and a fn in scope on a fn
//! without `self`. Mixing them up makes rustc report "no function or associated item named
//! `cached`" or "cannot find value `cached`", which does not say what to write. The macro
//! cannot see other items, but it can read the file it expands in: when that file shows the
//! other kind of fn under the fallback's name, and nothing that could be the kind named, the
//! attribute reports the mix-up itself and says what to write.
//!
//! The check is conservative: only fns written in this file count, and it stays silent when
//! the name could come from elsewhere (an import of it or a glob import, an item-level macro,
//! a macro in an impl), so it never rejects code that would compile.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;

use syn::{ImplItem, Item, TraitItem, UseTree};

/// The fns of one file, by kind.
#[derive(Default)]
pub struct FileIndex {
    /// Fns outside any impl or trait (in any inline module).
    free: Vec<String>,
    /// Fns inside impls and traits.
    associated: Vec<String>,
    /// Names imported by `use` (the last segment, or the rename), and whether a glob is.
    imported: Vec<String>,
    /// Whether the file may define names the index cannot see: a glob import, an item-level
    /// macro invocation, a macro inside an impl or trait.
    opaque: bool,
}

/// What the file shows about a fallback named `name`, if it is a clear mix-up.
pub enum Mixup {
    /// On a method: `name` is a free fn here and no method of that name is.
    FreeFnOnMethod,
    /// On a fn without `self` in an impl: `name` is an associated fn here and no fn in scope
    /// of that name is.
    AssociatedFnOnFreeFn,
}

impl FileIndex {
    /// Indexes `source`; `None` when it does not parse.
    pub fn new(source: &str) -> Option<Self> {
        let file = syn::parse_file(source).ok()?;
        let mut index = FileIndex::default();
        index.items(&file.items);
        Some(index)
    }

    fn items(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Fn(f) => self.free.push(f.sig.ident.to_string()),
                Item::Impl(i) => {
                    for item in &i.items {
                        match item {
                            ImplItem::Fn(f) => self.associated.push(f.sig.ident.to_string()),
                            ImplItem::Macro(_) | ImplItem::Verbatim(_) => self.opaque = true,
                            _ => {}
                        }
                    }
                }
                Item::Trait(t) => {
                    for item in &t.items {
                        match item {
                            TraitItem::Fn(f) => self.associated.push(f.sig.ident.to_string()),
                            TraitItem::Macro(_) | TraitItem::Verbatim(_) => self.opaque = true,
                            _ => {}
                        }
                    }
                }
                Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        self.items(items);
                    }
                }
                Item::Use(u) => self.use_tree(&u.tree),
                Item::Macro(_) | Item::Verbatim(_) | Item::ForeignMod(_) => self.opaque = true,
                _ => {}
            }
        }
    }

    fn use_tree(&mut self, tree: &UseTree) {
        match tree {
            UseTree::Path(p) => self.use_tree(&p.tree),
            UseTree::Name(n) => self.imported.push(n.ident.to_string()),
            UseTree::Rename(r) => self.imported.push(r.rename.to_string()),
            UseTree::Glob(_) => self.opaque = true,
            UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(t)),
        }
    }

    /// The mix-up, if the file shows one for the fallback `name` of the fn `protected`
    /// (`method`: whether it takes `self`).
    pub fn mixup(&self, name: &str, protected: &str, method: bool) -> Option<Mixup> {
        if self.opaque || self.imported.iter().any(|n| n == name) {
            return None;
        }
        let free = self.free.iter().any(|n| n == name);
        let associated = self.associated.iter().any(|n| n == name);
        if method {
            (free && !associated).then_some(Mixup::FreeFnOnMethod)
        } else {
            // The protected fn must be an associated fn for `Self` to exist.
            let protected_is_associated = self.associated.iter().any(|n| n == protected)
                && !self.free.iter().any(|n| n == protected);
            (associated && !free && protected_is_associated).then_some(Mixup::AssociatedFnOnFreeFn)
        }
    }
}

/// A file's index with the modification time and length it was made from.
type Indexed = (Option<SystemTime>, u64, Rc<FileIndex>);

thread_local! {
    /// Indexed files, kept for the rest of the compilation (a crate expands many attributes
    /// per file).
    static FILES: RefCell<HashMap<PathBuf, Indexed>> = RefCell::new(HashMap::new());
}

/// The index of the file at `path`, read and parsed once per version of the file.
pub fn index(path: &Path) -> Option<Rc<FileIndex>> {
    let meta = std::fs::metadata(path).ok()?;
    let stamp = (meta.modified().ok(), meta.len());
    if let Some(index) = FILES.with(|files| {
        files
            .borrow()
            .get(path)
            .filter(|(modified, len, _)| (*modified, *len) == stamp)
            .map(|(_, _, index)| Rc::clone(index))
    }) {
        return Some(index);
    }
    let source = std::fs::read_to_string(path).ok()?;
    let index = Rc::new(FileIndex::new(&source)?);
    FILES.with(|files| {
        files
            .borrow_mut()
            .insert(path.to_path_buf(), (stamp.0, stamp.1, Rc::clone(&index)))
    });
    Some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mixup(source: &str, name: &str, protected: &str, method: bool) -> Option<&'static str> {
        FileIndex::new(source)
            .unwrap()
            .mixup(name, protected, method)
            .map(|m| match m {
                Mixup::FreeFnOnMethod => "free fn on method",
                Mixup::AssociatedFnOnFreeFn => "associated fn on free fn",
            })
    }

    #[test]
    fn free_fn_named_on_a_method() {
        let src = "struct P; impl P { async fn charge(&self) {} } async fn cached() {}";
        assert_eq!(
            mixup(src, "cached", "charge", true),
            Some("free fn on method")
        );
        // A method of that name somewhere in the file: no hint.
        let src =
            "struct P; impl P { async fn charge(&self) {} fn cached(&self) {} } fn cached() {}";
        assert_eq!(mixup(src, "cached", "charge", true), None);
    }

    #[test]
    fn associated_fn_named_on_a_fn_without_self() {
        let src = "struct P; impl P { async fn charge() {} async fn cached() {} }";
        assert_eq!(
            mixup(src, "cached", "charge", false),
            Some("associated fn on free fn")
        );
        // The protected fn is a free fn: `Self` does not exist there.
        let src = "struct P; impl P { async fn cached() {} } async fn charge() {}";
        assert_eq!(mixup(src, "cached", "charge", false), None);
    }

    #[test]
    fn silent_when_the_name_may_come_from_elsewhere() {
        let src =
            "use fallbacks::cached; struct P; impl P { async fn charge(&self) {} } fn cached() {}";
        assert_eq!(mixup(src, "cached", "charge", true), None);
        let src = "use super::*; struct P; impl P { async fn charge() {} async fn cached() {} }";
        assert_eq!(mixup(src, "cached", "charge", false), None);
        let src = "make_fns!(); struct P; impl P { async fn charge(&self) {} } fn cached() {}";
        assert_eq!(mixup(src, "cached", "charge", true), None);
        let src = "struct P; impl P { async fn charge(&self) {} m!(); } fn cached() {}";
        assert_eq!(mixup(src, "cached", "charge", true), None);
    }
}
