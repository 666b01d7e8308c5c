//! The design's rules, checked on the source text: no import circle among the files of `src/`,
//! one home for OS calls and for colours, and test modules that share helpers only through
//! `tests/integration/support/`. Plain std on purpose: a tokenizer that drops
//! comments and literals, a `use`-tree parser, a resolver that follows re-exports to the file
//! that defines an item, and Tarjan's strongly connected components.
//!
//! Each rule is a function from a list of files to its violations, so a new rule is a few lines.
//! What clippy checks is left to it (Cargo.toml's `[lints]`: function length with clippy.toml's
//! threshold, the print and `dbg!` macros); what stays here is what a lint cannot see: layers
//! and circles across files, where OS calls, colours and the standard streams may appear.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

/// One file of the package: its path from the package root (`src/show/tui/app.rs`) and its text.
struct Source {
    path: String,
    text: String,
}

/// Every `.rs` file under `src/`, sorted by path.
fn crate_sources() -> Vec<Source> {
    sources_under("src")
}

/// Every `.rs` file of the integration test crate, `tests/integration/`, sorted by path.
fn test_sources() -> Vec<Source> {
    sources_under("tests/integration")
}

/// Every `.rs` file under the package's folder `folder`, sorted by path.
fn sources_under(folder: &str) -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut dirs, mut out) = (vec![root.join(folder)], Vec::new());
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).expect("read a source folder") {
            let path = entry.expect("read a source folder").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read a source file");
                let rel = path.strip_prefix(root).expect("under the package");
                let path = rel.to_string_lossy().replace('\\', "/");
                out.push(Source { path, text });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Panics with every violation of a rule, one a line.
fn assert_clean(rule: &str, violations: Vec<String>) {
    assert!(violations.is_empty(), "{rule}:\n{}", violations.join("\n"));
}

// ---- The rules ----------------------------------------------------------------------------

/// Each import circle among the files: the files, then each edge with the names that tie it.
fn import_circles(files: &[Source]) -> Vec<String> {
    circles_among(files, |path| path.to_string())
}

/// Each import circle among the folders and files at every depth of the tree: at depth 3 the
/// parts of a layer (`src/show/report`, `src/show/headless`), at depth 4 the parts of those
/// (`src/show/tui/ui`, `src/show/tui/app`), and so on down to the files. A loop that runs
/// through several files of two folders (no file-level circle) is found at the folders' depth.
fn part_circles(files: &[Source]) -> Vec<String> {
    let deepest = files
        .iter()
        .map(|f| f.path.split('/').count())
        .max()
        .unwrap_or(0);
    let mut found = BTreeSet::new();
    for depth in 2..=deepest {
        found.extend(circles_among(files, |path| part_at(path, depth)));
    }
    found.into_iter().collect()
}

/// The first `depth` parts of a file's path without `.rs` (`src/show/tui` for
/// `src/show/tui/ui/grid.rs` at depth 3): the folder or file it belongs to at that depth. A
/// `mod.rs` belongs to its folder, and stands apart from its siblings one level down.
fn part_at(path: &str, depth: usize) -> String {
    let parts: Vec<&str> = path.trim_end_matches(".rs").split('/').collect();
    parts[..parts.len().min(depth)].join("/")
}

/// The circles of the import graph with its files grouped by `group`: the groups, then each
/// edge between two of them with the names that tie it.
fn circles_among(files: &[Source], group: impl Fn(&str) -> String) -> Vec<String> {
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for ((from, to), names) in import_graph(files) {
        let (from, to) = (group(&from), group(&to));
        if from != to {
            edges.entry((from, to)).or_default().extend(names);
        }
    }
    let nodes: Vec<String> = BTreeSet::from_iter(files.iter().map(|f| group(&f.path)))
        .into_iter()
        .collect();
    let index = |p: &str| nodes.iter().position(|n| n == p).expect("a node");
    let mut adjacent = vec![Vec::new(); nodes.len()];
    for (from, to) in edges.keys() {
        adjacent[index(from)].push(index(to));
    }
    let circles = strongly_connected(&adjacent)
        .into_iter()
        .filter(|c| c.len() > 1);
    let circles = circles.map(|circle| {
        let members: BTreeSet<&str> = circle.iter().map(|&i| nodes[i].as_str()).collect();
        let mut text = format!("circle: {}", Vec::from_iter(members.clone()).join(", "));
        for ((from, to), names) in &edges {
            if members.contains(from.as_str()) && members.contains(to.as_str()) {
                let names = Vec::from_iter(names.iter().map(String::as_str)).join(", ");
                text += &format!("\n  {from} -> {to}: {names}");
            }
        }
        text
    });
    circles.collect()
}

/// The layers of `src/`, lowest first. A file imports only from its own layer and those below;
/// `main.rs` and `lib.rs` stand above them all. docs/architecture.md gives the same order.
const LAYERS: [&str; 7] = [
    "base", "platform", "machine", "engine", "judge", "app", "show",
];

/// The layer of a file under `src/<layer>/`, as its place in `LAYERS`; None for the crate
/// roots. A folder of `src/` outside the list is a violation of its own (`unlayered`).
fn layer_of(path: &str) -> Option<Result<usize, String>> {
    let rest = path.strip_prefix("src/")?;
    let (layer, _) = rest.split_once('/')?;
    Some(
        LAYERS
            .iter()
            .position(|l| *l == layer)
            .ok_or_else(|| layer.to_string()),
    )
}

/// Each import of a higher layer by a lower one, with the names that tie them; and each file
/// that sits in no layer (a loose file beside `main.rs` and `lib.rs`, or an unknown folder).
fn imports_up_the_layers(files: &[Source]) -> Vec<String> {
    let mut found: Vec<String> = files
        .iter()
        .filter(|f| !matches!(f.path.as_str(), "src/main.rs" | "src/lib.rs"))
        .filter(|f| !matches!(layer_of(&f.path), Some(Ok(_))))
        .map(|f| format!("{}: in no layer of {LAYERS:?}", f.path))
        .collect();
    for ((from, to), names) in import_graph(files) {
        let (Some(Ok(low)), Some(Ok(high))) = (layer_of(&from), layer_of(&to)) else {
            continue;
        };
        if low < high {
            let names = Vec::from_iter(names).join(", ");
            found.push(format!(
                "{from} -> {to}: {names} ({} imports {}, a higher layer)",
                LAYERS[low], LAYERS[high]
            ));
        }
    }
    found
}

/// Each import by a file under one of `from` of a file under `into` (path prefixes), with the
/// names that tie them: a layer that must not reach up.
fn imports_into(files: &[Source], from: &[&str], into: &str) -> Vec<String> {
    import_graph(files)
        .into_iter()
        .filter(|((f, t), _)| from.iter().any(|p| f.starts_with(p)) && t.starts_with(into))
        .map(|((f, t), names)| format!("{f} -> {t}: {}", Vec::from_iter(names).join(", ")))
        .collect()
}

/// The folder of `tests/integration/` whose modules every test module may import; a test
/// module's own helpers stay in it, and a helper a second module needs moves here.
const TEST_SUPPORT: &str = "support";

/// Each import by a module of the integration tests of another test module (a top-level module
/// of `tests/integration/` other than `TEST_SUPPORT`), with the names that tie them: tests
/// share helpers only through `support/`, which imports no test module either.
fn test_modules_importing_each_other(files: &[Source]) -> Vec<String> {
    let top = |path: &str| module_of(path).and_then(|m| m.first().cloned());
    import_graph(files)
        .into_iter()
        .filter(|((from, to), _)| {
            let to_top = top(to);
            to_top.as_ref().is_some_and(|t| t != TEST_SUPPORT) && top(from) != to_top
        })
        .map(|((f, t), names)| format!("{f} -> {t}: {}", Vec::from_iter(names).join(", ")))
        .collect()
}

/// Each use of the path root `root::` (`libc::`, `Color::`) outside the files under `allowed`.
fn path_outside(files: &[Source], root: &str, allowed: &[&str]) -> Vec<String> {
    mentions(files, allowed, |t, i| {
        t[i].s == root && next_is(t, i + 1, "::")
    })
}

/// Each mention of `target_os` outside `allowed`, except in the `cfg` of a `mod` declaration.
fn target_os_outside(files: &[Source], allowed: &[&str]) -> Vec<String> {
    mentions(files, allowed, |t, i| {
        t[i].s == "target_os" && !attribute_of_mod(t, i)
    })
}

/// `file:line: the line` for each line with a token that `counts` in the code (not comments or literals) of
/// the files outside `allowed` (path prefixes).
fn mentions(
    files: &[Source],
    allowed: &[&str],
    counts: impl Fn(&[Tok], usize) -> bool,
) -> Vec<String> {
    let mut hits = Vec::new();
    for f in files
        .iter()
        .filter(|f| !allowed.iter().any(|a| f.path.starts_with(a)))
    {
        let t = lex(&f.text);
        let lines: BTreeSet<usize> = (0..t.len())
            .filter(|&i| counts(&t, i))
            .map(|i| t[i].line)
            .collect();
        let text = |n: usize| f.text.lines().nth(n - 1).unwrap_or("").trim();
        hits.extend(
            lines
                .into_iter()
                .map(|n| format!("{}:{n}: {}", f.path, text(n))),
        );
    }
    hits
}

/// Whether token `i` sits in an outer attribute (`#[…]`) of a file module's declaration
/// (`mod name;`, not an inline `mod name { … }`).
fn attribute_of_mod(t: &[Tok], i: usize) -> bool {
    let mut depth = 0;
    let Some(open) = (0..i).rev().find(|&j| {
        match t[j].s.as_str() {
            "]" => depth += 1,
            "[" if depth == 0 => return true,
            "[" => depth -= 1,
            _ => {}
        }
        false
    }) else {
        return false;
    };
    if open == 0 || t[open - 1].s != "#" {
        return false;
    }
    let mut j = skip_attributes(t, open - 1);
    if next_is(t, j, "pub") {
        j += 1;
        if next_is(t, j, "(") {
            j = close_of(t, j) + 1;
        }
    }
    next_is(t, j, "mod") && next_is(t, j + 2, ";")
}

/// Each `Result<…, String>` in the code of the files outside `allowed`: an error that is only
/// text cannot be matched, converted or given its exit code, so the layers return the crate's
/// `Error` (or a typed error of their own that converts into it).
fn string_errors(files: &[Source], allowed: &[&str]) -> Vec<String> {
    mentions(files, allowed, |t, i| {
        if t[i].s != "Result" || !next_is(t, i + 1, "<") {
            return false;
        }
        let (mut depth, mut args, mut last_arg) = (0usize, 1, Vec::new());
        for tok in &t[i + 1..] {
            match tok.s.as_str() {
                "<" | "(" | "[" => depth += 1,
                ">" | ")" | "]" => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                "," if depth == 1 => {
                    args += 1;
                    last_arg.clear();
                }
                word if depth == 1 => last_arg.push(word),
                _ => {}
            }
        }
        args == 2 && last_arg == ["String"]
    })
}

/// What the tracker calls an entry, as a comment that points into it names it.
const TRACKER_WORD: &str = "issue";

/// Each line whose comment or test name points into the project's tracker: the tracker's word
/// followed by a number, in the possessive or after "the", an item number opening a comment, or
/// a number after "(#". A reader of the repository cannot open the tracker, so a comment says
/// its reason in words.
fn issue_citations(files: &[Source]) -> Vec<String> {
    let cites = |line: &str| {
        let words = line.to_lowercase().replace('_', " ");
        let after_issue = words
            .match_indices(TRACKER_WORD)
            .map(|(at, _)| &words[at + TRACKER_WORD.len()..]);
        let numbered = after_issue.clone().any(|rest| {
            rest.trim_start_matches([' ', '#'])
                .starts_with(|c: char| c.is_ascii_digit())
        });
        let possessive = after_issue.clone().any(|rest| rest.starts_with("'s"));
        let the_issue = words.contains(&format!("the {TRACKER_WORD}"))
            && !words.contains(&format!("the {TRACKER_WORD}r"));
        let item = words
            .trim_start()
            .trim_start_matches('/')
            .trim_start()
            .starts_with("item ")
            && words.contains(|c: char| c.is_ascii_digit());
        let hash = words.contains("(#")
            && words
                .split("(#")
                .skip(1)
                .any(|r| r.starts_with(|c: char| c.is_ascii_digit()));
        numbered || possessive || the_issue || item || hash
    };
    let mut found = Vec::new();
    for file in files {
        for (n, line) in file.text.lines().enumerate() {
            if cites(line) {
                found.push(format!("{}:{}: {}", file.path, n + 1, line.trim()));
            }
        }
    }
    found
}

/// Each file under the package whose name marks it as a leftover of a merge or a patch
/// (`.orig`, `.rej`, a trailing `~`): it is never built, so what it holds is silently dead.
fn merge_leftovers() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut dirs, mut found) = (vec![root.to_path_buf()], Vec::new());
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).expect("read a folder of the package") {
            let path = entry.expect("read a folder of the package").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            if path.is_dir() {
                // The build's output and git's own files are not the project's.
                if name != "target" && !name.starts_with('.') {
                    dirs.push(path);
                }
            } else if name.ends_with(".orig") || name.ends_with(".rej") || name.ends_with('~') {
                let rel = path.strip_prefix(root).expect("under the package");
                found.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

// ---- Tokens -------------------------------------------------------------------------------

/// An identifier, `::`, or one punctuation character, with its line.
struct Tok {
    s: String,
    line: usize,
}

/// Splits Rust source into tokens, dropping comments and string and character literals (so a
/// path in a doc comment or a message is not an import).
fn lex(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    while i < c.len() {
        let (ch, next) = (c[i], c.get(i + 1).copied().unwrap_or(' '));
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == '*' {
            let mut depth = 0; // block comments nest
            while i < c.len() {
                let pair = (c[i], c.get(i + 1).copied().unwrap_or(' '));
                if pair == ('/', '*') || pair == ('*', '/') {
                    depth += if pair.0 == '/' { 1 } else { -1 };
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(&c, i + 1, 0, &mut line);
        } else if ch == '\'' {
            // '\n', '\'', '\u{..}', 'x' are literals; 'a alone is a lifetime or a label
            if next == '\\' {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else {
                i += if c.get(i + 2) == Some(&'\'') { 3 } else { 1 };
            }
        } else if is_ident(ch) {
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
            let quote = c.get(i + hashes) == Some(&'"');
            if matches!(word.as_str(), "r" | "br" | "cr") && quote {
                i = skip_string(&c, i + hashes + 1, hashes, &mut line); // raw string
            } else if matches!(word.as_str(), "b" | "c") && quote && hashes == 0 {
                i = skip_string(&c, i + 1, 0, &mut line);
            } else if word == "r" && hashes == 1 {
                i += 1; // raw identifier: r#type is the identifier type
            } else {
                out.push(Tok { s: word, line });
            }
        } else if ch == ':' && next == ':' {
            out.push(Tok {
                s: "::".into(),
                line,
            });
            i += 2;
        } else {
            out.push(Tok { s: ch.into(), line });
            i += 1;
        }
    }
    out
}

/// The index after a string whose body starts at `i` and that closes with `"` and `hashes` #s.
fn skip_string(c: &[char], mut i: usize, hashes: usize, line: &mut usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' if hashes == 0 => i += 1,
            '"' if c[i + 1..].iter().take(hashes).all(|&h| h == '#') => return i + 1 + hashes,
            _ => {}
        }
        *line += c.get(i).map_or(0, |&ch| usize::from(ch == '\n'));
        i += 1;
    }
    i
}

/// The index of the bracket that closes the one at `open`.
fn close_of(t: &[Tok], open: usize) -> usize {
    let mut depth = 0;
    for (j, tok) in t.iter().enumerate().skip(open) {
        match tok.s.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    t.len()
}

/// The index after the attributes (`#[…]`, `#![…]`) that start at `i`.
fn skip_attributes(t: &[Tok], mut i: usize) -> usize {
    while next_is(t, i, "#") {
        i += 1 + usize::from(next_is(t, i + 1, "!"));
        i = close_of(t, i) + 1;
    }
    i
}

// ---- What the files say: modules, items, imports, paths ----------------------------------

/// A module path from the crate root: `["report", "snapshot"]`.
type ModPath = Vec<String>;

/// The module a file holds: `src/lib.rs` the root, `src/a/b.rs` and `src/a/b/mod.rs` `a::b`.
/// None for the binaries (`src/main.rs`, `src/bin/`): crates of their own, which may use the
/// library but never the reverse, so they cannot close a circle. In the integration test crate,
/// `tests/integration/main.rs` is the root and `tests/integration/a/b.rs` is `a::b`.
fn module_of(path: &str) -> Option<ModPath> {
    let (rest, root) = match path.strip_prefix("tests/integration/") {
        Some(rest) => (rest.strip_suffix(".rs")?, "main"),
        None => {
            let rest = path.strip_prefix("src/")?.strip_suffix(".rs")?;
            if rest == "main" || rest.starts_with("bin/") {
                return None;
            }
            (rest, "lib")
        }
    };
    let mut module: ModPath = rest.split('/').map(String::from).collect();
    if rest == root || module.last().is_some_and(|m| m == "mod") {
        module.pop();
    }
    Some(module)
}

/// The library's modules, items and imports, each with the module (a file's, or an inline
/// `mod name { … }`) it is in, and every path each file names, in `use` or in code.
#[derive(Default)]
struct Crate {
    modules: HashMap<ModPath, usize>,
    /// Items defined at a module's top level.
    items: HashSet<(ModPath, String)>,
    /// Each module's `use` declarations: the name brought in (`*` for a glob) and the path.
    aliases: HashMap<ModPath, Vec<(String, Vec<String>)>>,
    /// Every path a file names, in `use` or in code.
    paths: Vec<NamedPath>,
}

/// A path as a file names it: the file, the module it is written in, the path, and whether it
/// stands in a `pub use` (a re-export: a facade's structure, not a use of what it names).
struct NamedPath {
    file: usize,
    here: ModPath,
    path: Vec<String>,
    re_export: bool,
}

/// The keywords that define a named item.
const ITEM_KEYWORDS: &str = "fn struct enum trait type const static union mod macro_rules";

impl Crate {
    fn read(files: &[Source]) -> Crate {
        let mut krate = Crate::default();
        for (file, source) in files.iter().enumerate() {
            if let Some(module) = module_of(&source.path) {
                krate.modules.insert(module.clone(), file);
                krate.parse(file, &module, &source.text);
            }
        }
        krate
    }

    /// Reads file `file` of module `module`, leaving out `#[cfg(test)]` items.
    fn parse(&mut self, file: usize, module: &[String], text: &str) {
        let t = lex(text);
        let mut here: ModPath = module.to_vec();
        let mut inline = Vec::new(); // the brace depth each inline module opened at
        let (mut depth, mut i) = (0, 0);
        let test_attr = ["#", "[", "cfg", "(", "test", ")", "]"];
        while i < t.len() {
            let top = depth == inline.last().map_or(0, |d| d + 1);
            let (s, next) = (t[i].s.as_str(), t.get(i + 1).map_or("", |t| t.s.as_str()));
            if t.len() >= i + 7 && t[i..i + 7].iter().zip(test_attr).all(|(t, s)| t.s == s) {
                i = item_end(&t, i);
                continue;
            }
            match s {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if inline.last() == Some(&depth) {
                        inline.pop();
                        here.pop();
                    }
                }
                "use" => {
                    let re_export = is_pub_before(&t, i);
                    let end = (i..t.len()).find(|&j| t[j].s == ";").unwrap_or(t.len());
                    let words: Vec<&str> = t[i + 1..end].iter().map(|t| t.s.as_str()).collect();
                    let mut imports = Vec::new();
                    use_tree(&words, &mut 0, Vec::new(), &mut imports);
                    for (path, name) in imports {
                        self.paths.push(NamedPath {
                            file,
                            here: here.clone(),
                            path: path.clone(),
                            re_export,
                        });
                        self.aliases
                            .entry(here.clone())
                            .or_default()
                            .push((name, path));
                    }
                    i = end;
                }
                // A macro's body names paths as its call sites will see them, not as this
                // module does: its name is an item here, its body is skipped.
                "macro_rules" if next == "!" => {
                    if top && let Some(name) = t.get(i + 2).filter(|n| is_ident(&n.s)) {
                        self.items.insert((here.clone(), name.s.clone()));
                    }
                    i = item_end(&t, i);
                    continue;
                }
                _ if top && ITEM_KEYWORDS.split(' ').any(|k| k == s) => {
                    let modifiers = ["fn", "mut", "unsafe", "async", "extern", "!"];
                    let j = (i + 1..t.len()).find(|&j| !modifiers.contains(&t[j].s.as_str()));
                    if let Some(j) = j.filter(|&j| is_ident(&t[j].s)) {
                        self.items.insert((here.clone(), t[j].s.clone()));
                        if s == "mod" && next_is(&t, j + 1, "{") {
                            inline.push(depth);
                            here.push(t[j].s.clone());
                            self.modules.insert(here.clone(), file);
                            i = j;
                        }
                    }
                }
                _ if next == "::" && (i == 0 || t[i - 1].s != "::") => {
                    let mut path = vec![s.to_string()];
                    while next_is(&t, i + 1, "::") && t.get(i + 2).is_some_and(|t| is_ident(&t.s)) {
                        path.push(t[i + 2].s.clone());
                        i += 2;
                    }
                    self.paths.push(NamedPath {
                        file,
                        here: here.clone(),
                        path,
                        re_export: false,
                    });
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The absolute form of `path` as written in module `here`; None for other crates' paths.
    fn absolute(&self, here: &[String], path: &[String]) -> Option<ModPath> {
        let supers = path.iter().take_while(|s| *s == "super").count();
        match path.first()?.as_str() {
            "crate" => Some(path[1..].to_vec()),
            "self" => Some([here, &path[1..]].concat()),
            "super" => Some(
                [
                    here.get(..here.len().checked_sub(supers)?)?,
                    &path[supers..],
                ]
                .concat(),
            ),
            first if self.modules.contains_key(&[here, &[first.into()]].concat()) => {
                Some([here, path].concat()) // a child module, named without `self::`
            }
            first => {
                // a name the module imported: `use crate::report;` … `report::export(…)`
                let aliases = self.aliases.get(here)?;
                let (_, target) = aliases.iter().find(|(alias, _)| alias == first)?;
                if target.first().is_some_and(|t| t == first) {
                    return None; // `use serde_json;`: another crate
                }
                Some([self.absolute(here, target)?, path[1..].to_vec()].concat())
            }
        }
    }

    /// The file that defines what the absolute `path` names, and the name: the item's file,
    /// or its module's when the item is not found (made by a macro, say).
    fn defining_file(&self, path: &[String], hops: usize) -> Option<(usize, String)> {
        let n = (0..=path.len())
            .rev()
            .find(|&n| self.modules.contains_key(&path[..n]))?;
        let module_file = self.modules[&path[..n]];
        let Some(name) = path.get(n) else {
            return Some((
                module_file,
                path.last().cloned().unwrap_or_else(|| "crate".into()),
            ));
        };
        Some((
            self.item(&path[..n], name, hops).unwrap_or(module_file),
            name.clone(),
        ))
    }

    /// The file that defines item `name` of `module`: that module's, or where its imports
    /// (named first, then globs) lead.
    fn item(&self, module: &[String], name: &str, hops: usize) -> Option<usize> {
        if self.items.contains(&(module.to_vec(), name.to_string())) {
            return Some(self.modules[module]);
        }
        let aliases = self.aliases.get(module).filter(|_| hops < 16)?; // 16: an import loop
        let named = aliases.iter().filter(|(alias, _)| alias == name);
        let globs = aliases.iter().filter(|(alias, _)| alias == "*");
        named.chain(globs).find_map(|(alias, path)| {
            let target = self.absolute(module, path)?;
            if alias != "*" {
                return self.defining_file(&target, hops + 1).map(|(file, _)| file);
            }
            self.modules
                .contains_key(&target)
                .then(|| self.item(&target, name, hops + 1))?
        })
    }
}

/// Whether the `use` at `i` is a `pub use` (`pub`, `pub(crate)`, `pub(super)`, …).
fn is_pub_before(t: &[Tok], i: usize) -> bool {
    match i.checked_sub(1).map(|j| t[j].s.as_str()) {
        Some("pub") => true,
        Some(")") => (0..i - 1)
            .rev()
            .find(|&j| t[j].s == "(")
            .is_some_and(|open| open > 0 && t[open - 1].s == "pub"),
        _ => false,
    }
}

fn is_ident(s: &str) -> bool {
    s.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

fn next_is(t: &[Tok], i: usize, s: &str) -> bool {
    t.get(i).is_some_and(|t| t.s == s)
}

/// The index after the item that starts at `i` (with its attributes): past its `;` or its body.
fn item_end(t: &[Tok], i: usize) -> usize {
    let mut j = skip_attributes(t, i);
    while j < t.len() {
        match t[j].s.as_str() {
            ";" => return j + 1,
            "{" => return close_of(t, j) + 1,
            "(" | "[" => j = close_of(t, j),
            _ => {}
        }
        j += 1;
    }
    j
}

/// Flattens a use tree (`a::{self, b::{C as D}, e::*}`) from `words[*i]` into `(path, name)`
/// pairs: `(a, a)`, `(a::b::C, D)`, `(a::e, *)`.
fn use_tree(
    words: &[&str],
    i: &mut usize,
    mut path: Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    while let Some(&word) = words.get(*i) {
        *i += 1;
        match word {
            "::" => {}
            "*" => return out.push((path, "*".into())),
            "{" => {
                while words.get(*i).is_some_and(|w| *w != "}") {
                    use_tree(words, i, path.clone(), out);
                    *i += usize::from(words.get(*i) == Some(&","));
                }
                *i += 1;
                return;
            }
            _ => {
                path.push(word.into());
                if words.get(*i) == Some(&"::") {
                    continue;
                }
                if word == "self" {
                    path.pop();
                }
                let mut name = path.last().cloned().unwrap_or_default();
                if words.get(*i) == Some(&"as") {
                    name = words.get(*i + 1).unwrap_or(&"_").to_string();
                    *i += 2;
                }
                return out.push((path, name));
            }
        }
    }
}

/// The file-level import graph: `(from, to) → the names that tie them`. A `mod.rs` that
/// re-exports its children (`pub use child::Item`) is a facade, so a re-export of a child is no
/// edge; but a `mod.rs` that calls into or imports a child depends on it like any other file,
/// and a child that uses what its `mod.rs` defines closes a circle with it.
fn import_graph(files: &[Source]) -> BTreeMap<(String, String), BTreeSet<String>> {
    let krate = Crate::read(files);
    let mut edges: BTreeMap<_, BTreeSet<String>> = BTreeMap::new();
    for named in &krate.paths {
        let target = krate
            .absolute(&named.here, &named.path)
            .and_then(|abs| krate.defining_file(&abs, 0));
        let Some((to, name)) = target else { continue };
        let (from, to) = (files[named.file].path.clone(), files[to].path.clone());
        let child = module_of(&to)
            .zip(module_of(&from))
            .is_some_and(|(t, f)| t.starts_with(&f));
        if from != to && !(child && named.re_export) {
            edges.entry((from, to)).or_default().insert(name);
        }
    }
    edges
}

/// Tarjan's strongly connected components of a graph given as adjacency lists.
fn strongly_connected(adjacent: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        adjacent: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        components: Vec<Vec<usize>>,
        next: usize,
    }
    fn visit(s: &mut State, v: usize) {
        (s.index[v], s.low[v]) = (Some(s.next), s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        let adjacent = s.adjacent;
        for &w in &adjacent[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if s.index[v] == Some(s.low[v]) {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let n = adjacent.len();
    let mut s = State {
        adjacent,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        components: Vec::new(),
        next: 0,
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.components
}

// ---- The rules on this crate ----------------------------------------------------------------

#[test]
fn no_import_circle_among_the_files_of_src() {
    assert_clean(
        "import circles among the files of src/",
        import_circles(&crate_sources()),
    );
}

#[test]
fn no_import_circle_among_the_folders_at_any_depth() {
    assert_clean(
        "import circles among the folders and files at some depth of src/",
        part_circles(&crate_sources()),
    );
}

#[test]
fn no_layer_imports_a_higher_one() {
    assert_clean(
        "imports up the layers (base < platform < machine < engine < judge < app < show)",
        imports_up_the_layers(&crate_sources()),
    );
}

#[test]
fn snapshots_and_contention_watching_do_not_import_the_monitor() {
    // The report records what the monitor watched (episodes, suspects, the log) from
    // src/judge/watch/, which the monitor draws; neither reaches into src/show/tui/.
    assert_clean(
        "imports of src/show/tui/ from the report or the watching",
        imports_into(
            &crate_sources(),
            &["src/show/report/", "src/judge/watch/"],
            "src/show/tui/",
        ),
    );
}

#[test]
fn libc_only_in_the_platform_layer() {
    // The platform layer is the only home of OS calls; add a file here only with a reason.
    let allowed = ["src/platform/"];
    assert_clean(
        "libc:: outside the platform layer",
        path_outside(&crate_sources(), "libc", &allowed),
    );
}

#[test]
fn target_os_only_in_the_platform_layer() {
    let found = target_os_outside(&crate_sources(), &["src/platform/"]);
    assert_clean(
        "target_os outside the platform layer and mod declarations",
        found,
    );
}

#[test]
fn colours_only_in_the_theme() {
    let found = path_outside(&crate_sources(), "Color", &["src/show/tui/ui/theme.rs"]);
    assert_clean("Color:: outside src/show/tui/ui/theme.rs", found);
}

#[test]
fn the_standard_streams_only_through_the_one_writer() {
    // stdout and stderr are written in src/base/output.rs only, so that a failed write is handled by
    // one rule (a closed pipe is a clean exit, any other failure one line); the monitor's screen
    // is a terminal backend (src/show/tui/terminal.rs). A child's streams (`Command::stdout`,
    // a method) are the child's, not ours. The print macros are clippy's (`print_stdout`,
    // `print_stderr`, `dbg_macro` in Cargo.toml's `[lints]`); a call of `stdout()` is not.
    let streams = mentions(
        &crate_sources(),
        &["src/base/output.rs", "src/show/tui/terminal.rs"],
        |t, i| {
            let ours = i >= 2 && t[i - 1].s == "::" && t[i - 2].s == "output";
            let method = i >= 1 && t[i - 1].s == ".";
            matches!(t[i].s.as_str(), "stdout" | "stderr")
                && next_is(t, i + 1, "(")
                && !ours
                && !method
        },
    );
    assert_clean(
        "stdout()/stderr() outside src/base/output.rs and the terminal",
        streams,
    );
}

#[test]
fn test_modules_share_helpers_only_through_support() {
    // A helper that a second test module needs lives in tests/integration/support/,
    // so no test module depends on another's tests compiling, and helpers are found in one place.
    let files = test_sources();
    assert!(
        files
            .iter()
            .any(|f| f.path == "tests/integration/support/mod.rs"),
        "tests/integration/ is read"
    );
    assert_clean(
        "test modules of tests/integration/ importing each other (not through support/)",
        test_modules_importing_each_other(&files),
    );
}

#[test]
fn errors_are_typed_outside_the_clap_value_parsers() {
    // clap's `value_parser` functions must return a `Display` error; they live in one file.
    assert_clean(
        "Result<_, String> outside src/app/cli/values.rs",
        string_errors(&crate_sources(), &["src/app/cli/values.rs"]),
    );
}

#[test]
fn no_comment_or_test_name_cites_an_issue() {
    // This file is left out: its rule and its own tests spell the citations they look for.
    let mut files = crate_sources();
    files.extend(sources_under("tests"));
    files.extend(sources_under("benches"));
    files.retain(|f| f.path != "tests/integration/architecture.rs");
    assert_clean(
        "comments or test names that cite an issue (say the reason in words)",
        issue_citations(&files),
    );
}

#[test]
fn no_merge_leftovers_in_the_package() {
    assert_clean("leftovers of a merge or a patch", merge_leftovers());
}

// ---- The checker itself ---------------------------------------------------------------------

fn sources(files: &[(&str, &str)]) -> Vec<Source> {
    let source = |(path, text): &(&str, &str)| Source {
        path: path.to_string(),
        text: text.to_string(),
    };
    files.iter().map(source).collect()
}

fn edges(files: &[(&str, &str)]) -> Vec<String> {
    let graph = import_graph(&sources(files));
    let edge = |((from, to), names): (&(String, String), &BTreeSet<String>)| {
        format!(
            "{from} -> {to}: {}",
            Vec::from_iter(names.iter().map(String::as_str)).join(", ")
        )
    };
    graph.iter().map(edge).collect()
}

#[test]
fn a_two_file_circle_is_found_with_the_names_that_tie_it() {
    let files = sources(&[
        ("src/lib.rs", "mod a; mod b; mod c;"),
        ("src/a.rs", "use crate::b::{B, make_b};\npub struct A(B);"),
        (
            "src/b.rs",
            "pub struct B;\npub fn make_b() -> B { let _ = crate::a::A(B); crate::c::C }",
        ),
        ("src/c.rs", "pub const C: u8 = 1;"),
    ]);
    let circles = import_circles(&files);
    let expected =
        "circle: src/a.rs, src/b.rs\n  src/a.rs -> src/b.rs: B, make_b\n  src/b.rs -> src/a.rs: A";
    assert_eq!(circles, [expected]);
}

#[test]
fn a_re_export_through_mod_rs_is_followed_not_a_circle() {
    let files = [
        ("src/lib.rs", "pub mod shapes;\npub use shapes::*;"),
        (
            "src/shapes/mod.rs",
            "mod circle;\nmod square;\npub use circle::Circle;\npub use square::{Side as Edge, *};",
        ),
        (
            "src/shapes/circle.rs",
            "use super::{Edge, Square};\npub struct Circle(Square, Edge);",
        ),
        (
            "src/shapes/square.rs",
            "pub struct Square;\npub struct Side;",
        ),
        (
            "src/user.rs",
            "fn f() -> crate::Circle { crate::shapes::Circle(super::Square, crate::Edge) }",
        ),
    ];
    assert_eq!(import_circles(&sources(&files)), Vec::<String>::new());
    assert_eq!(
        edges(&files),
        [
            "src/shapes/circle.rs -> src/shapes/square.rs: Edge, Square",
            "src/user.rs -> src/shapes/circle.rs: Circle",
            "src/user.rs -> src/shapes/square.rs: Edge, Square",
        ]
    );
}

#[test]
fn test_modules_comments_and_literals_are_not_imports() {
    let files = [
        ("src/lib.rs", "mod a; mod b;"),
        (
            "src/a.rs",
            "pub struct A;\npub fn f() -> crate::b::B { crate::b::B }",
        ),
        (
            "src/b.rs",
            "// use crate::a::A;\n/* crate::a::A /* nested */ crate::a::A */\npub struct B;\n\
             const S: &str = \"crate::a::A\"; const R: &str = r#\"crate::a::A \"\"#; const Q: char = '\"';\n\
             fn g<'a>(x: &'a u8) -> &'a u8 { x }\n\
             #[cfg(test)]\n#[allow(unused)]\nmod tests {\n    use crate::a::A;\n    fn h() { crate::a::f(); }\n}\n\
             #[cfg(test)]\nuse crate::a::f;",
        ),
    ];
    assert_eq!(edges(&files), ["src/a.rs -> src/b.rs: B"]);
}

#[test]
fn inline_modules_resolve_self_and_super_from_where_they_are() {
    let files = [
        ("src/lib.rs", "mod clock; mod other;"),
        (
            "src/clock.rs",
            "const BLOCK: usize = 4;\nmod chain {\n    use super::BLOCK;\n    pub fn f() -> crate::other::Other { super::super::other::Other }\n}",
        ),
        ("src/other.rs", "pub struct Other;"),
    ];
    assert_eq!(edges(&files), ["src/clock.rs -> src/other.rs: Other"]);
}

#[test]
fn an_imported_module_name_resolves_in_code() {
    let files = [
        ("src/lib.rs", "mod m; mod user;"),
        ("src/m/mod.rs", "mod inner;\npub use inner::g;"),
        ("src/m/inner.rs", "pub fn g() {}"),
        (
            "src/user.rs",
            "use crate::m;\nuse serde_json;\nfn f() { m::g(); serde_json::json!(1); }",
        ),
    ];
    assert_eq!(
        edges(&files),
        [
            "src/user.rs -> src/m/inner.rs: g",
            "src/user.rs -> src/m/mod.rs: m"
        ]
    );
}

#[test]
fn use_trees_flatten_with_groups_renames_and_globs() {
    let words: Vec<String> = lex("::crate::a::{self, b::{C as D, e::{F, G}}, h::*, }")
        .into_iter()
        .map(|t| t.s)
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    use_tree(&words, &mut 0, Vec::new(), &mut out);
    let flat: Vec<String> = out
        .iter()
        .map(|(path, name)| format!("{} as {name}", path.join("::")))
        .collect();
    assert_eq!(
        flat,
        [
            "crate::a as a",
            "crate::a::b::C as D",
            "crate::a::b::e::F as F",
            "crate::a::b::e::G as G",
            "crate::a::h as *"
        ]
    );
}

#[test]
fn the_path_and_target_os_rules_find_code_only_outside_their_homes() {
    let lib = "#[cfg(target_os = \"linux\")]\n#[allow(unused)]\npub(crate) mod platform;\n\
               // libc::getpid\nfn g() -> bool { cfg!(target_os = \"macos\") }\n\
               #[cfg(target_os = \"linux\")]\nmod pin { }";
    let files = sources(&[
        (
            "src/platform/linux.rs",
            "fn f() { unsafe { libc::getpid() }; }",
        ),
        ("src/lib.rs", lib),
        (
            "src/pool.rs",
            "use libc::cpu_set_t;\nfn h() { let _ = \"libc::x\"; }\nfn k() { libc::sched_yield(); }",
        ),
    ]);
    assert_eq!(
        path_outside(&files, "libc", &["src/platform/"]),
        [
            "src/pool.rs:1: use libc::cpu_set_t;",
            "src/pool.rs:3: fn k() { libc::sched_yield(); }"
        ]
    );
    assert_eq!(
        target_os_outside(&files, &["src/platform/"]),
        [
            "src/lib.rs:5: fn g() -> bool { cfg!(target_os = \"macos\") }",
            "src/lib.rs:6: #[cfg(target_os = \"linux\")]"
        ]
    );
}

#[test]
fn an_import_up_the_layers_is_named_with_both_layers() {
    let files = sources(&[
        (
            "src/lib.rs",
            "pub mod base; pub mod engine; pub mod show; mod stray;",
        ),
        ("src/base/mod.rs", "pub mod time;"),
        (
            "src/base/time.rs",
            "pub fn now() -> crate::show::Clock { crate::show::Clock }",
        ),
        (
            "src/engine/mod.rs",
            "use crate::base::time::now;\npub struct E;",
        ),
        (
            "src/show/mod.rs",
            "pub struct Clock;\nuse crate::engine::E;",
        ),
        ("src/stray.rs", "pub struct S;"),
        ("src/main.rs", "use stream_top::show::Clock;"),
    ]);
    assert_eq!(
        imports_up_the_layers(&files),
        [
            "src/stray.rs: in no layer of [\"base\", \"platform\", \"machine\", \"engine\", \"judge\", \"app\", \"show\"]",
            "src/base/time.rs -> src/show/mod.rs: Clock (base imports show, a higher layer)",
        ]
    );
}

#[test]
fn a_circle_through_two_folders_is_found_though_no_two_files_close_it() {
    // a/x -> b/y -> a/z: no file-level circle, but the folders a and b import each other.
    let files = sources(&[
        ("src/lib.rs", "pub mod show;"),
        ("src/show/mod.rs", "pub mod a; pub mod b;"),
        ("src/show/a/mod.rs", "pub mod x; pub mod z;"),
        (
            "src/show/a/x.rs",
            "use crate::show::b::y::Y;\npub struct X(Y);",
        ),
        ("src/show/a/z.rs", "pub struct Z;"),
        ("src/show/b/mod.rs", "pub mod y;"),
        (
            "src/show/b/y.rs",
            "use crate::show::a::z::Z;\npub struct Y(Z);",
        ),
    ]);
    assert_eq!(import_circles(&files), Vec::<String>::new());
    assert_eq!(
        part_circles(&files),
        [
            "circle: src/show/a, src/show/b\n  src/show/a -> src/show/b: Y\n  src/show/b -> src/show/a: Z"
        ]
    );
}

#[test]
fn a_test_module_importing_another_is_found_but_not_one_importing_support() {
    let files = sources(&[
        ("tests/integration/main.rs", "mod a; mod b; mod support;"),
        ("tests/integration/support/mod.rs", "pub mod fixtures;"),
        (
            "tests/integration/support/fixtures.rs",
            "pub fn grid() {}\npub fn cell() -> crate::b::B { crate::b::B }",
        ),
        (
            "tests/integration/a.rs",
            "use crate::support::fixtures::grid;\nuse crate::b::{helper, B as Row};\n\
             mod inner {\n    use super::*;\n    fn t() { super::super::b::helper(); }\n}\n\
             #[test]\nfn t() { grid(); helper(); let _: Row = crate::support::fixtures::cell(); }",
        ),
        (
            "tests/integration/b.rs",
            "use crate::support::fixtures::*;\npub struct B;\npub fn helper() { grid() }\n\
             mod local {\n    use super::helper;\n}\n// use crate::a::t;",
        ),
    ]);
    assert_eq!(
        test_modules_importing_each_other(&files),
        [
            "tests/integration/a.rs -> tests/integration/b.rs: B, helper",
            "tests/integration/support/fixtures.rs -> tests/integration/b.rs: B",
        ]
    );
}

#[test]
fn a_mod_rs_that_calls_its_child_which_uses_the_mod_rs_is_a_circle() {
    // The facade's re-export is no edge; its call into the child is, and closes the circle.
    let files = sources(&[
        ("src/lib.rs", "pub mod tui;"),
        (
            "src/tui/mod.rs",
            "mod app;\npub use app::App;\npub struct View;\npub fn run() { app::step() }",
        ),
        (
            "src/tui/app.rs",
            "pub struct App(super::View);\npub fn step() {}",
        ),
    ]);
    assert_eq!(
        import_circles(&files),
        [
            "circle: src/tui/app.rs, src/tui/mod.rs\n  src/tui/app.rs -> src/tui/mod.rs: View\n  src/tui/mod.rs -> src/tui/app.rs: step"
        ]
    );
    let facade = sources(&[
        ("src/lib.rs", "pub mod tui;"),
        ("src/tui/mod.rs", "mod app;\nmod view;\npub use app::App;"),
        ("src/tui/app.rs", "pub struct App(super::view::View);"),
        ("src/tui/view.rs", "pub struct View;"),
    ]);
    assert_eq!(import_circles(&facade), Vec::<String>::new());
}

#[test]
fn a_circle_between_a_folder_and_a_file_one_level_down_is_found() {
    // tui/ui/grid.rs -> tui/app.rs -> tui/ui/log.rs: no two files close it, and the layer's
    // part (src/show) holds both, so only the depth of tui's children sees it.
    let files = sources(&[
        ("src/lib.rs", "pub mod show;"),
        ("src/show/mod.rs", "pub mod tui;"),
        ("src/show/tui/mod.rs", "pub mod app; pub mod ui;"),
        (
            "src/show/tui/app.rs",
            "pub struct App(crate::show::tui::ui::log::Log);",
        ),
        ("src/show/tui/ui/mod.rs", "pub mod grid; pub mod log;"),
        (
            "src/show/tui/ui/grid.rs",
            "pub fn draw(_: &crate::show::tui::app::App) {}",
        ),
        ("src/show/tui/ui/log.rs", "pub struct Log;"),
    ]);
    assert_eq!(import_circles(&files), Vec::<String>::new());
    assert_eq!(
        part_circles(&files),
        [
            "circle: src/show/tui/app, src/show/tui/ui\n  src/show/tui/app -> src/show/tui/ui: Log\n  src/show/tui/ui -> src/show/tui/app: App"
        ]
    );
}

#[test]
fn string_errors_and_citations_are_found() {
    let long_body = "    let x = 1;\n".repeat(120);
    let files = sources(&[(
        "src/a.rs",
        &format!(
            "// Split after the review (the {TRACKER_WORD}'s case).\n\
             fn short() -> Result<String> {{ Ok(String::new()) }}\n\
             fn parse(s: &str) -> Result<Vec<u8>, String> {{ Err(s.into()) }}\n\
             fn long() {{\n{long_body}    // a comment line is not code\n\n}}\n\
             trait T {{ fn declared(&self) -> Result<u8, std::string::String>; }}\n\
             #[test]\nfn {TRACKER_WORD}_21_item_4_holds() {{}}\n"
        ),
    )]);
    assert_eq!(
        string_errors(&files, &[]),
        ["src/a.rs:3: fn parse(s: &str) -> Result<Vec<u8>, String> { Err(s.into()) }"]
    );
    assert_eq!(
        issue_citations(&files)
            .iter()
            .map(|v| v.split(':').nth(1).unwrap_or(""))
            .collect::<Vec<_>>(),
        ["1", "130"]
    );
}
