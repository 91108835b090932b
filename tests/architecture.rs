//! Architecture checks: the layering that `src/lib.rs` describes, read from the source tree.
//!
//! The layers are crates (`crates/*`, then this package), so Cargo already refuses an arrow from a lower
//! crate to a higher one. What Cargo cannot see is checked here: the order of the modules inside one crate
//! (`game` before `mav`, `model` before `inference`, `search` before `engine`, …), the folders without a
//! circle among their files, the app without egui, no function of 100 lines or more, and the map's line for
//! every file. Each crate re-exports the modules of the crates below it under their own names, so every
//! module is named `crate::<module>` wherever it is used, and the scanner reads all crates as one tree.
//!
//! The scanner is plain text: for every `.rs` file under `src/` (this package's and each crate's) it takes the paths that start with
//! `crate::` (or `mavboard::`, how the binary's `cli` names the library), outside comments and string
//! literals, and keeps their first segment, the top-level module used. [`import_graph`] turns that into a
//! graph of top-level modules; [`path`] finds a chain of imports from one module to another, so a check
//! for a cycle between two modules is two calls. [`importers`] lists the files of one module that use
//! another (for checks such as "the app does not use the UI").

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

/// The top-level modules each top-level module uses: module → used modules (itself left out).
type Graph = BTreeMap<String, BTreeSet<String>>;

/// One source file: its path relative to its crate's `src/` (with `/` separators), its path in the
/// repository, and its text.
struct Source {
    path: String,
    file: String,
    text: String,
}

impl Source {
    /// The top-level module the file belongs to: `engine` for `engine/pool.rs` and `engine.rs`; the crate
    /// roots `lib.rs` and `main.rs` are `lib` and `main`.
    fn module(&self) -> String {
        let first = self.path.split('/').next().unwrap_or_default();
        first.strip_suffix(".rs").unwrap_or(first).to_owned()
    }
}

/// Every `.rs` file under `root`, sorted by path; `repo_prefix` is `root`'s path in the repository.
fn source_files(root: &Path, repo_prefix: &str) -> Vec<Source> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(root, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let rel = p.strip_prefix(root).unwrap_or(&p).to_string_lossy().replace('\\', "/");
            Source { file: format!("{repo_prefix}/{rel}"), path: rel, text }
        })
        .collect()
}

/// `text` with its comments (line, doc and block) and the contents of its string and character literals
/// taken out, so that only code is left to scan; the line breaks inside them are kept, so a line of the
/// result is the same line of the file.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let start = i;
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
            out.extend(std::iter::repeat_n('\n', newlines(&chars[start..i])));
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_is_ident(&chars, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some(_) => j += 1,
                }
            }
            out.push_str("\"\"");
            out.extend(std::iter::repeat_n('\n', newlines(&chars[i..j.min(chars.len())])));
            i = j;
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
            out.extend(std::iter::repeat_n('\n', newlines(&chars[start..i.min(chars.len())])));
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // A character literal ('x', '\n', '\u{..}'); a lifetime ('a) is left alone.
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The line breaks in `chars`.
fn newlines(chars: &[char]) -> usize {
    chars.iter().filter(|&&c| c == '\n').count()
}

fn prev_is_ident(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

fn ident_at(chars: &[char], mut i: usize) -> (String, usize) {
    let mut name = String::new();
    while let Some(&c) = chars.get(i) {
        if c.is_alphanumeric() || c == '_' {
            name.push(c);
            i += 1;
        } else {
            break;
        }
    }
    (name, i)
}

/// The top-level modules `code` uses through `crate::` or `mavboard::` paths, grouped imports
/// (`use crate::{a::X, b::Y}`) included: the second segment of each such path of [`relative_paths`].
fn used_modules(code: &str) -> BTreeSet<String> {
    relative_paths(code)
        .into_iter()
        .filter(|p| matches!(p.first().map(String::as_str), Some("crate" | "mavboard")))
        .filter_map(|p| p.get(1).cloned())
        .collect()
}

/// The module-level import graph of `sources`: every top-level module and the top-level modules its files
/// use. Only names that are top-level modules themselves count (so `crate::Foo` of a re-export at the root
/// is left out, and `self` is not an edge).
fn import_graph(sources: &[Source]) -> Graph {
    let modules: BTreeSet<String> = sources.iter().map(Source::module).collect();
    let mut graph = Graph::new();
    for s in sources {
        let module = s.module();
        let edges = graph.entry(module.clone()).or_default();
        for used in used_modules(&code_only(&s.text)) {
            if used != module && modules.contains(&used) {
                edges.insert(used);
            }
        }
    }
    graph
}

/// A chain of imports from `from` to `to` (both ends included), shortest first, if there is one.
fn path(graph: &Graph, from: &str, to: &str) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from([from.to_owned()]);
    while let Some(m) = queue.pop_front() {
        for next in graph.get(&m).into_iter().flatten() {
            if next == from || came_from.contains_key(next) {
                continue;
            }
            came_from.insert(next.clone(), m.clone());
            if next == to {
                let mut chain = vec![to.to_owned()];
                while let Some(prev) = came_from.get(chain.last().map(String::as_str).unwrap_or_default()) {
                    chain.push(prev.clone());
                    if prev == from {
                        break;
                    }
                }
                chain.reverse();
                return Some(chain);
            }
            queue.push_back(next.clone());
        }
    }
    None
}

/// The cycle through `a` and `b`, if each reaches the other: the chain from `a` to `b` and back.
fn cycle_between(graph: &Graph, a: &str, b: &str) -> Option<String> {
    let there = path(graph, a, b)?;
    let back = path(graph, b, a)?;
    Some(format!("{} → {}", there.join(" → "), back[1..].join(" → ")))
}

/// The files of module `module` whose code uses top-level module `used`.
fn importers(sources: &[Source], module: &str, used: &str) -> Vec<String> {
    sources
        .iter()
        .filter(|s| s.module() == module && used_modules(&code_only(&s.text)).contains(used))
        .map(|s| s.path.clone())
        .collect()
}

/// The paths `code` names from `crate::`, `mavboard::`, `super::` or `self::`, groups expanded: `use
/// super::{a::X, b::{c, d as e}}` gives `super::a::X`, `super::b::c` and `super::b::d`. A path ends where
/// its segments do (`*`, a generic or a call end it).
fn relative_paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (word, end) = ident_at(&chars, i);
        if word.is_empty() {
            i += 1;
            continue;
        }
        let after_colon = i > 0 && chars[i - 1] == ':';
        if prev_is_ident(&chars, i)
            || after_colon
            || !matches!(word.as_str(), "crate" | "mavboard" | "super" | "self")
        {
            i = end;
            continue;
        }
        i = path_tail(&chars, end, vec![word], &mut out);
    }
    out
}

/// Reads the rest of a path after `prefix` from `i` (`::segment`s and `::{…}` groups), pushes every
/// whole path to `out` and returns where the path ended.
fn path_tail(chars: &[char], mut i: usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let skip_space = |mut i: usize| {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        i
    };
    loop {
        if !(chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':')) {
            out.push(prefix);
            return i;
        }
        i = skip_space(i + 2);
        if chars.get(i) == Some(&'{') {
            i += 1;
            loop {
                while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                match chars.get(i) {
                    None => return i,
                    Some('}') => return i + 1,
                    _ => {}
                }
                let (word, end) = ident_at(chars, i);
                if word.is_empty() {
                    i += 1;
                } else if word == "as" {
                    // `X as Y`: Y is a new name, not a path.
                    i = ident_at(chars, skip_space(end)).1;
                } else {
                    let mut item = prefix.clone();
                    item.push(word);
                    i = path_tail(chars, end, item, out);
                }
            }
        }
        let (word, end) = ident_at(chars, i);
        if word.is_empty() {
            out.push(prefix);
            return i;
        }
        prefix.push(word);
        i = end;
    }
}

/// The module path of a source file: `app/state/mod.rs` is `app::state`, `app/view.rs` is `app::view`,
/// `lib.rs` is the crate root (empty).
fn module_path(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = path.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// `path` as written in the module `here`, made absolute (`crate::`, `super::` and `self::` resolved).
fn absolute(here: &[String], path: &[String]) -> Vec<String> {
    let mut base: Vec<String> = here.to_vec();
    let mut rest = path;
    if matches!(path.first().map(String::as_str), Some("crate" | "mavboard")) {
        base.clear();
        rest = &path[1..];
    }
    while let Some(first) = rest.first() {
        match first.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    base
}

/// For every folder under `src/`, the graph of its files: each file (or subfolder, as one node) and the
/// files of the same folder it names. A folder's own `mod.rs` is the folder, not one of its files.
fn folder_graphs(sources: &[Source]) -> BTreeMap<String, Graph> {
    let modules: Vec<Vec<String>> = sources.iter().map(|s| module_path(&s.path)).collect();
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for m in &modules {
        for depth in 1..m.len() {
            children.entry(m[..depth].to_vec()).or_default().insert(m[depth].clone());
        }
    }
    let mut graphs: BTreeMap<String, Graph> = BTreeMap::new();
    for (folder, nodes) in &children {
        let graph = graphs.entry(folder.join("/")).or_default();
        for n in nodes {
            graph.entry(n.clone()).or_default();
        }
    }
    for (s, here) in sources.iter().zip(&modules) {
        let paths = relative_paths(&code_only(&s.text));
        for (folder, nodes) in &children {
            let depth = folder.len();
            if here.len() <= depth || here[..depth] != folder[..] {
                continue;
            }
            let me = &here[depth];
            for p in &paths {
                let abs = absolute(here, p);
                if abs.len() > depth
                    && abs[..depth] == folder[..]
                    && &abs[depth] != me
                    && nodes.contains(&abs[depth])
                {
                    let graph = graphs.get_mut(&folder.join("/")).expect("every folder has a graph");
                    graph.entry(me.clone()).or_default().insert(abs[depth].clone());
                }
            }
        }
    }
    graphs
}

/// The circles of `graph`: each group of two or more nodes that all reach each other, with one cycle
/// through its first two as the proof.
fn circles(graph: &Graph) -> Vec<(BTreeSet<String>, String)> {
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    for a in graph.keys() {
        if seen.contains(a) {
            continue;
        }
        let group: BTreeSet<String> = graph
            .keys()
            .filter(|b| *b == a || (path(graph, a, b).is_some() && path(graph, b, a).is_some()))
            .cloned()
            .collect();
        seen.extend(group.iter().cloned());
        if group.len() > 1 {
            let mut members = group.iter();
            let (x, y) = (members.next().expect("two"), members.next().expect("two"));
            let proof = cycle_between(graph, x, y).unwrap_or_default();
            found.push((group, proof));
        }
    }
    found
}

/// The folders that docs/ARCHITECTURE.md allows a circle among their files: the backticked names on its
/// line that starts `Folders with a circle among their files:` (`none` when there is none).
fn documented_circles(doc: &str) -> BTreeSet<String> {
    let line =
        doc.lines().find(|l| l.starts_with("Folders with a circle among their files:")).unwrap_or_default();
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.rsplit_once("src/").map_or(s, |(_, folder)| folder).trim_end_matches('/').to_owned())
        .collect()
}

/// Every crate's `src/` folder in the repository: the crates under `crates/`, then this package's.
fn crate_src_dirs() -> Vec<String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<String> = fs::read_dir(repo.join("crates"))
        .expect("crates/")
        .flatten()
        .filter(|e| e.path().join("src").is_dir())
        .map(|e| format!("crates/{}/src", e.file_name().to_string_lossy()))
        .collect();
    dirs.sort();
    dirs.push("src".to_owned());
    dirs
}

fn src_tree() -> Vec<Source> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_src_dirs().iter().flat_map(|dir| source_files(&repo.join(dir), dir)).collect()
}

#[test]
fn engine_and_uci_do_not_import_each_other_in_a_cycle() {
    let sources = src_tree();
    let graph = import_graph(&sources);
    assert!(graph.contains_key("engine") && graph.contains_key("uci"), "the scan found no engine or uci");
    assert!(
        graph["engine"].contains("uci"),
        "the engine uses the UCI client; the scan should see that edge: {:?}",
        graph["engine"]
    );
    if let Some(cycle) = cycle_between(&graph, "engine", "uci") {
        panic!("engine and uci import each other: {cycle}");
    }
}

#[test]
fn the_uci_client_does_not_import_the_engine() {
    let files = importers(&src_tree(), "uci", "engine");
    assert!(files.is_empty(), "these files under crates/inference/src/uci use crate::engine: {files:?}");
}

#[test]
fn the_app_does_not_import_the_ui() {
    let sources = src_tree();
    assert!(sources.iter().any(|s| s.module() == "app"), "the scan found no app");
    let files = importers(&sources, "app", "ui");
    assert!(
        files.is_empty(),
        "these files under crates/app/src/app use crate::ui (the shell wires app and ui): {files:?}"
    );
}

/// Signs of a FEN parser or a Chess960 decoder of its own: the app reads positions through `game::fen` and
/// `ChessState::chess960`.
const FEN_PARSING: [&str; 6] =
    ["shakmaty::fen", "Fen::", ": Fen", "<Fen>", "CastlingMode::detect", "Board::chess960"];

/// The files under `module` whose code holds one of `signs`, with the sign found.
fn files_with(sources: &[Source], module: &str, signs: &[&str]) -> Vec<(String, String)> {
    sources
        .iter()
        .filter(|s| s.module() == module)
        .filter_map(|s| {
            let code = code_only(&s.text);
            signs.iter().find(|sign| code.contains(**sign)).map(|sign| (s.path.clone(), (*sign).to_owned()))
        })
        .collect()
}

#[test]
fn no_module_under_app_parses_fen_itself() {
    let sources = src_tree();
    let found = files_with(&sources, "app", &FEN_PARSING);
    assert!(
        found.is_empty(),
        "FEN parsing under crates/app/src/app (use game::fen / ChessState::from_fen): {found:?}"
    );
    // The check sees a parser where there is one.
    let game = files_with(&sources, "game", &FEN_PARSING);
    assert!(
        game.iter().any(|(path, _)| path == "game/fen.rs"),
        "game/fen.rs should show the signs: {game:?}"
    );
}

/// The layers of docs/ARCHITECTURE.md's table: each row `| n | `a`, `b` | … |` gives its modules, in order.
fn documented_layers(doc: &str) -> Vec<(u32, Vec<String>)> {
    let after = doc.split("## Layers").nth(1).unwrap_or_default();
    let table = after.split("\n## ").next().unwrap_or_default();
    table
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let layer: u32 = cells.get(1)?.parse().ok()?;
            let modules = cells.get(2)?.split(',').map(|m| m.trim().trim_matches('`').to_owned()).collect();
            Some((layer, modules))
        })
        .collect()
}

/// Every edge of `graph` that does not go up `layers` (to a lower layer, or to an earlier module of the
/// same row), and every module the table does not name.
fn layering_faults(graph: &Graph, layers: &[(u32, Vec<String>)]) -> Vec<String> {
    let mut rank = BTreeMap::new();
    for (layer, modules) in layers {
        for (i, m) in modules.iter().enumerate() {
            rank.insert(m.clone(), (*layer, i));
        }
    }
    let mut faults = Vec::new();
    for (from, used) in graph {
        if from == "lib" {
            continue;
        }
        let Some(&here) = rank.get(from) else {
            faults.push(format!("{from} is not in the table"));
            continue;
        };
        for to in used {
            match rank.get(to) {
                None => faults.push(format!("{to} (used by {from}) is not in the table")),
                Some(&there) if there.0 > here.0 || (there.0 == here.0 && there.1 >= here.1) => {
                    faults.push(format!("{from} (layer {}) uses {to} (layer {})", here.0, there.0))
                }
                Some(_) => {}
            }
        }
    }
    faults
}

#[test]
fn the_import_graph_follows_the_documented_layers() {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md");
    let layers = documented_layers(&doc);
    assert!(layers.len() >= 8, "the layer table was not found in docs/ARCHITECTURE.md: {layers:?}");
    let graph = import_graph(&src_tree());
    let faults = layering_faults(&graph, &layers);
    assert!(faults.is_empty(), "the code and docs/ARCHITECTURE.md disagree:\n{}", faults.join("\n"));
}

#[test]
fn every_source_file_has_its_line_in_the_map() {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md");
    let missing: Vec<String> = src_tree()
        .into_iter()
        .map(|s| format!("`{}`", s.file))
        .filter(|p| !p.ends_with("/tests.rs`") && !doc.contains(p.as_str()))
        .collect();
    assert!(missing.is_empty(), "docs/ARCHITECTURE.md has no line for {missing:?}");
}

#[test]
fn the_layer_check_finds_an_edge_going_up() {
    let layers = documented_layers(
        "## Layers\n| # | module | what |\n|---|---|---|\n| 1 | `game` | rules |\n\
         | 2 | `a`, `b` | two |\n\n## Next\n| 9 | `x` | no |\n",
    );
    assert_eq!(layers, vec![(1, vec!["game".to_owned()]), (2, vec!["a".to_owned(), "b".to_owned()])]);
    let graph = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (from, to) in edges {
            g.entry((*from).to_owned()).or_default().insert((*to).to_owned());
            g.entry((*to).to_owned()).or_default();
        }
        g
    };
    assert!(layering_faults(&graph(&[("a", "game"), ("b", "a")]), &layers).is_empty());
    assert_eq!(layering_faults(&graph(&[("game", "a")]), &layers), ["game (layer 1) uses a (layer 2)"]);
    assert_eq!(layering_faults(&graph(&[("a", "b")]), &layers), ["a (layer 2) uses b (layer 2)"]);
    assert_eq!(
        layering_faults(&graph(&[("a", "ghost")]), &layers),
        ["ghost (used by a) is not in the table", "ghost is not in the table"]
    );
}

fn source(path: &str, text: &str) -> Source {
    let file = format!("src/{path}");
    Source { path: path.to_owned(), file, text: text.to_owned() }
}

#[test]
fn the_scanner_finds_a_cycle_in_a_tiny_tree() {
    let tree = [
        source("engine/mod.rs", "//! Uses [`crate::nothing`].\nuse crate::uci::Client;\n"),
        source("uci/client.rs", "use crate::{game::Move, engine::line_reader};\nfn f<'a>(x: &'a str) {}\n"),
        source("uci/mod.rs", "pub mod client;\nconst S: &str = \"crate::app::X\";\n"),
        source("game/mod.rs", "/* use crate::engine; */ fn g() -> char { '\"' }\n"),
        source("app/mod.rs", "fn h() { mavboard::game::start(); let _ = r#\"crate::ui\"#; }\n"),
    ];
    let graph = import_graph(&tree);
    assert_eq!(graph["engine"], BTreeSet::from(["uci".to_owned()]));
    assert_eq!(graph["uci"], BTreeSet::from(["engine".to_owned(), "game".to_owned()]));
    assert!(graph["game"].is_empty(), "comments and character literals are not code: {:?}", graph["game"]);
    assert_eq!(graph["app"], BTreeSet::from(["game".to_owned()]), "string literals are not code");
    assert_eq!(cycle_between(&graph, "engine", "uci").as_deref(), Some("engine → uci → engine"));
    assert_eq!(importers(&tree, "uci", "engine"), vec!["uci/client.rs".to_owned()]);
    assert_eq!(cycle_between(&graph, "app", "game"), None);
    assert_eq!(path(&graph, "app", "engine"), None);
    assert_eq!(path(&graph, "engine", "game"), Some(vec!["engine".into(), "uci".into(), "game".into()]));
}

#[test]
fn no_folder_has_a_circle_among_its_files_but_those_the_map_names() {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md");
    assert!(
        doc.contains("Folders with a circle among their files:"),
        "docs/ARCHITECTURE.md should say which folders have a circle among their files"
    );
    let allowed = documented_circles(&doc);
    let graphs = folder_graphs(&src_tree());
    assert!(graphs.contains_key("app") && graphs.contains_key("app/state"), "the scan found no app folders");
    assert!(graphs["app"]["state"].contains("view"), "the scan should see app/state using app/view");
    let mut found = Vec::new();
    let mut with = BTreeSet::new();
    for (folder, graph) in &graphs {
        for (group, proof) in circles(graph) {
            with.insert(folder.clone());
            if !allowed.contains(folder) {
                found.push(format!("src/{folder}: {} files ({proof})", group.len()));
            }
        }
    }
    assert!(found.is_empty(), "circles among the files of a folder:\n{}", found.join("\n"));
    let stale: Vec<&String> = allowed.iter().filter(|f| !with.contains(*f)).collect();
    assert!(stale.is_empty(), "docs/ARCHITECTURE.md names circles that are gone: {stale:?}");
}

#[test]
fn the_folder_scan_finds_a_circle_through_groups_super_and_crate_paths() {
    let sources = [
        source("app/mod.rs", "pub mod a; pub mod b; pub mod c; pub mod state;\n"),
        source("app/a.rs", "use super::{b::X, c as other};\n"),
        source("app/b.rs", "fn f() { crate::app::state::g(); }\n"),
        source("app/c.rs", "// use super::a;\nfn h() -> &'static str { \"super::a\" }\n"),
        source("app/state/mod.rs", "mod guard;\nuse crate::app::{c, a::{Y, Z}};\n"),
        source("app/state/guard.rs", "use super::super::c::W;\nuse super::AppState;\n"),
    ];
    let graphs = folder_graphs(&sources);
    let app = &graphs["app"];
    assert_eq!(app["a"], BTreeSet::from(["b".to_owned(), "c".to_owned()]));
    assert_eq!(app["c"], BTreeSet::new(), "comments and strings are not code");
    assert_eq!(app["state"], BTreeSet::from(["a".to_owned(), "c".to_owned()]));
    let found = circles(app);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, BTreeSet::from(["a".to_owned(), "b".to_owned(), "state".to_owned()]));
    assert!(circles(&graphs["app/state"]).is_empty(), "a child naming its folder is no circle");
    assert_eq!(
        documented_circles("Folders with a circle among their files: `crates/app/src/app/`, `league`.\n")
            .len(),
        2
    );
    assert!(documented_circles("Folders with a circle among their files: none.\n").is_empty());
}

/// Signs that code uses egui or eframe.
const EGUI: [&str; 4] = ["egui::", "eframe::", "use egui", "use eframe"];

#[test]
fn the_app_does_not_use_egui() {
    let sources = src_tree();
    let found = files_with(&sources, "app", &EGUI);
    assert!(
        found.is_empty(),
        "egui under crates/app/src/app (return an app::effect::Effect for the shell, take input as values): {found:?}"
    );
    assert!(!files_with(&sources, "ui", &EGUI).is_empty(), "the check should see egui in src/ui");
}

/// The longest a function may be, in lines from `fn` to its closing brace (issue 57: a longer one is split
/// into named steps).
const MAX_FUNCTION_LINES: usize = 100;

/// The functions in `code` (as [`code_only`] leaves it) of `limit` lines or more: (name, first line, lines).
fn long_functions(code: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i + 2 < chars.len() {
        let is_fn = chars[i] == 'f'
            && chars[i + 1] == 'n'
            && chars[i + 2].is_whitespace()
            && (i == 0 || !prev_is_ident(&chars, i));
        if !is_fn {
            i += 1;
            continue;
        }
        let (name, _) =
            ident_at(&chars, i + 3 + chars[i + 3..].iter().take_while(|c| c.is_whitespace()).count());
        // The body: the first `{` before any `;` (a declaration without one has no body).
        let Some(open) = (i..chars.len()).find(|&j| chars[j] == '{' || chars[j] == ';') else { break };
        if chars[open] == '{' {
            let mut depth = 0usize;
            let mut close = open;
            for (j, &c) in chars.iter().enumerate().skip(open) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    close = j;
                    break;
                }
            }
            let first = newlines(&chars[..i]) + 1;
            let lines = newlines(&chars[i..=close]) + 1;
            if lines >= limit {
                found.push((name, first, lines));
            }
        }
        i += 2;
    }
    found
}

#[test]
fn no_function_is_100_lines_or_more() {
    let long: Vec<String> = src_tree()
        .iter()
        .flat_map(|s| {
            long_functions(&code_only(&s.text), MAX_FUNCTION_LINES)
                .into_iter()
                .map(|(name, line, lines)| format!("{}:{line} {name} ({lines} lines)", s.file))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these into named steps (at most {} lines each): {long:#?}",
        MAX_FUNCTION_LINES - 1
    );
}

#[test]
fn the_function_scan_counts_lines_past_comments_and_strings() {
    let text = "/// A doc.\nfn short() {\n    let s = \"{ not a brace\n}\";\n    /* a\n } */\n}\n\
                impl T {\n    fn inner(&self) -> u8 {\n        if true { 1 } else { 2 }\n    }\n    fn decl();\n}\n";
    let code = code_only(text);
    assert_eq!(code.lines().count(), text.lines().count(), "line breaks are kept");
    assert_eq!(long_functions(&code, 1), [("short".to_owned(), 2, 6), ("inner".to_owned(), 9, 3)]);
    assert_eq!(long_functions(&code, 4), [("short".to_owned(), 2, 6)]);
    assert!(long_functions(&code, 7).is_empty());
}
