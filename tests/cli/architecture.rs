//! The layering docs/architecture.md describes, checked on the sources: the top level is the
//! wings and nothing else, the wings are layers (a file imports only its own wing and those
//! below it, in the order of the docs' table), no command imports another, and the modules'
//! imports have no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules of `src/lib.rs`, each a wing of the architecture (docs/architecture.md,
/// "Wings"). `cli`, `mcp` and `agents` are one unit each; every other wing is a folder of
/// modules, and the import graph is drawn between those modules.
const WINGS: &[&str] = &[
    "agents",
    "cli",
    "commands",
    "context",
    "domain",
    "handoff",
    "install",
    "mcp",
    "pipeline",
    "system",
    "transcripts",
    "verify",
];
const UNITS: &[&str] = &["agents", "cli", "mcp"];

/// The wings from the bottom up: the code of a wing names (`crate::…`) only its own wing and
/// the wings below it. docs/architecture.md's table of the wings lists them top down.
const ORDER: &[&str] = &[
    "system",
    "context",
    "transcripts",
    "domain",
    "agents",
    "handoff",
    "verify",
    "pipeline",
    "install",
    "mcp",
    "cli",
    "commands",
];

/// Node of the import graph for a module path: the wing for the units, `wing/module` else.
fn node(parts: &[&str]) -> Option<String> {
    let top = *parts.first()?;
    match parts.get(1) {
        Some(sub) if !UNITS.contains(&top) => Some(format!("{top}/{sub}")),
        _ => Some(top.to_string()),
    }
}

/// Module path of a source file (`lib` and `main` have none).
fn module_path(src: &Path, file: &Path) -> Option<Vec<String>> {
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
        _ => Some(parts),
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

/// The source files that are test modules: each declared `#[cfg(test)] mod name;` by its parent
/// (a unit test's file beside the module, `loops/tests.rs`), and every file below one.
fn test_files(src: &Path) -> BTreeSet<PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let declared =
        regex::Regex::new(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))? )?mod ([a-z_0-9]+);").unwrap();
    let mut tests = BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let stem = file.file_stem().unwrap_or_default();
        let dir = if stem == "mod" || stem == "lib" {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for c in declared.captures_iter(&text) {
            tests.insert(dir.join(format!("{}.rs", &c[1])));
            tests.insert(dir.join(&c[1]));
        }
    }
    files
        .into_iter()
        .filter(|f| tests.iter().any(|t| f.starts_with(t)))
        .collect()
}

/// The code of `file` a build without tests compiles: its text up to its first
/// `#[cfg(test)]`, nothing of a test module's own file.
fn production_code(file: &Path, tests: &BTreeSet<PathBuf>) -> String {
    if tests.contains(file) {
        return String::new();
    }
    let text = std::fs::read_to_string(file).unwrap();
    text.split("#[cfg(test)]")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A unit test moved to its own file is still a test: the rules on production code skip it.
#[test]
fn a_test_module_in_its_own_file_is_a_test() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let tests = test_files(&src);
    for file in [
        "agents/observe_tests/codex.rs",
        "system/redact/tests.rs",
        "pipeline/harness.rs",
    ] {
        assert!(tests.contains(&src.join(file)), "{file} is a test module");
    }
    for file in ["system/redact.rs", "agents/mod.rs", "pipeline/mod.rs"] {
        assert!(
            !tests.contains(&src.join(file)),
            "{file} is not a test module"
        );
    }
}

/// What each module imports from the others (test modules left out).
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tests = test_files(&src);
    let path_ref = regex::Regex::new(r"crate::([a-z_]+)(?:::([a-z_]+))?").unwrap();
    let wing_group = regex::Regex::new(r"crate::([a-z_]+)::\{([^}]*)\}").unwrap();
    let grouped = regex::Regex::new(r"use crate::\{([^}]*)\}").unwrap();
    let group_path = regex::Regex::new(r"\b([a-z_]+)(?:::([a-z_]+))?").unwrap();
    let group_head = regex::Regex::new(r"(?:^|,)\s*([a-z_]+)").unwrap();
    let sibling = regex::Regex::new(r"\bsuper::([a-z_]+)").unwrap();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(path) = module_path(&src, &file) else {
            continue;
        };
        let parts: Vec<&str> = path.iter().map(String::as_str).collect();
        let me = node(&parts).unwrap();
        let code = &production_code(&file, &tests);
        let mut targets = BTreeSet::new();
        for c in path_ref.captures_iter(code) {
            let sub = c.get(2).map(|m| m.as_str());
            targets.extend(node(
                &[&c[1], sub.unwrap_or_default()][..1 + sub.is_some() as usize],
            ));
        }
        for c in wing_group.captures_iter(code) {
            for item in group_head.captures_iter(&c[2]) {
                if &item[1] != "self" {
                    targets.extend(node(&[&c[1], &item[1]]));
                }
            }
        }
        for c in grouped.captures_iter(code) {
            for item in group_path.captures_iter(&c[1]) {
                let sub = item.get(2).map(|m| m.as_str());
                targets.extend(node(
                    &[&item[1], sub.unwrap_or_default()][..1 + sub.is_some() as usize],
                ));
            }
        }
        // `super::x` from `wing/module/file.rs` stays in `wing/module`; from `wing/file.rs` it
        // is the sibling `wing/x`.
        if parts.len() == 2 && !UNITS.contains(&parts[0]) {
            for c in sibling.captures_iter(code) {
                targets.extend(node(&[parts[0], &c[1]]));
            }
        }
        targets.remove(&me);
        targets.retain(|t| !WINGS.contains(&t.as_str()) || UNITS.contains(&t.as_str()));
        graph.entry(me).or_default().extend(targets);
    }
    graph
}

/// The top-level modules `code` names by a `crate::` path: `crate::wing…`, and each item of a
/// `use crate::{wing…, other::{…}}` group.
fn wings_named(code: &str) -> BTreeSet<String> {
    let path = regex::Regex::new(r"crate::([a-z_]+)").unwrap();
    let mut named: BTreeSet<String> = path.captures_iter(code).map(|c| c[1].to_string()).collect();
    for (at, _) in code.match_indices("crate::{") {
        let items = group_items(&code[at + "crate::{".len()..]);
        named.extend(items.iter().filter_map(|i| head(i)));
    }
    named
}

/// The first name of a path in a `use` group (`agents::payload::Payload` -> `agents`).
fn head(item: &str) -> Option<String> {
    let first = item.trim().split("::").next()?.trim();
    (!first.is_empty()).then(|| first.to_string())
}

/// The imports of `code`, a file of `wing`, that name a wing above it: `wing -> higher`.
fn upward(wing: &str, code: &str) -> Vec<String> {
    let rank = |w: &str| ORDER.iter().position(|o| *o == w);
    let own = rank(wing).unwrap_or_else(|| panic!("`{wing}` is not in the wings' order"));
    wings_named(code)
        .into_iter()
        .filter(|named| rank(named).is_some_and(|r| r > own))
        .map(|named| format!("{wing} -> {named}"))
        .collect()
}

/// Every arrow from a file's wing up to a higher one in the part of its text `part` takes (None:
/// the file has no such part), as `src/<file>: wing -> higher`; and the wings seen.
fn upward_arrows(
    part: impl for<'t> Fn(&Path, &'t str, &BTreeSet<PathBuf>) -> Option<&'t str>,
) -> (Vec<String>, BTreeSet<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tests = test_files(&src);
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for file in files {
        let Some(path) = module_path(&src, &file) else {
            continue;
        };
        seen.insert(path[0].clone());
        let text = std::fs::read_to_string(&file).unwrap();
        let Some(code) = part(&file, &text, &tests) else {
            continue;
        };
        for arrow in upward(&path[0], code) {
            wrong.push(format!(
                "src/{}: {arrow}",
                file.strip_prefix(&src).unwrap().display()
            ));
        }
    }
    (wrong, seen)
}

/// Every file's imports of a wing above its own (test modules left out: a unit test may read
/// sample data through a higher wing, such as an agent's transcript reader).
#[test]
fn every_wing_imports_only_itself_and_the_wings_below_it() {
    let (wrong, seen) = upward_arrows(|file, text, tests| {
        (!tests.contains(file)).then(|| text.split("#[cfg(test)]").next().unwrap_or_default())
    });
    assert_eq!(seen.len(), ORDER.len(), "every wing has files: {seen:?}");
    assert!(
        wrong.is_empty(),
        "imports from a lower wing to a higher one (the order, bottom up: {ORDER:?}; \
         docs/architecture.md):\n{}",
        wrong.join("\n")
    );
}

/// A test's own imports that run up the wings, known and left: none (handoff's `test_project`
/// writes its state file itself; the tests that write checkpoints live in `pipeline`).
const TESTS_IMPORTING_UPWARD: &[&str] = &[];

/// Unit tests are held to the order too: a test in a lower wing reads its sample data through
/// its own wing and those below it (an agent's reader is handed in, as the code hands it in), and
/// a test that needs a higher wing lives there.
#[test]
fn test_modules_import_only_their_wing_and_the_wings_below_it() {
    let (mut wrong, _) = upward_arrows(|file, text, tests| match text.find("#[cfg(test)]") {
        _ if tests.contains(file) => Some(text),
        at => at.map(|at| &text[at..]),
    });
    for known in TESTS_IMPORTING_UPWARD {
        assert!(
            wrong.iter().any(|w| w == known),
            "`{known}` is gone: take it off TESTS_IMPORTING_UPWARD"
        );
    }
    wrong.retain(|w| !TESTS_IMPORTING_UPWARD.contains(&w.as_str()));
    assert!(
        wrong.is_empty(),
        "tests importing from a higher wing (the order, bottom up: {ORDER:?}):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_order_rule_sees_each_way_of_importing_upward() {
    assert_eq!(
        upward("domain", "use crate::pipeline::record;"),
        ["domain -> pipeline"]
    );
    assert_eq!(
        upward("transcripts", "let r = crate::agents::event_read(p, None);"),
        ["transcripts -> agents"]
    );
    assert_eq!(
        upward(
            "context",
            "use crate::{\n    system::fsutil,\n    domain::{session::Session, config},\n};"
        ),
        ["context -> domain"]
    );
    assert_eq!(
        upward("agents", "/// See [`crate::install::kept`]."),
        ["agents -> install"]
    );
    assert!(upward(
        "pipeline",
        "use crate::{agents::Agent, domain::session, system::clock};\nuse crate::pipeline::read;"
    )
    .is_empty());
}

/// The order the test holds the code to is the order docs/architecture.md's table shows.
#[test]
fn the_wings_order_is_the_docs_table() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let table: Vec<&str> = docs
        .split("| Wing | Holds | Imports |")
        .nth(1)
        .expect("docs/architecture.md has the wings' table")
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    let top_down: Vec<&str> = ORDER.iter().rev().copied().collect();
    assert_eq!(
        table, top_down,
        "the wings' table, top down, is the order the code keeps"
    );
    let mut wings: Vec<&str> = WINGS.to_vec();
    wings.sort_unstable();
    let mut ordered: Vec<&str> = ORDER.to_vec();
    ordered.sort_unstable();
    assert_eq!(ordered, wings, "the order holds every wing once");
}

#[test]
fn the_top_level_is_the_wings_and_nothing_else() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .filter_map(|l| l.strip_suffix(';'))
        .collect();
    assert_eq!(
        declared, WINGS,
        "src/lib.rs declares the wings of docs/architecture.md"
    );
    assert!(WINGS.len() <= 12, "at most 12 wings");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        assert!(WINGS.contains(&name.as_str()), "src/{name} is not a wing");
        assert!(
            UNITS.contains(&name.as_str()) || path.join("mod.rs").is_file(),
            "the wing src/{name} is a folder of modules"
        );
    }
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    for wing in WINGS {
        assert!(
            docs.contains(&format!("`{wing}`")),
            "docs/architecture.md describes the wing `{wing}`"
        );
    }
}

#[test]
fn the_infrastructure_wing_imports_no_other() {
    let graph = import_graph();
    let wrong: Vec<String> = graph
        .iter()
        .filter(|(from, _)| from.starts_with("system/"))
        .flat_map(|(from, tos)| {
            tos.iter()
                .filter(|to| !to.starts_with("system/"))
                .map(move |to| format!("{from} -> {to}"))
        })
        .collect();
    assert!(wrong.is_empty(), "`system` is the bottom wing: {wrong:?}");
}

#[test]
fn the_hook_pipeline_imports_nothing_of_install() {
    let graph = import_graph();
    assert!(
        graph.keys().any(|m| m.starts_with("pipeline/")),
        "the pipeline's modules are in the graph"
    );
    let wrong: Vec<String> = graph
        .iter()
        .filter(|(from, _)| from.starts_with("pipeline/"))
        .flat_map(|(from, tos)| {
            tos.iter()
                .filter(|to| to.starts_with("install"))
                .map(move |to| format!("{from} -> {to}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "the hook path never runs set-up code: {wrong:?}"
    );
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

/// A cycle of `graph`, found by a depth-first search (a back edge to a node on the stack).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
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
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn module_imports_have_no_cycle() {
    let cycle = find_cycle(&import_graph());
    assert!(
        cycle.is_none(),
        "import cycle: {}",
        cycle.unwrap_or_default().join(" -> ")
    );
}

/// The items of a `use` group whose text starts at `rest` (just after its `{`), at the
/// group's own depth: `a::b, c::{d, e}, self` gives `a::b`, `c::`, `self`.
fn group_items(rest: &str) -> Vec<String> {
    let mut depth = 0;
    let mut items = vec![String::new()];
    for ch in rest.chars() {
        match ch {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => items.push(String::new()),
            _ if depth == 0 => items.last_mut().unwrap().push(ch),
            _ => {}
        }
    }
    items
        .into_iter()
        .map(|i| i.trim().to_string())
        .filter(|i| !i.is_empty())
        .collect()
}

/// What each file's module (`transcripts/activity/loops`) names of the others by a
/// `crate::`, `super::` or `self::` path, resolved to the deepest module the path reaches (test
/// modules left out). A module's own ancestors and submodules are left out: a module and its
/// children are one unit (a child reads its parent's types, the parent hands on the child's).
fn file_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tests = test_files(&src);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .into_iter()
        .filter_map(|f| Some((module_path(&src, &f)?, f)))
        .collect();
    let resolve = |path: &[String]| {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| modules.contains_key(p))
    };
    let reference =
        regex::Regex::new(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)(::\{)?").unwrap();
    let mut graph = BTreeMap::new();
    for (me, file) in &modules {
        let code = &production_code(file, &tests);
        let mut targets = BTreeSet::new();
        for c in reference.captures_iter(code) {
            let mut segments = c[1].split("::").peekable();
            let mut path: Vec<String> = match segments.peek() {
                Some(&"crate") => {
                    segments.next();
                    Vec::new()
                }
                _ => me.clone(),
            };
            while let Some(&s) = segments.peek() {
                match s {
                    "super" => drop(path.pop()),
                    "self" => {}
                    _ => break,
                }
                segments.next();
            }
            path.extend(segments.map(str::to_string));
            let mut paths = vec![path.clone()];
            if c.get(2).is_some() {
                for item in group_items(&code[c.get(0).unwrap().end()..]) {
                    let mut more = path.clone();
                    more.extend(
                        item.split("::")
                            .filter(|s| !s.is_empty() && *s != "self")
                            .map(str::to_string),
                    );
                    paths.push(more);
                }
            }
            for target in paths.iter().filter_map(|p| resolve(p)) {
                let related = target.starts_with(me) || me.starts_with(&target);
                if !related {
                    targets.insert(target.join("/"));
                }
            }
        }
        graph.insert(me.join("/"), targets);
    }
    graph
}

#[test]
fn files_import_each_other_in_no_cycle() {
    let graph = file_graph();
    assert!(
        graph
            .get("transcripts/activity/loops")
            .is_some_and(|t| t.contains("transcripts/activity/failure")),
        "the graph between files sees `use super::failure::…`"
    );
    let cycle = find_cycle(&graph);
    assert!(
        cycle.is_none(),
        "files importing each other: {}",
        cycle.unwrap_or_default().join(" -> ")
    );
}

/// How the registry and the agents' folders spell each agent: the `Agent`
/// variants, the folders' names, and every id, alias and display name.
struct AgentNames {
    variants: Vec<String>,
    folders: Vec<String>,
    /// Ids and aliases: a string literal equal to one names an agent.
    spellings: Vec<String>,
    /// Display names: a string literal containing one names an agent.
    display: Vec<String>,
}

/// Folders of `src/agents/` that hold what every agent shares, not one agent (the settings'
/// shape and editing; the observers' tests, each agent's transcripts as sample data).
const SHARED_AGENT_FOLDERS: &[&str] = &["settings", "observe_tests"];

fn agent_names(src: &Path) -> AgentNames {
    let registry = std::fs::read_to_string(src.join("agents/mod.rs")).unwrap();
    let body = registry
        .split("pub enum Agent {")
        .nth(1)
        .and_then(|rest| rest.split('}').next())
        .expect("src/agents/mod.rs defines `pub enum Agent`");
    let variants: Vec<String> = body
        .split(',')
        // The variant's name, after any attribute (`#[serde(rename = …)]`).
        .filter_map(|v| v.split_whitespace().last())
        .map(str::to_string)
        .collect();
    let id = regex::Regex::new(r#"pub const ID: &str = "([^"]+)";"#).unwrap();
    let aliases = regex::Regex::new(r#"\n    aliases: &\[([^\]]*)\],"#).unwrap();
    let display = regex::Regex::new(r#"const DISPLAY_NAME: &str = "([^"]+)";"#).unwrap();
    let quoted = regex::Regex::new(r#""([^"]+)""#).unwrap();
    let mut names = AgentNames {
        variants,
        folders: Vec::new(),
        spellings: Vec::new(),
        display: Vec::new(),
    };
    for entry in std::fs::read_dir(src.join("agents")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() || SHARED_AGENT_FOLDERS.iter().any(|f| dir.ends_with(f)) {
            continue;
        }
        names
            .folders
            .push(dir.file_name().unwrap().to_string_lossy().into_owned());
        let text = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
        let who = dir.display();
        names
            .spellings
            .push(id.captures(&text).expect("an ID")[1].to_string());
        let list = aliases
            .captures(&text)
            .unwrap_or_else(|| panic!("{who}: aliases"));
        names
            .spellings
            .extend(quoted.captures_iter(&list[1]).map(|c| c[1].to_string()));
        let shown = display
            .captures(&text)
            .unwrap_or_else(|| panic!("{who}: display name"));
        names.display.push(shown[1].to_string());
    }
    names
}

/// Whatever in `code` names a particular agent: a variant of `Agent`, an
/// agent's folder as a path, a string literal that is an agent's id or
/// alias, or one that holds its display name.
fn agent_mentions(code: &str, names: &AgentNames) -> Vec<String> {
    let literal = regex::Regex::new(r#""((?:[^"\\\n]|\\.)*)""#).unwrap();
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        let at = |what: &str| format!("line {}: {what}", n + 1);
        for v in &names.variants {
            if line.contains(&format!("Agent::{v}")) {
                found.push(at(&format!("Agent::{v}")));
            }
        }
        for f in &names.folders {
            if line.contains(&format!("{f}::")) {
                found.push(at(&format!("{f}::")));
            }
        }
        for c in literal.captures_iter(line) {
            let text = &c[1];
            if names.spellings.iter().any(|s| s == text)
                || names.display.iter().any(|d| text.contains(d.as_str()))
            {
                found.push(at(&format!("\"{text}\"")));
            }
        }
    }
    found
}

#[test]
fn only_the_registry_the_agents_folders_and_the_clap_values_name_an_agent() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let names = agent_names(&src);
    assert!(
        names.variants.len() >= 3 && names.folders.len() == names.variants.len(),
        "one folder per agent: {:?} for {:?}",
        names.folders,
        names.variants
    );
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tests = test_files(&src);
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        // The model table names models ("claude", "gemini-2"), not the agents.
        if rel.starts_with("agents")
            || rel.starts_with("cli")
            || rel == Path::new("context/models.rs")
        {
            continue;
        }
        // Unit tests may use any agent as sample data.
        let code = &production_code(&file, &tests);
        for m in agent_mentions(code, &names) {
            wrong.push(format!("src/{}: {m}", rel.display()));
        }
    }
    assert!(
        wrong.is_empty(),
        "only src/agents/ and src/cli/ may name an agent; read its `Agent::spec()`:\n{}",
        wrong.join("\n")
    );
}

/// Adding an agent touches its folder and the registry only: the registry declares each
/// folder once and maps one variant to each folder's `SPEC`, and each folder states its facts
/// in that one value (docs/agents.md, "Adding an agent").
#[test]
fn the_registry_lists_each_agent_folder_once() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let names = agent_names(&src);
    let registry = std::fs::read_to_string(src.join("agents/mod.rs")).unwrap();
    let mut wrong = Vec::new();
    for folder in &names.folders {
        let declared = registry.matches(&format!("pub mod {folder};")).count();
        let mapped = registry.matches(&format!(" => &{folder}::SPEC,")).count();
        if declared != 1 || mapped != 1 {
            wrong.push(format!(
                "src/agents/mod.rs: `pub mod {folder};` {declared} times, `{folder}::SPEC` {mapped} times (want 1 each)"
            ));
        }
        let text = std::fs::read_to_string(src.join("agents").join(folder).join("mod.rs")).unwrap();
        if text
            .matches("pub static SPEC: AgentSpec = AgentSpec {")
            .count()
            != 1
        {
            wrong.push(format!(
                "src/agents/{folder}/mod.rs: not one `pub static SPEC: AgentSpec`"
            ));
        }
    }
    let all = registry
        .split("pub const ALL: [Agent; ")
        .nth(1)
        .and_then(|rest| rest.split("];").next())
        .unwrap_or_default();
    for v in &names.variants {
        if all.matches(&format!("Agent::{v},")).count() != 1 {
            wrong.push(format!(
                "src/agents/mod.rs: `Agent::{v}` not once in `Agent::ALL`"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_agent_rule_sees_each_way_of_naming_an_agent() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let names = agent_names(&src);
    let code = "let a = Agent::Codex;\nuse crate::agents::gemini::usage;\nlet s = \"claude-code\";\nlet m = \"below Gemini CLI's limit\";\n// Agent::Codex in a comment is prose\nlet model = \"gemini-2.5-pro\";\n";
    let found = agent_mentions(code, &names);
    assert_eq!(found.len(), 4, "{found:?}");
}

/// Input is opened one way, `fsutil::open_input`, which checks it is a regular file first: a
/// plain `File::open` of a FIFO blocks until a writer comes, which may be never. The files of
/// `system/fsutil/` are the file-system primitives (they open a folder to sync it, the lock file
/// to name its holder).
#[test]
fn only_fsutil_opens_a_file_for_reading() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tests = test_files(&src);
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        if rel.starts_with("system/fsutil") {
            continue;
        }
        let code = &production_code(&file, &tests);
        for (n, line) in code.lines().enumerate() {
            if line.contains("File::open(") {
                wrong.push(format!("src/{}:{}", rel.display(), n + 1));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "open input with fsutil::open_input, not File::open:\n{}",
        wrong.join("\n")
    );
}
