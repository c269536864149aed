//! ARCHITECTURE.md stays true of the code: every module of the workspace
//! has a row in its module table, every repository path it names exists,
//! and the guard's stages it lists are those `crates/core/src/guard/cycle.rs`
//! lists, in the same order, and calls. Also the documentation's own links:
//! every relative link in README.md, ARCHITECTURE.md and `docs/` points at
//! a file that exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The crates as the module table names them, with the file that declares
/// their top-level modules.
const CRATES: [(&str, &str); 6] = [
    ("core", "crates/core/src/lib.rs"),
    ("description", "crates/description/src/lib.rs"),
    ("ros", "crates/ros/src/lib.rs"),
    ("sim", "crates/sim/src/lib.rs"),
    ("fuzz", "crates/fuzz/src/lib.rs"),
    ("bin", "src/main.rs"),
];

/// The modules a crate root declares (`mod x;`, `pub mod x;`, ...).
fn declared_modules(src: &str) -> BTreeSet<String> {
    src.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_suffix(';')?;
            let name = rest.rsplit_once("mod ")?.1;
            let head = rest.strip_suffix(name)?.trim_end();
            let ok = head == "mod" || (head.ends_with(" mod") && head.starts_with("pub"));
            (ok && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then(|| name.to_string())
        })
        .collect()
}

/// The text between backticks in `s`.
fn ticked(s: &str) -> Vec<String> {
    s.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// ARCHITECTURE.md's section `## title`, up to the next `## `.
fn section<'a>(doc: &'a str, title: &str) -> &'a str {
    let start = doc.find(&format!("\n## {title}\n")).unwrap_or_else(|| panic!("no section `{title}`"));
    let body = &doc[start + 4 + title.len()..];
    body.find("\n## ").map_or(body, |e| &body[..e])
}

#[test]
fn every_module_of_the_workspace_has_a_row() {
    let doc = read("ARCHITECTURE.md");
    let table = section(&doc, "Modules");
    let mut rows: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in table.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| Crate") && !l.starts_with("|--")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert!(cells.len() >= 4, "a module row has crate, module and owner: {line}");
        rows.push((cells[1].to_string(), ticked(cells[2]).into_iter().collect()));
    }
    for (krate, file) in CRATES {
        let declared = declared_modules(&read(file));
        assert!(!declared.is_empty(), "{file} declares no module: the parser above is out of date");
        let listed: BTreeSet<String> =
            rows.iter().filter(|(c, _)| c == krate).flat_map(|(_, m)| m.iter().cloned()).collect();
        let missing: Vec<_> = declared.difference(&listed).collect();
        let gone: Vec<_> = listed.difference(&declared).collect();
        assert!(missing.is_empty(), "ARCHITECTURE.md has no row for {krate} module(s) {missing:?} ({file})");
        assert!(gone.is_empty(), "ARCHITECTURE.md lists {krate} module(s) {gone:?} that {file} does not declare");
    }
    let known: BTreeSet<&str> = CRATES.iter().map(|(c, _)| *c).collect();
    for (c, _) in &rows {
        assert!(known.contains(c.as_str()), "a module row names crate `{c}`, not one of {known:?}");
    }
}

/// Repository paths named in `doc`: words that start with a top-level
/// folder of the repository or are one of its top-level files.
fn named_paths(doc: &str) -> BTreeSet<String> {
    const TOP: [&str; 11] = [
        "crates/",
        "src/",
        "tests/",
        "benches/",
        "scripts/",
        "config/",
        "docs/",
        "launch/",
        "urdf/",
        "interfaces/",
        ".ci/",
    ];
    let mut out = BTreeSet::new();
    for word in doc.split(|c: char| c.is_whitespace() || "`()[],;:|*".contains(c)) {
        let w = word.trim_end_matches(['.', '\'']);
        if TOP.iter().any(|t| w.starts_with(t)) && !w.contains('<') && !w.contains("…") {
            out.insert(w.to_string());
        }
    }
    out
}

#[test]
fn every_path_architecture_names_exists() {
    let doc = read("ARCHITECTURE.md");
    let paths = named_paths(&doc);
    assert!(paths.len() >= 20, "the path scan found only {paths:?}");
    let missing: Vec<_> = paths.iter().filter(|p| !root().join(p).exists()).collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
}

/// The stage names of cycle.rs's numbered module documentation, in order.
fn cycle_doc_stages(src: &str) -> Vec<String> {
    src.lines()
        .filter_map(|l| {
            let l = l.strip_prefix("//! ")?;
            let (n, rest) = l.split_once(". ")?;
            n.parse::<u32>().ok()?;
            ticked(rest).into_iter().next()
        })
        .collect()
}

#[test]
fn the_route_of_a_joint_state_runs_the_stages_cycle_rs_runs() {
    let doc = read("ARCHITECTURE.md");
    let route = section(&doc, "From a joint state to a published stop");
    let line = route.lines().find(|l| l.contains("stages:")).expect("the route names the cycle's stages");
    assert!(line.contains("crates/core/src/guard/cycle.rs"), "the stages are cycle.rs's: {line}");
    let listed = ticked(line.split_once("stages:").expect("stages:").1);
    let cycle = read("crates/core/src/guard/cycle.rs");
    let documented = cycle_doc_stages(&cycle);
    assert_eq!(listed, documented, "ARCHITECTURE.md's stages against cycle.rs's own list");
    let table = section(&doc, "The guard's stages");
    let rows: Vec<String> =
        table.lines().filter(|l| l.starts_with("| `")).filter_map(|l| ticked(l).into_iter().next()).collect();
    assert_eq!(rows, documented, "the stage table's rows against cycle.rs's list");
    // Each stage is called in cycle.rs.
    let code: String = cycle.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    for stage in &documented {
        assert!(code.contains(&format!("{stage}(")), "cycle.rs does not call stage `{stage}`");
    }
    // Each stage's file exists where the table says.
    for l in table.lines().filter(|l| l.starts_with("| `")) {
        let t = ticked(l);
        assert!(root().join(&t[1]).is_file(), "the stage table names {} for `{}`", t[1], t[0]);
    }
}

/// The targets of `[text](target)` links in `doc`, without anchors.
fn links(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = doc;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(')') else { break };
        let target = &after[..end];
        if !target.contains("://") && !target.starts_with('#') {
            out.push(target.split('#').next().unwrap_or(target).to_string());
        }
        rest = &after[end..];
    }
    out
}

#[test]
fn documentation_links_point_at_files_that_exist() {
    let mut docs: Vec<PathBuf> = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    docs.extend(
        std::fs::read_dir(root().join("docs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md")),
    );
    docs.push(root().join("tests/README.md"));
    docs.push(root().join("benches/README.md"));
    let mut broken = Vec::new();
    for d in &docs {
        let text = std::fs::read_to_string(d).unwrap();
        let dir = d.parent().unwrap_or(Path::new("."));
        for l in links(&text) {
            if !dir.join(&l).exists() {
                broken.push(format!("{}: {l}", d.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:?}");
}

#[test]
fn the_readme_stays_short() {
    let n = read("README.md").lines().count();
    assert!(n <= 300, "README.md has {n} lines: the rest belongs in docs/");
}
