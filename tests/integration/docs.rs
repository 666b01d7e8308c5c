//! Docs that cannot rot: every relative link of README.md, CONTRIBUTING.md, CHANGELOG.md and
//! docs/*.md resolves (file and anchor, by GitHub's rules), every flag and subcommand `--help`
//! lists is in docs/reference.md, the `stream-top …` lines of the README's code blocks parse and
//! leave a clone clean (what they write, git ignores), the README's test command is the one CI
//! runs, and the README's picture of the live monitor (`assets/screen.svg`) is the screen the
//! code draws today.

use crate::support::tui_common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use stream_top::app::cli::{Config, Parsed};
use stream_top::engine::events::Event;
use stream_top::engine::plan::CellId;
use stream_top::machine::host::{HostSample, ProcessCpu};
use stream_top::show::tui::ui;
use stream_top::show::tui::view::ViewState;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown page of docs/, as paths relative to the repository.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
        .into_iter()
        .map(PathBuf::from)
        .collect();
    // docs/ and its results/ folder (the dated measurements the design pages link to).
    let mut docs: Vec<PathBuf> = ["docs", "docs/results"]
        .into_iter()
        .filter_map(|dir| fs::read_dir(root().join(dir)).ok())
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(root()).unwrap().to_path_buf())
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The lines of a Markdown text outside fenced code blocks, with their line numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// The anchors GitHub gives a page's headings: lower case, punctuation other than `-` and `_`
/// dropped, spaces as `-`, and `-1`, `-2` … after a heading's repeats.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug: String = line[hashes..]
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of a line's inline links `[text](target)`.
fn link_targets(line: &str) -> Vec<&str> {
    line.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &line[at + 2..];
            rest.find(')').map(|end| rest[..end].trim())
        })
        .collect()
}

/// What is wrong with one relative link of `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
    let path = if file.is_empty() {
        root().join(page)
    } else {
        root().join(page.parent().unwrap()).join(file)
    };
    if !path.exists() {
        return Some(format!("no file {}", path.display()));
    }
    if anchor.is_empty() || path.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let known = anchors(&fs::read_to_string(&path).unwrap());
    (!known.contains(anchor)).then(|| format!("no heading #{anchor} in {}", path.display()))
}

/// The broken relative links of the README and docs/, one line each.
fn broken_links() -> Vec<String> {
    let mut out = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(root().join(&page)).unwrap();
        for (n, line) in prose_lines(&text) {
            for target in link_targets(line) {
                let external = target.contains("://") || target.starts_with("mailto:");
                if external || target.starts_with('<') {
                    continue;
                }
                if let Some(why) = broken(&page, target) {
                    out.push(format!("{}:{n}: ({target}) {why}", page.display()));
                }
            }
        }
    }
    out
}

/// A reader who follows a link lands on the file and the heading it names.
#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let broken = broken_links();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The anchor rules are GitHub's: punctuation dropped, spaces as hyphens, repeats numbered.
#[test]
fn anchors_follow_githubs_rules() {
    let text = "# A, b: `c` d\n```\n# not a heading\n```\n## Twice\n## Twice\n";
    let got: Vec<String> = anchors(text).into_iter().collect();
    assert_eq!(got, ["a-b-c-d", "twice", "twice-1"]);
}

/// The text of the repository's code that docs/kernels.md may cite: Rust outside comment lines
/// (src/ and benches/, whose environment variables the page names too) and the benchmark
/// scripts of bench/ (likwid-bench's kernel names the design compares against).
fn kernel_code() -> String {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for dir in ["src", "benches", "bench"] {
        walk(&root().join(dir), &mut files);
    }
    let mut code = String::new();
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        let rust = file.extension().is_some_and(|e| e == "rs");
        for line in text.lines() {
            if !(rust && line.trim_start().starts_with("//")) {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    code
}

/// The Rust path a backticked span of prose names, with its suffix (`!` for a macro, `(` for a
/// call), where it looks like one: a path (`Op::ALL`), a macro (`declare_ops!`), a call
/// (`Kernel::loops(op)`), a type (`Variant`) or a snake or upper case name with an underscore
/// (`default_for`, `READ_LANES`). Plain words (`read`, `avx2`) are names of ops and loops.
fn rust_name(span: &str) -> Option<(&str, &str)> {
    let end = span.find(['!', '(']).unwrap_or(span.len());
    let (path, suffix) = span.split_at(end);
    let valid = |seg: &str| {
        seg.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let suffix_ok =
        suffix.is_empty() || suffix == "!" || (suffix.starts_with('(') && suffix.ends_with(')'));
    if !suffix_ok || !path.split("::").all(valid) {
        return None;
    }
    let mut chars = path.chars();
    let type_like = chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rusty = path.contains("::") || !suffix.is_empty() || type_like || path.contains('_');
    rusty.then_some((path, suffix))
}

/// The names docs/kernels.md cites in backticks that the code does not have: each segment of a
/// path must be a word of the code, and a macro must be defined or called there.
fn stale_kernel_names(page: &str, code: &str) -> Vec<String> {
    // std's, cited as what the loops do not use.
    const NOT_OURS: [&str; 1] = ["_mm256_stream_pd"];
    let words: BTreeSet<&str> = code
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let mut stale = Vec::new();
    for (n, line) in prose_lines(page) {
        for span in line.split('`').skip(1).step_by(2) {
            let Some((path, suffix)) = rust_name(span) else {
                continue;
            };
            let known = if suffix == "!" {
                code.contains(&format!("macro_rules! {path}"))
                    || code.contains(&format!("{path}!("))
            } else {
                path.split("::").all(|seg| words.contains(seg))
            };
            if !known && !NOT_OURS.contains(&path) {
                stale.push(format!("docs/kernels.md:{n}: `{span}`"));
            }
        }
    }
    stale
}

/// The design of the kernels names what the code has: a renamed type, function, macro or
/// constant leaves its old name in docs/kernels.md, and this finds it.
#[test]
fn the_kernels_design_cites_only_names_the_code_has() {
    let page = fs::read_to_string(root().join("docs/kernels.md")).unwrap();
    let code = kernel_code();
    let stale = stale_kernel_names(&page, &code);
    assert!(
        stale.is_empty(),
        "names the code does not have:\n{}",
        stale.join("\n")
    );
    let cited = prose_lines(&page)
        .into_iter()
        .flat_map(|(_, line)| {
            line.split('`')
                .skip(1)
                .step_by(2)
                .filter_map(rust_name)
                .collect::<Vec<_>>()
        })
        .count();
    assert!(
        cited > 40,
        "the check found only {cited} names to check in docs/kernels.md"
    );
}

/// The check catches a rename: a page citing a name the code has and one it lost.
#[test]
fn a_renamed_kernel_name_is_caught() {
    let code = "macro_rules! declare_ops {}\npub fn default_loop() {}\n// fn old_loop() {}\n";
    let page = "`declare_ops!`, `Kernel::default_loop`, `old_loop`, `read`, `gone!`\n";
    let code = code
        .lines()
        .filter(|l| !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    // `Kernel` is not in this code either: the path's every segment must be.
    assert_eq!(
        stale_kernel_names(page, &code),
        [
            "docs/kernels.md:1: `Kernel::default_loop`",
            "docs/kernels.md:1: `old_loop`",
            "docs/kernels.md:1: `gone!`"
        ]
    );
}

fn help_text(argv: &[&str]) -> String {
    match Config::parse_from(argv) {
        Ok(Parsed::Print(text)) => text,
        other => panic!("{argv:?} printed no help: {other:?}"),
    }
}

/// The long flags (`--name`) of a help text's option lines, and its subcommands.
fn flags_and_commands(help: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut flags = BTreeSet::new();
    let mut commands = BTreeSet::new();
    let mut in_commands = false;
    for line in help.lines() {
        if !line.starts_with(' ') {
            in_commands = line.starts_with("Commands:");
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if in_commands && !first.is_empty() && first != "help" {
            commands.insert(first.to_string());
        }
        let names = line.trim_start();
        if names.starts_with('-') {
            let long = names
                .split([' ', ',', '=', '['])
                .find(|w| w.starts_with("--") && w.len() > 2);
            flags.extend(long.map(str::to_string));
        }
    }
    (flags, commands)
}

/// What `stream-top --help` and each subcommand's `--help` list but docs/reference.md lacks.
fn undocumented() -> Vec<String> {
    let reference = fs::read_to_string(root().join("docs/reference.md")).unwrap();
    let (mut flags, commands) = flags_and_commands(&help_text(&["stream-top", "--help"]));
    for command in &commands {
        flags.extend(flags_and_commands(&help_text(&["stream-top", command, "--help"])).0);
    }
    let flags = flags.into_iter().filter(|f| {
        let mentioned = |end: char| reference.contains(&format!("`{f}{end}"));
        ![' ', '`', ',', '='].into_iter().any(mentioned)
    });
    let commands = commands
        .iter()
        .filter(|c| !reference.contains(&format!("`stream-top {c}")))
        .map(|c| format!("subcommand {c}"));
    flags.chain(commands).collect()
}

/// Every flag and subcommand a person can find in `--help` is explained in the reference.
#[test]
fn every_flag_and_subcommand_of_help_is_in_the_reference() {
    let missing = undocumented();
    assert!(
        missing.is_empty(),
        "in --help but not in docs/reference.md: {missing:?}"
    );
}

/// A line split as a shell splits it: words at spaces, quotes kept together, `#` a comment;
/// `None` when a pipe or a redirection follows the command (the words before it are kept).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, ' ' | '\t') => words.extend(word.take()),
            (None, '#') if word.is_none() => break,
            (None, '|' | '>' | '<' | ';' | '&') => break,
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    words
}

/// The `stream-top …` command lines of the README's shell code blocks.
fn readme_commands() -> Vec<Vec<String>> {
    let text = fs::read_to_string(root().join("README.md")).unwrap();
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if fenced && line.trim_start().starts_with("stream-top") {
            out.push(shell_words(line.trim()));
        }
    }
    out
}

/// A newcomer copies the README's commands: each one must be a command stream-top accepts.
#[test]
fn the_readmes_command_lines_parse() {
    let commands = readme_commands();
    assert!(commands.len() >= 10, "{commands:?}");
    for argv in commands {
        if let Err(e) = Config::parse_from(&argv) {
            panic!("README: `{}` is refused: {e}", argv.join(" "));
        }
    }
}

/// The README's test command is the one CI runs, word for word (the test hooks need its
/// `--features test-hooks`: a plain `cargo test` leaves their tests out).
#[test]
fn the_readmes_test_command_is_the_one_ci_runs() {
    let text = fs::read_to_string(root().join("README.md")).unwrap();
    let readme: Vec<Vec<String>> = text
        .lines()
        .filter(|l| l.starts_with("cargo test"))
        .map(shell_words)
        .collect();
    assert_eq!(readme.len(), 1, "{readme:?}");
    assert!(readme[0].contains(&"--features".to_string()), "{readme:?}");
    let ci = fs::read_to_string(root().join(".ci/run")).unwrap();
    let command = readme[0].join(" ");
    assert!(
        ci.lines()
            .any(|l| l.starts_with("step ") && l.ends_with(&format!("\" {command}"))),
        "CI does not run the README's `{command}`"
    );
}

/// Where the README's `stream-top …` lines write, from the repository's root: a new file in
/// each `--export DIR`, each `--prom-file`, `--record` and `--readme` FILE and `> FILE`
/// redirection; and what they write without naming it: the live monitor's `e` (into
/// `results/`) and docs/ci-recipe.sh, which the README sends a reader to (into `gate/`).
fn readme_writes() -> Vec<String> {
    let text = fs::read_to_string(root().join("README.md")).unwrap();
    let mut fenced = false;
    let mut out = vec![
        "results/stream-top-x.json".to_string(),
        "gate/before/x.json".to_string(),
    ];
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced || !line.trim_start().starts_with("stream-top") {
            continue;
        }
        let words = shell_words(line.trim());
        for pair in words.windows(2) {
            match pair[0].as_str() {
                "--export" => out.push(format!(
                    "{}/stream-top-x.json",
                    pair[1].trim_end_matches('/')
                )),
                "--prom-file" | "--record" | "--readme" => out.push(pair[1].clone()),
                _ => {}
            }
        }
        let code = line.split(" #").next().unwrap_or(line);
        if let Some((_, target)) = code.split_once('>') {
            out.push(target.split_whitespace().next().unwrap_or("").to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A newcomer runs the README's commands in a fresh clone: `git status --porcelain` must stay
/// empty. So every path they write is one git ignores, and no committed file sits in a
/// directory they write into (it would be mixed with the person's own snapshots).
#[test]
fn the_readmes_commands_leave_a_clone_clean() {
    let writes = readme_writes();
    for expected in ["a.json", "results/stream-top-x.json", "stream-top.prom"] {
        assert!(writes.iter().any(|w| w == expected), "{writes:?}");
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(root())
            .output()
    };
    match git(&["rev-parse", "--show-toplevel"]) {
        Ok(o) if o.status.success() => {}
        _ => {
            eprintln!("skipped: not a git checkout (or no git)");
            return;
        }
    }
    for path in &writes {
        assert!(!path.starts_with('/') && !path.starts_with('~'), "{path}");
        let ignored = git(&["check-ignore", "-q", path]).unwrap();
        assert!(
            ignored.status.success(),
            "the README writes {path}, which .gitignore does not cover"
        );
        let dir = Path::new(path)
            .parent()
            .filter(|d| !d.as_os_str().is_empty());
        let tracked = git(&[
            "ls-files",
            "--",
            dir.map_or(path.as_str(), |d| d.to_str().unwrap()),
        ])
        .unwrap();
        let tracked = String::from_utf8_lossy(&tracked.stdout);
        assert!(
            tracked.trim().is_empty(),
            "the README writes {path} beside committed files:\n{tracked}"
        );
    }
}

/// Where the docs quote the systemd unit's `SuccessExitStatus=`, they quote the unit's line.
#[test]
fn the_docs_quote_the_units_success_exit_statuses() {
    let unit = fs::read_to_string(root().join("deploy/stream-top.service")).unwrap();
    let line = unit
        .lines()
        .find(|l| l.starts_with("SuccessExitStatus="))
        .expect("the unit lists SuccessExitStatus=");
    let mut quoted = 0;
    for page in pages() {
        let text = fs::read_to_string(root().join(&page)).unwrap();
        for (at, _) in text.match_indices("`SuccessExitStatus=") {
            let inner = text[at + 1..].split('`').next().unwrap();
            assert_eq!(inner, line, "{}", page.display());
            quoted += 1;
        }
    }
    assert!(
        quoted >= 2,
        "the docs quote it in the guide and in operations.md"
    );
}

/// The splitter keeps quoted words together and stops at comments, pipes and redirections.
#[test]
fn shell_words_split_as_a_shell_does() {
    let words = shell_words("stream-top --kernel 'avx2 xmm fma' --format json > a.json # x");
    assert_eq!(
        words,
        ["stream-top", "--kernel", "avx2 xmm fma", "--format", "json"]
    );
    assert_eq!(shell_words("stream-top -h | less"), ["stream-top", "-h"]);
}

const SCREEN: &str = "assets/screen.svg";
const CELL_W: f64 = 8.4;
const CELL_H: f64 = 17.0;

/// The host panel of the picture: a quiet desktop.
fn host() -> HostSample {
    HostSample {
        load: [0.61, 0.48, 0.35],
        mem_total: 32 << 30,
        mem_available: 25 << 30,
        swap_total: 4 << 30,
        swap_in_per_s: Some(0.0),
        swap_out_per_s: Some(0.0),
        cpu_some_avg10: Some(0.8),
        mem_some_avg10: Some(0.0),
        steal_pct: Some(0.0),
        others_cpu_pct: Some(9.5),
        top_others: vec![ProcessCpu {
            pid: 4242,
            comm: "firefox".into(),
            cpu_pct: 6.3,
        }],
        ..Default::default()
    }
}

/// The live monitor as the tests draw it: the fixture's grid with figures, the host, a cell
/// being measured.
fn screen() -> Buffer {
    let mut app = app_with_figures();
    app.on_host(host());
    app.on_event(&Event::Visit {
        cell: CellId::new(1, 2),
        passes: 1,
    });
    let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
    t.draw(|f| ui::draw(f, &app, &mut ViewState::default()))
        .unwrap();
    t.backend().buffer().clone()
}

/// A terminal colour as the dark theme of a common terminal shows it.
fn rgb(color: Color, default: &'static str) -> String {
    let named = match color {
        Color::Reset => default,
        Color::Black => "#1e1e1e",
        Color::Red => "#cd3131",
        Color::Green => "#0dbc79",
        Color::Yellow => "#e5e510",
        Color::Blue => "#2472c8",
        Color::Magenta => "#bc3fbc",
        Color::Cyan => "#11a8cd",
        Color::Gray => "#b0b0b0",
        Color::DarkGray => "#666666",
        Color::LightRed => "#f14c4c",
        Color::LightGreen => "#23d18b",
        Color::LightYellow => "#f5f543",
        Color::LightBlue => "#3b8eea",
        Color::LightMagenta => "#d670d6",
        Color::LightCyan => "#29b8db",
        Color::White => "#e5e5e5",
        Color::Rgb(r, g, b) => return format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(i) => return format!("#{i:02x}{i:02x}{i:02x}"),
    };
    named.to_string()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One row of the screen: its backgrounds as rectangles, its text as runs of one style.
fn svg_row(out: &mut String, buf: &Buffer, y: u16) {
    let area = buf.area;
    let top = f64::from(y) * CELL_H;
    let mut x = 0;
    while x < area.width {
        let cell = &buf[(x, y)];
        let reversed = cell.modifier.contains(Modifier::REVERSED);
        let (fg, bg) = (cell.fg, cell.bg);
        let same =
            |c: &ratatui::buffer::Cell| c.fg == fg && c.bg == bg && c.modifier == cell.modifier;
        let end = (x..area.width)
            .find(|&e| !same(&buf[(e, y)]))
            .unwrap_or(area.width);
        let (mut fill, mut ink) = (rgb(bg, "#101418"), rgb(fg, "#d4d4d4"));
        if reversed {
            std::mem::swap(&mut fill, &mut ink);
        }
        let (left, width) = (f64::from(x) * CELL_W, f64::from(end - x) * CELL_W);
        if fill != "#101418" {
            let _ = writeln!(
                out,
                r#"<rect x="{left:.1}" y="{top:.1}" width="{width:.1}" height="{CELL_H:.1}" fill="{fill}"/>"#
            );
        }
        let text: String = (x..end).map(|c| buf[(c, y)].symbol()).collect();
        let text = text.trim_end();
        let width = text.chars().count() as f64 * CELL_W;
        if !text.is_empty() {
            let bold = if cell.modifier.contains(Modifier::BOLD) {
                r#" font-weight="bold""#
            } else {
                ""
            };
            let _ = writeln!(
                out,
                r#"<text x="{left:.1}" y="{:.1}" fill="{ink}"{bold} textLength="{width:.1}">{}</text>"#,
                top + CELL_H * 0.78,
                escape(text)
            );
        }
        x = end;
    }
}

/// The screen as an SVG: monospace text on a dark ground, each cell's colours.
fn svg(buf: &Buffer) -> String {
    let (w, h) = (
        f64::from(buf.area.width) * CELL_W,
        f64::from(buf.area.height) * CELL_H,
    );
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
         viewBox=\"0 0 {w:.1} {h:.1}\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" \
         font-size=\"14\" xml:space=\"preserve\">\n<rect width=\"100%\" height=\"100%\" fill=\"#101418\"/>\n"
    );
    for y in 0..buf.area.height {
        svg_row(&mut out, buf, y);
    }
    out.push_str("</svg>\n");
    out
}

/// The README shows the real screen: when the layout changes, the picture is drawn again by
/// `UPDATE_SCREEN=1 cargo test --test integration docs::`.
#[test]
fn the_readmes_picture_is_the_screen_drawn_today() {
    let fresh = svg(&screen());
    let path = root().join(SCREEN);
    if std::env::var_os("UPDATE_SCREEN").is_some() {
        fs::write(&path, &fresh).unwrap();
    }
    let kept = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        kept == fresh,
        "{SCREEN} is not the screen drawn today; rewrite it with \
         `UPDATE_SCREEN=1 cargo test --test integration docs::` and look at it"
    );
}
