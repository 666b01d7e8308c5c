//! Size sweeps: a range in `--sets` gives a row per size, the Markdown names the cliffs under
//! its table, the JSON carries them and the SVG draws GB/s against size with the cache edges
//! dashed and the cliffs named under the plot. Synthetic curves on the fixture machine (L1d
//! 32 KiB and L2 512 KiB per core, L3 64 MiB shared) fix the wording; a short real sweep of the
//! binary checks the rows, the JSON and the SVG it writes (never its timings).

use crate::support::binary::run_binary as run;
use crate::support::report_fixtures::*;
use roxmltree::Document;
use std::path::Path;
use stream_top::engine::plan::{self, CellId, Grid, MemoryBudget, SetSpec, size_sets};
use stream_top::judge::stats::Board;
use stream_top::show::report::cliffs::cliff_line;
use stream_top::show::report::model::{self as wire, ArraySize};
use stream_top::show::report::sweep::{SizeKind, size_sweep};
use stream_top::show::report::{
    Snapshot, from_json, to_json, to_markdown, to_markdown_compact, to_svg,
};

/// A sweep of `range` at `threads`, each size's cells fed `rate(bytes)` GB/s per thread.
fn sweep(range: &str, threads: &[usize], rate: impl Fn(u64) -> f64) -> Snapshot {
    let specs = [SetSpec::parse(range).unwrap()];
    let sets = size_sets(&specs, &topology(), &MemoryBudget::new(64 * GIB, None), 2).unwrap();
    let grid = Grid {
        sets,
        threads: threads.to_vec(),
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(3);
    for (i, set) in grid.sets.iter().enumerate() {
        let bytes = match set.size {
            plan::ArraySize::PerThread(b) | plan::ArraySize::Split(b) => b,
        };
        for &t in threads {
            let r = rate(bytes) * t as f64;
            feed(&mut board, CellId::new(i, t), &[r, r, r], None);
        }
    }
    Snapshot::build(
        &run_info("h", None),
        &grid,
        &board,
        &host(0.1),
        "2026-01-02 03:04:05".into(),
    )
}

/// 100 GB/s per thread while three arrays fit L2 (512 KiB per core), 50 past it.
fn l2_step(bytes: u64) -> f64 {
    if 3 * bytes <= 512 << 10 { 100.0 } else { 50.0 }
}

#[test]
fn a_per_thread_sweep_names_its_l2_edge_at_each_thread_count() {
    let s = sweep("16KiB/thread..1MiB/thread", &[1, 2], l2_step);
    assert_eq!(size_sweep(&s), Some(SizeKind::PerThread));
    assert_eq!(s.grid.sets.len(), 13);
    assert_eq!(s.cliffs.len(), 2, "{:#?}", s.cliffs);
    let c = &s.cliffs[0];
    assert_eq!(c.threads, 1);
    assert_eq!(c.text, "L2 edge between 128 KiB and 181 KiB per thread");
    assert_eq!(
        (c.below, c.above),
        (ArraySize::PerThread(131072), ArraySize::PerThread(185344))
    );
    let near = |a: f64, b: f64| (a - b).abs() < 1e-6;
    assert!(near(c.before_gbs, 100.0) && near(c.after_gbs, 50.0) && near(c.drop, 0.5));
    assert_eq!(c.threshold, 0.2);
    // Two threads on two cores reach both L2s: the edge per thread is the same.
    assert_eq!((c.cache_level, c.cache_bytes), (Some(2), Some(512 << 10)));
    assert_eq!(c.edge, Some(ArraySize::PerThread((512 << 10) / 3)));
    assert_eq!(s.cliffs[1].cache_bytes, Some(1 << 20));
    assert_eq!(s.cliffs[1].edge, c.edge);
    assert!(!c.at_end);
    assert_eq!(
        cliff_line(c),
        "L2 edge between 128 KiB and 181 KiB per thread, 1 thread: 100.0 → 50.0 GB/s (−50 %); \
         three arrays fill L2 (512 KiB reached) at 170.7 KiB per thread"
    );
}

#[test]
fn a_split_sweep_names_the_l3_edge_and_one_at_its_last_size() {
    // 60 GB/s within L3 (64 MiB: 21.3 MiB per array), 12 past it: the last size alone.
    let s = sweep("1MiB..22MiB", &[1], |b| {
        if 3 * b <= 64 << 20 { 60.0 } else { 12.0 }
    });
    assert_eq!(s.cliffs.len(), 1, "{:#?}", s.cliffs);
    let c = &s.cliffs[0];
    assert_eq!(c.text, "L3 edge between 15.6 MiB and 22 MiB");
    assert_eq!(c.edge, Some(ArraySize::Split((64 << 20) / 3)));
    assert!(c.at_end);
    assert!(cliff_line(c).ends_with("a wider range would confirm it"));
}

#[test]
fn a_level_names_one_cliff_and_another_drop_near_it_says_before_or_past() {
    // L3 (64 MiB: 21.3 MiB per array) empties in two stages: 60 → 30 GB/s at 5.66 → 8 MiB,
    // 30 → 10 at 16 → 22.6 MiB, nearer its edge.
    let s = sweep("1MiB..128MiB", &[1], |b| match b {
        b if b <= 6 << 20 => 60.0,
        b if b <= 16 << 20 => 30.0,
        _ => 10.0,
    });
    let texts: Vec<&str> = s.cliffs.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "a drop between 5.66 MiB and 8 MiB, before the L3 edge",
            "L3 edge between 16 MiB and 22.6 MiB"
        ]
    );
    assert!(s.cliffs.iter().all(|c| c.cache_level == Some(3)));
}

#[test]
fn the_markdown_lists_the_cliffs_under_the_table_and_says_when_there_are_none() {
    let s = sweep("16KiB/thread..1MiB/thread", &[1], l2_step);
    let md = to_markdown(&s);
    assert!(
        md.contains("Working sets: a size sweep of 13 sizes from 16 KiB to 1 MiB per thread"),
        "{md}"
    );
    for label in [
        "16 KiB/thread",
        "22.6 KiB/thread",
        "724 KiB/thread",
        "1 MiB/thread",
    ] {
        assert!(
            md_row(&md, label, 1, false).is_some(),
            "no row {label}: {md}"
        );
    }
    let cliffs = md
        .find("\nCliffs, each a drop of more than 20 %")
        .expect("cliffs");
    assert!(md.find("| per array |").unwrap() < cliffs);
    assert!(md.contains("\n- L2 edge between 128 KiB and 181 KiB per thread, 1 thread: "));
    assert!(to_markdown_compact(&s).contains("\n- L2 edge between 128 KiB"));

    let flat = to_markdown(&sweep("16KiB..1MiB", &[1], |_| 40.0));
    assert!(flat.contains("\nCliffs: none found, no drop of more than 20 %"));
    assert!(!flat.contains("too noisy"));
    // A curve that jumps by half between every two sizes: the threshold it raises is said.
    let jumpy = to_markdown(&sweep("16KiB..1MiB", &[1], |b| {
        if b.trailing_zeros() >= 15 { 60.0 } else { 30.0 }
    }));
    assert!(
        jumpy.contains("The curves' own scatter raised that to 94 % at 1 thread: too noisy"),
        "{jumpy}"
    );
    // Not a sweep: nothing about cliffs.
    assert!(!to_markdown(&snapshot_a()).contains("Cliffs"));
}

#[test]
fn the_json_carries_the_cliffs_and_reads_them_back() {
    let s = sweep("16KiB/thread..1MiB/thread", &[1], l2_step);
    let json = to_json(&s);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let c = &v["cliffs"][0];
    assert_eq!(c["threads"], 1);
    assert_eq!(c["below"]["kind"], "per_thread");
    assert_eq!(c["below"]["bytes"], 131072);
    assert_eq!(c["above"]["bytes"], 185344);
    assert!((c["drop"].as_f64().unwrap() - 0.5).abs() < 1e-6);
    assert_eq!(c["cache_level"], 2);
    assert_eq!(c["at_end"], false);
    assert_eq!(from_json(&json, Path::new("sweep.json")).unwrap(), s);
    // Not a sweep: an empty list, written all the same.
    let a: serde_json::Value = serde_json::from_str(&to_json(&snapshot_a())).unwrap();
    assert_eq!(a["cliffs"], serde_json::json!([]));
}

#[test]
fn the_svg_dashes_the_cache_edges_and_names_the_cliffs_under_the_plot() {
    let s = sweep("16KiB/thread..1MiB/thread", &[1, 2], l2_step);
    let svg = to_svg(&s);
    let doc = Document::parse(&svg).unwrap();
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect();
    for want in [
        "bytes per array per thread (log scale)",
        "L2 full (512 KiB)",
        "1 thread",
        "2 threads",
    ] {
        assert!(texts.iter().any(|t| t == want), "no {want:?} in {texts:?}");
    }
    // At two threads the two L2s are reached: the same edge per thread, drawn once.
    assert_eq!(texts.iter().filter(|t| t.starts_with("L2 full")).count(), 1);
    let named: Vec<&String> = texts.iter().filter(|t| t.starts_with("Cliff: ")).collect();
    assert_eq!(named.len(), 2, "{texts:?}");
    assert!(
        named[0].starts_with("Cliff: L2 edge between 128 KiB and 181 KiB per thread, 1 thread")
    );
}

#[test]
fn an_older_snapshot_without_cliffs_reads_as_none() {
    let s = sweep("16KiB/thread..1MiB/thread", &[1], l2_step);
    let mut v: serde_json::Value = serde_json::from_str(&to_json(&s)).unwrap();
    v.as_object_mut().unwrap().remove("cliffs");
    let back = from_json(&v.to_string(), Path::new("old.json")).unwrap();
    assert!(back.cliffs.is_empty());
    assert_eq!(back.cells, s.cells);
}

/// A real sweep of nine sizes: a row each, the JSON's sets and cliffs, the SVG against size.
#[test]
fn a_small_sweep_of_the_binary_gives_rows_json_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().to_str().unwrap();
    let (code, md, stderr) = run(&[
        "--headless",
        "--sets",
        "16KiB..256KiB",
        "--threads",
        "1",
        "--rounds",
        "3",
        "--round-ms",
        "3",
        "--export",
        export,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let labels = [
        "16 KiB", "22.6 KiB", "32 KiB", "45.2 KiB", "64 KiB", "90.5 KiB", "128 KiB", "181 KiB",
        "256 KiB",
    ];
    for label in labels {
        assert!(
            md.lines().any(|l| l.starts_with(&format!("| {label}"))),
            "no row {label}: {md}"
        );
    }
    assert!(md.contains("\nCliffs"), "{md}");

    let file = |ext: &str| {
        let path = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == ext))
            .unwrap_or_else(|| panic!("no .{ext} in the export"));
        std::fs::read_to_string(path).unwrap()
    };
    let snap = from_json(&file("json"), Path::new("export.json")).unwrap();
    let names: Vec<&str> = snap.grid.sets.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, labels);
    let bytes: Vec<wire::ArraySize> = snap.grid.sets.iter().map(|w| w.size).collect();
    assert_eq!(bytes[1], wire::ArraySize::Split(23168));
    assert_eq!(bytes[8], wire::ArraySize::Split(256 << 10));
    assert!(snap.grid.sets.iter().all(|w| w.level.is_none()));
    assert_eq!(snap.cells.len(), 9);
    // Whatever this machine's cliffs are, each lies between two neighbouring sizes.
    for c in &snap.cliffs {
        let i = bytes
            .iter()
            .position(|b| *b == c.below)
            .expect("a measured size");
        assert_eq!(bytes[i + 1], c.above, "{c:?}");
        assert!(c.drop > c.threshold);
    }

    let svg = file("svg");
    let doc = Document::parse(&svg).unwrap();
    assert!(doc.descendants().any(|n| n.has_tag_name("text")
        && n.text().map(str::trim)
            == Some("bytes per array, split across the threads (log scale)")));
    let nine_points = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .any(|n| {
            n.attribute("points")
                .is_some_and(|p| p.split_whitespace().count() == 9)
        });
    assert!(nine_points, "no line through the nine sizes");
}

/// Bad ranges are one line and exit 2, before anything is measured.
#[test]
fn bad_ranges_are_refused_before_measuring() {
    for (args, says) in [
        (
            &["--headless", "--sets", "1MiB..16KiB"][..],
            "--sets 1MiB..16KiB: '1MiB..16KiB' runs backwards",
        ),
        (
            &["--headless", "--sets", "4KiB/thread..1MiB"][..],
            "--sets 4KiB/thread..1MiB: '4KiB/thread..1MiB' has one end per thread",
        ),
        (
            &["--headless", "--sets", "16KiB..64TiB"][..],
            "--sets 16KiB..64TiB: its largest size, 64 TiB, needs 192 TiB for three arrays",
        ),
        (
            &["--headless", "--sets", "l2", "--points-per-octave", "4"][..],
            "--points-per-octave: only with a range of sizes in --sets",
        ),
    ] {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        let line = stderr.trim_end();
        assert!(!line.contains('\n'), "{args:?}: {stderr}");
        assert!(line.contains(says), "{args:?}: {stderr}");
    }
}

/// A row is labelled against the caches its own threads reach, as the cliff
/// text is. On the fixture machine (L1d 32 KiB per core, 2 cores), three split arrays of
/// 16 KiB (48 KiB) overflow the one L1d a thread reaches but fit the two that two threads
/// reach; the machine-wide label ("within L1d (64 KiB)") was given to both rows before.
#[test]
fn a_row_is_labelled_against_the_cache_its_threads_reach() {
    let s = sweep("8KiB..64KiB", &[1, 2], |_| 100.0);
    let md = to_markdown(&s);
    let label = |threads| {
        md_row(&md, "16 KiB", threads, false)
            .map(|r| r.trim_matches('|').split(" | ").next().unwrap().trim())
            .unwrap_or_else(|| panic!("no row 16 KiB × {threads}: {md}"))
    };
    assert_eq!(label(1), "16 KiB, within L2 (512 KiB reached): l2");
    assert_eq!(label(2), "16 KiB, within L1d (64 KiB reached): l1");
    // The same capacities the cliffs name: 32 KiB reached by one thread, 64 KiB by two.
    let edges = |threads| {
        stream_top::show::report::sweep::cache_edges(
            &s.info.topology,
            SizeKind::Split,
            threads,
            &[],
        )
    };
    assert_eq!(edges(1)[0].capacity, 32 << 10);
    assert_eq!(edges(2)[0].capacity, 64 << 10);
    // Where the sizes are listed once for the machine, every CPU running a thread.
    assert!(md.contains("a row of the table, against the caches its own threads reach"));
}
