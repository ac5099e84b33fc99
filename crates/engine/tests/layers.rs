//! The engine's top-level modules form layers: no import circle among them.
//!
//! Reads every source file under `crates/engine/src`, attributes it to its
//! top-level module (`src/jobs/record.rs` → `jobs`, `src/errors.rs` →
//! `errors`), collects each `crate::<name>` it names outside its
//! `#[cfg(test)]` part (tests may reach anywhere), resolves the crate root's
//! old-path re-exports (`pub use jobs::registry;` makes `crate::registry`
//! mean `jobs`), and fails naming the circle if the graph has one.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file before its first `#[cfg(test)]`, without `//` comments.
fn non_test_code(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

fn ident_at(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Every top-level name a piece of code reaches through `crate::`, including
/// the members of `use crate::{a, b::c}` groups.
fn crate_names(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start => {
                        names.insert(ident_at(&group[j..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(ident_at(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// The crate root's `pub use <module>::<name>` re-exports: alias → module.
fn aliases(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let code = non_test_code(lib);
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        let Some(path) = stmt.strip_prefix("pub use ") else {
            continue;
        };
        let module = ident_at(path);
        let rest = &path[module.len()..];
        let rest = rest.strip_prefix("::").unwrap_or(rest);
        let items: Vec<&str> = match rest.strip_prefix('{') {
            Some(g) => g.trim_end_matches('}').split(',').collect(),
            None => vec![rest],
        };
        for item in items {
            let item = item.trim();
            let alias = match item.rsplit_once(" as ") {
                Some((_, a)) => a.trim(),
                None => item.rsplit("::").next().unwrap_or(item),
            };
            if !alias.is_empty() {
                map.insert(alias.to_string(), module.clone());
            }
        }
    }
    map
}

fn engine_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let alias = aliases(&lib);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        if rel == Path::new("lib.rs") {
            continue;
        }
        let first = rel.components().next().unwrap().as_os_str();
        let module = first.to_str().unwrap().trim_end_matches(".rs").to_string();
        let text = fs::read_to_string(&file).unwrap();
        let deps = graph.entry(module.clone()).or_default();
        for name in crate_names(&non_test_code(&text)) {
            let target = alias.get(&name).cloned().unwrap_or(name);
            if target != module {
                deps.insert(target);
            }
        }
    }
    graph
}

/// A circle in `graph`, as the modules along it, if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, done, path) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(c) = visit(node, graph, &mut done, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_top_level_modules_have_no_import_circle() {
    let graph = engine_graph();
    for expected in ["errors", "git", "jobs", "policy", "process", "text"] {
        assert!(
            graph.contains_key(expected),
            "no module {expected} in {graph:?}"
        );
    }
    // The reader sees real imports: the API verbs reach the supervisor's
    // process layer, and the git runs reach the jobs.
    assert!(graph["jobs"].contains("process"), "{graph:?}");
    assert!(graph["git"].contains("jobs"), "{graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "import circle among the engine's top-level modules: {}\nfull graph: {graph:#?}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_check_finds_a_circle_through_a_group_and_a_re_export() {
    // What the engine had before its layout: the registry reaching the git
    // runs through a root re-export, and the git runs reaching the registry.
    let lib = "pub mod git;\npub mod jobs;\npub use git::run as gitrun;\n";
    let alias = aliases(lib);
    assert_eq!(alias["gitrun"], "git");
    let jobs = crate_names("use crate::{errors::EngineError, gitrun::GitSettings};\n");
    assert_eq!(
        jobs,
        BTreeSet::from(["errors".to_string(), "gitrun".to_string()])
    );
    let mut graph = Graph::new();
    graph.insert(
        "jobs".into(),
        jobs.into_iter()
            .map(|n| alias.get(&n).cloned().unwrap_or(n))
            .collect(),
    );
    graph.insert("git".into(), BTreeSet::from(["jobs".to_string()]));
    graph.insert("errors".into(), BTreeSet::new());
    assert_eq!(
        find_cycle(&graph),
        Some(vec![
            "git".to_string(),
            "jobs".to_string(),
            "git".to_string()
        ])
    );
    graph.get_mut("jobs").unwrap().remove("git");
    assert_eq!(find_cycle(&graph), None);
}

#[test]
fn test_code_and_comments_do_not_count() {
    let code =
        non_test_code("use crate::a::X; // crate::b\n#[cfg(test)]\nmod tests { use crate::c; }\n");
    assert_eq!(crate_names(&code), BTreeSet::from(["a".to_string()]));
}
