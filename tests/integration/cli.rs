//! The binary's command line: errors a person can cause are one line on stderr and exit 2,
//! with nothing allocated; help works; compare refuses files that are not snapshots.

use crate::support::binary::run_binary as stream_top;

fn assert_usage_error(args: &[&str], mentions: &str) {
    let (code, stdout, stderr) = stream_top(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{args:?}: stdout {stdout}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: one line, got {stderr}"
    );
    assert!(
        stderr.contains(mentions),
        "{args:?}: {stderr} should mention {mentions}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_flags_are_one_line_and_exit_2() {
    assert_usage_error(&["--headless", "--threads", "0"], "--threads");
    assert_usage_error(&["--headless", "--threads", "99999"], "--threads");
    assert_usage_error(&["--headless", "--threads", "1000"], "online CPUs");
    assert_usage_error(&["--headless", "--sets", "0MiB"], "--sets");
    assert_usage_error(&["--headless", "--sets", "lots"], "--sets");
    assert_usage_error(&["--headless", "--sets", "100TiB"], "--sets");
    assert_usage_error(&["--headless", "--vendor-gbs", "-3"], "--vendor-gbs");
    assert_usage_error(&["--headless", "--kernel", "mmx"], "--kernel");
    assert_usage_error(&["--headless", "--frobnicate"], "--frobnicate");
    assert_usage_error(&["--headless", "--pin", "sideways"], "--pin");
    assert_usage_error(&["--headless", "--round-ms", "0"], "--round-ms");
}

/// Clap's suggestion stays in the one line; a unit spelled ambiguously in
/// `--sets` is refused with the spellings that work (it was read as MiB without a word).
#[test]
fn a_typo_gets_claps_suggestion_and_an_ambiguous_unit_is_refused() {
    for (args, says) in [
        (
            &["--headless", "--threds", "2"][..],
            "stream-top: unexpected argument '--threds' found; did you mean '--threads'?",
        ),
        (
            &["--headless", "--sets", "64Mib"],
            "stream-top: --sets 64Mib: '64Mib': the unit 'Mib' is ambiguous or unknown; write \
             sizes as K, M, G, KiB, MiB, GiB, TiB (1024s); kB, KB, MB, GB, TB (1000s); B",
        ),
        (
            &["--headless", "--sets", "l2,64mb"],
            "stream-top: --sets l2,64mb: '64mb': the unit 'mb' is ambiguous or unknown; write \
             sizes as K, M, G, KiB, MiB, GiB, TiB (1024s); kB, KB, MB, GB, TB (1000s); B",
        ),
    ] {
        assert_usage_error(args, says);
        let (_, _, stderr) = stream_top(args);
        assert_eq!(stderr.trim_end(), says, "{args:?}");
    }
}

/// `5%` is a percentage wherever one is asked, and means what `5` does.
#[test]
fn a_percent_sign_is_accepted_by_every_percentage_flag() {
    let a = crate::support::report_fixtures::fixture_path("a.json");
    let a = a.to_str().unwrap();
    let plain = stream_top(&["compare", a, a, "--fail-if-slower", "5"]);
    let signed = stream_top(&["compare", a, a, "--fail-if-slower", "5%"]);
    assert_eq!(signed, plain);
    // Past the parse, each flag's own range speaks (nothing is measured).
    assert_usage_error(
        &["--contention-drop", "95%"],
        "--contention-drop 95: must be a percentage from 1 to 90",
    );
    assert_usage_error(
        &["--duty", "0%"],
        "--duty 0: must be a whole percentage from 1 to 100",
    );
    assert_usage_error(&["--duty", "50%%"], "'50%%' is not a percentage");
}

/// Each message quotes what was given and the real range. Before:
/// "--threads -1: '' is not a thread count", "… 4294967296 is not in 0..=4294967295", and
/// `--sets 1B` ran 128-byte arrays labelled "1 B".
#[test]
fn messages_quote_the_value_and_the_real_range() {
    for (args, says) in [
        (
            &["--headless", "--threads=-1"][..],
            "stream-top: --threads takes counts of 1 or more, not -1",
        ),
        (
            &["--headless", "--rounds", "4294967296"],
            "stream-top: --rounds 4294967296: must be from 1 to 100000",
        ),
        (
            &["--headless", "--round-ms", "4294967296"],
            "stream-top: --round-ms 4294967296: must be from 1 to 60000",
        ),
        (
            &["--headless", "--sets", "1B"],
            "stream-top: --sets 1B: '1B' is below 128 B, the least an array can be (one cache \
             line)",
        ),
    ] {
        assert_usage_error(args, says);
        let (_, _, stderr) = stream_top(args);
        assert_eq!(stderr.trim_end(), says, "{args:?}");
    }
}

#[test]
fn a_kernel_the_cpu_lacks_is_refused() {
    // One of these is missing on any CPU: NEON on x86-64, AVX-512/AVX2/SSE2 on aarch64.
    let missing = ["neon", "avx512", "avx2", "sse2"]
        .into_iter()
        .find(|k| {
            !k.parse::<stream_top::engine::kernel::Isa>()
                .unwrap()
                .available()
        })
        .expect("some kernel is missing");
    assert_usage_error(&["--headless", "--kernel", missing], "--kernel");
}

#[test]
fn the_live_monitor_needs_a_terminal() {
    let (code, _, stderr) = stream_top(&["--sets", "16KiB/thread"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--headless"), "{stderr}");
}

#[test]
fn help_lists_the_flags() {
    let (code, stdout, _) = stream_top(&["--help"]);
    assert_eq!(code, 0);
    for flag in [
        "--headless",
        "--threads",
        "--sets",
        "--rounds",
        "--round-ms",
        "--pin",
        "--kernel",
        "--stores",
        "--vendor-gbs",
        "--duty",
        "--format",
        "--export",
        "--readme",
        "--baseline",
        "compare",
    ] {
        assert!(stdout.contains(flag), "help lacks {flag}");
    }
}

#[test]
fn compare_refuses_files_that_are_not_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    let missing = dir.path().join("missing.json");
    let (code, _, stderr) =
        stream_top(&["compare", bad.to_str().unwrap(), missing.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("bad.json") || stderr.contains("missing.json"),
        "{stderr}"
    );
}

#[test]
fn a_baseline_that_is_not_a_snapshot_is_refused_before_the_screen_opens() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("nope.json");
    std::fs::write(&bad, "not json").unwrap();
    let (code, _, stderr) = stream_top(&["--baseline", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--baseline") && stderr.contains("nope.json"),
        "{stderr}"
    );
}

#[test]
fn probe_flags_refused_where_they_would_do_nothing() {
    for (args, says) in [
        (
            &["--probe-only", "--threads", "1"][..],
            "--probe-only: no triad runs, so --threads would do nothing",
        ),
        (
            &["--probe-only", "--sets", "dram"][..],
            "--probe-only: no triad runs, so --sets would do nothing",
        ),
        (
            &["--headless", "--probe-only"][..],
            "--probe-only: only for the live monitor",
        ),
        (
            &["--no-probe"][..],
            "--no-probe: only with --headless --serve",
        ),
        (
            &["--headless", "--probe-cpu", "1"][..],
            "--probe-cpu: only with --probe or --probe-only",
        ),
        (&["--probe", "--probe-only"][..], "cannot be used with"),
    ] {
        assert_usage_error(args, says);
    }
}

#[test]
fn a_probe_cpu_this_process_may_not_use_is_refused_before_anything_runs() {
    let args = [
        "--headless",
        "--sets",
        "l1",
        "--threads",
        "1",
        "--rounds",
        "1",
        "--probe",
        "--probe-cpu",
        "4095",
    ];
    assert_usage_error(&args, "--probe-cpu 4095: not a CPU this process may run on");
    let (_, _, stderr) = stream_top(&args);
    assert!(!stderr.contains("· kernel"), "it ran: {stderr}");
}

/// The flags listed under a help text's options, by their long names.
fn listed_flags(help: &str) -> Vec<String> {
    help.lines()
        .filter_map(|l| l.trim_start().split("--").nth(1))
        .filter_map(|rest| rest.split([' ', '=', '<']).next())
        .map(|f| format!("--{f}"))
        .collect()
}

#[test]
fn each_subcommand_lists_only_its_own_flags() {
    let (code, compare, _) = stream_top(&["compare", "--help"]);
    assert_eq!(code, 0);
    let compare = listed_flags(&compare);
    for own in ["--fail-if-slower", "--allow-single-run"] {
        assert!(
            compare.contains(&own.to_string()),
            "compare --help lacks {own}"
        );
    }
    let (_, calibrate, _) = stream_top(&["calibrate", "--help"]);
    let calibrate = listed_flags(&calibrate);
    for own in [
        "--threads",
        "--sets",
        "--repeat",
        "--span",
        "--kernel",
        "--op",
    ] {
        assert!(
            calibrate.contains(&own.to_string()),
            "calibrate --help lacks {own}"
        );
    }
    let measuring = [
        "--threads",
        "--sets",
        "--kernel",
        "--op",
        "--repeat",
        "--span",
        "--rounds",
    ];
    for stray in measuring {
        assert!(
            !compare.contains(&stray.to_string()),
            "compare --help lists {stray}"
        );
    }
    assert!(!calibrate.contains(&"--fail-if-slower".to_string()));
    let (_, top, _) = stream_top(&["--help"]);
    let top = listed_flags(&top);
    for theirs in ["--span", "--fail-if-slower", "--allow-single-run"] {
        assert!(!top.contains(&theirs.to_string()), "--help lists {theirs}");
    }
}

#[test]
fn a_flag_given_where_it_does_not_belong_names_the_subcommand_it_belongs_to() {
    for (args, says) in [
        (
            &["--headless", "--span", "1m"][..],
            "--span: only with `stream-top calibrate`, not with --headless",
        ),
        (
            &["compare", "a.json", "b.json", "--span", "1m"][..],
            "--span: only with `stream-top calibrate`, not with compare",
        ),
        (
            &["compare", "a.json", "b.json", "--threads", "2"][..],
            "--threads: only when measuring (the live monitor, --headless or calibrate), not \
             with compare",
        ),
        (
            &["calibrate", "--fail-if-slower", "5"][..],
            "--fail-if-slower: only with `stream-top compare A.json B.json`, not with calibrate",
        ),
        (
            &["calibrate", "--membind", "0"][..],
            "give it before the subcommand (stream-top --membind … calibrate)",
        ),
    ] {
        assert_usage_error(args, says);
    }
}

#[test]
fn every_size_flag_reads_sizes_by_the_one_rule_of_sets() {
    let rule = "write sizes as K, M, G, KiB, MiB, GiB, TiB (1024s); kB, KB, MB, GB, TB (1000s); B";
    for args in [
        &["--headless", "--sets", "64mb"][..],
        &["--headless", "--max-memory", "300mb"][..],
        &["--headless", "--max-memory", "300Mib"][..],
        &["--record", "r.rec", "--record-max", "1mb"][..],
    ] {
        assert_usage_error(args, rule);
    }
    assert_usage_error(
        &["--headless", "--max-memory", "0"],
        "--max-memory 0: a memory cap of no bytes holds no array",
    );
}

#[test]
fn a_negative_number_is_refused_with_what_the_flag_takes() {
    for (args, says) in [
        (
            &["--headless", "--threads", "-1"][..],
            "--threads takes counts of 1 or more, not -1",
        ),
        (
            &["--headless", "--rounds", "-1"][..],
            "--rounds takes a count of 1 or more, not -1",
        ),
        (
            &["replay", "r.rec", "--at", "-5m"][..],
            "--at takes a time from the recording's start",
        ),
        (
            &[
                "--headless",
                "--measure",
                "loaded-latency",
                "--delays",
                "-1us",
            ][..],
            "--delays takes delays of 0 or more",
        ),
        (
            &["calibrate", "--span", "-5m"][..],
            "--span takes a time of 0 or more",
        ),
    ] {
        assert_usage_error(args, says);
    }
}

#[test]
fn short_help_is_one_line_a_flag_and_every_help_ends_with_the_manual() {
    let (code, short, _) = stream_top(&["-h"]);
    assert_eq!(code, 0);
    assert!(
        short.lines().count() <= 80,
        "-h is {} lines",
        short.lines().count()
    );
    for heading in [
        "Mode:",
        "Grid:",
        "Kernel and memory:",
        "Live monitor:",
        "Reports and files:",
        "Service and recording:",
        "Latency:",
    ] {
        assert!(
            short.contains(&format!("\n{heading}\n")),
            "-h lacks {heading}"
        );
    }
    let flag_lines: Vec<&str> = short
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .collect();
    assert!(flag_lines.len() > 30, "{short}");
    let (_, long, _) = stream_top(&["--help"]);
    assert!(long.len() > short.len());
    for args in [
        &["-h"][..],
        &["--help"],
        &["compare", "-h"],
        &["calibrate", "--help"],
    ] {
        let (_, text, _) = stream_top(args);
        assert!(
            text.trim_end().ends_with("--help says more than -h.")
                && text.contains("`man stream-top`")
                && text.contains("docs/"),
            "{args:?} does not end with where the manual is"
        );
    }
}

#[test]
fn the_man_page_renders_with_groff_and_has_every_section() {
    let (code, page, stderr) = stream_top(&["--generate", "man"]);
    assert_eq!(code, 0, "{stderr}");
    for section in [
        ".SH NAME",
        ".SH DESCRIPTION",
        ".SH \"MODES AND SUBCOMMANDS\"",
        ".SH GRID",
        ".SH \"KERNEL AND MEMORY\"",
        ".SH \"KEYS OF THE LIVE MONITOR\"",
        ".SH \"EXIT STATUS\"",
        ".SH FILES",
        ".SH ENVIRONMENT",
        ".SH EXAMPLES",
    ] {
        assert!(page.contains(section), "the man page lacks {section}");
    }
    let mut groff = std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-ww"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("groff is installed");
    use std::io::Write;
    groff
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = groff.wait_with_output().unwrap();
    assert!(out.status.success());
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.is_empty(), "groff: {warnings}");
    // compare's own flags, with their long help, are in the page.
    // groff justifies lines: words are compared with the spacing taken out.
    let words = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(words.contains("Welch's test"), "{words}");
}

#[test]
fn bash_completes_the_op_names_after_op() {
    let script = format!(
        "source <({} --generate complete-bash); COMP_WORDS=(stream-top --op ''); \
         COMP_CWORD=2; _stream__top stream-top '' --op; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        crate::support::binary::BIN
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .expect("bash");
    let words = String::from_utf8_lossy(&out.stdout);
    for op in ["triad", "copy", "scale", "add", "mix-3:1", "stream", "all"] {
        assert!(words.lines().any(|w| w == op), "no {op} in {words}");
    }
    for shell in ["complete-zsh", "complete-fish", "complete-powershell"] {
        let (code, text, _) = stream_top(&["--generate", shell]);
        assert_eq!(code, 0);
        assert!(text.contains("stream-top"), "{shell}");
    }
}

#[test]
fn version_says_the_commit_and_the_instruction_sets_of_the_kernels() {
    for flag in ["--version", "-V"] {
        let (code, text, _) = stream_top(&[flag]);
        assert_eq!(code, 0);
        assert!(
            text.starts_with(&format!("stream-top {}", env!("CARGO_PKG_VERSION"))),
            "{text}"
        );
        // Built in a checkout, as the tests are.
        assert!(text.contains("(git "), "{text}");
        let built = text
            .lines()
            .find_map(|l| l.strip_prefix("kernels built for "))
            .expect("the kernels' line");
        assert!(built.contains("portable"), "{built}");
        if cfg!(target_arch = "x86_64") {
            assert!(built.starts_with("x86_64: avx512, avx2, sse2"), "{built}");
        }
        if cfg!(target_arch = "aarch64") {
            assert!(built.starts_with("aarch64: neon"), "{built}");
        }
    }
}

/// The help texts as a person reads them: a flag added, moved to another heading or reworded
/// shows here for review.
#[test]
fn help_texts() {
    for (name, args) in [
        ("short_help", &["-h"][..]),
        ("compare_help", &["compare", "--help"]),
        ("calibrate_help", &["calibrate", "-h"]),
        ("replay_help", &["replay", "-h"]),
        ("fleet_help", &["fleet", "--help"]),
    ] {
        let (code, text, _) = stream_top(args);
        assert_eq!(code, 0, "{args:?}");
        insta::assert_snapshot!(name, text);
    }
}
