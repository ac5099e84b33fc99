//! Shared copies of the strings many commands repeat (sessions, working
//! directories, the directory that holds the log directories): a record holds a reference to one copy instead of its own.
//! Interned strings live for the life of the process, like the records that
//! use them.

use crate::sync::Unpoisoned;
use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex};

static STRINGS: LazyLock<Mutex<HashSet<Arc<str>>>> = LazyLock::new(Default::default);
static PATHS: LazyLock<Mutex<HashSet<Arc<Path>>>> = LazyLock::new(Default::default);

/// The shared copy of `s`, made on first use.
pub fn intern(s: &str) -> Arc<str> {
    let mut set = STRINGS.locked();
    if let Some(shared) = set.get(s) {
        return shared.clone();
    }
    let shared: Arc<str> = Arc::from(s);
    set.insert(shared.clone());
    shared
}

/// The shared copy of the path `p`, made on first use.
pub fn intern_path(p: &Path) -> Arc<Path> {
    let mut set = PATHS.locked();
    if let Some(shared) = set.get(p) {
        return shared.clone();
    }
    let shared: Arc<Path> = Arc::from(p);
    set.insert(shared.clone());
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_one_copy() {
        let a = intern("session-a");
        let b = intern(&String::from("session-a"));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(&*a, "session-a");
        assert!(!Arc::ptr_eq(&a, &intern("session-b")));
        let p = intern_path(Path::new("/tmp/x"));
        assert!(Arc::ptr_eq(&p, &intern_path(&Path::new("/tmp").join("x"))));
    }
}
