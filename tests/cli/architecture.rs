//! The layering docs/architecture.md describes, checked on the sources: no
//! command imports another, nothing below the commands imports `commands`
//! or `cli`, and the modules' imports have no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module name of a source file: the top-level module, or `commands/x` and
/// `services/x` for the files of those two layers.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    match parts.first().map(String::as_str) {
        None | Some("lib") | Some("main") => None,
        Some("commands") | Some("services") if parts.len() > 1 => {
            Some(format!("{}/{}", parts[0], parts[1]))
        }
        Some(top) => Some(top.to_string()),
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What each module imports from the others (test modules left out).
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let path_ref = regex::Regex::new(r"crate::([a-z_]+)(?:::([a-z_]+))?").unwrap();
    let grouped = regex::Regex::new(r"use crate::\{([^}]*)\}").unwrap();
    let group_item = regex::Regex::new(r"\b([a-z_]+)::").unwrap();
    let sibling = regex::Regex::new(r"\bsuper::([a-z_]+)").unwrap();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(me) = module_of(&src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let layer = me.split('/').next().unwrap().to_string();
        let mut targets = BTreeSet::new();
        for c in path_ref.captures_iter(code) {
            let top = &c[1];
            targets.insert(match c.get(2) {
                Some(sub) if top == "commands" || top == "services" => {
                    format!("{top}/{}", sub.as_str())
                }
                _ => top.to_string(),
            });
        }
        for c in grouped.captures_iter(code) {
            for item in group_item.captures_iter(&c[1]) {
                targets.insert(item[1].to_string());
            }
        }
        if me.contains('/') {
            for c in sibling.captures_iter(code) {
                targets.insert(format!("{layer}/{}", &c[1]));
            }
        }
        targets.remove(&me);
        graph.entry(me).or_default().extend(targets);
    }
    graph
}

#[test]
fn no_command_imports_another_and_nothing_below_imports_upward() {
    let graph = import_graph();
    assert!(graph.len() > 30, "found only {} modules", graph.len());
    let mut wrong = Vec::new();
    for (from, tos) in &graph {
        for to in tos {
            let upward = to == "cli" || to.starts_with("commands");
            // `commands/mod.rs` (the dispatch) is of the command layer too.
            let command = from.starts_with("commands");
            if (from.starts_with("commands/") && to.starts_with("commands/"))
                || (!command && from != "cli" && upward)
            {
                wrong.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layering: {wrong:?}");
}

#[test]
fn module_imports_have_no_cycle() {
    let graph = import_graph();
    // Depth-first search; a back edge to a module on the stack is a cycle.
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|s| *s == m) {
            let mut cycle: Vec<String> = stack[at..].iter().map(|s| s.to_string()).collect();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if !done.insert(m) {
            return None;
        }
        stack.push(m);
        for next in graph.get(m).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        let cycle = visit(m, &graph, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "import cycle: {}",
            cycle.unwrap().join(" -> ")
        );
    }
}
