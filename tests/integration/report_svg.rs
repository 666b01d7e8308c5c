//! The SVG chart, read back as XML: the title says host, CPU, kernel, stores and when; the GB/s
//! axis is log-scaled; the thread axis holds the measured counts only, evenly spaced; each level
//! has its colour in every chart whatever the sets' order; the vendor figure is dashed; a size
//! sweep is drawn against size on a log axis.

use crate::support::report_fixtures::*;
use roxmltree::{Document, Node};
use stream_top::engine::plan::{CellId, Grid, MemoryBudget, SetSpec, size_sets};
use stream_top::judge::stats::Board;
use stream_top::show::report::model::{Level, Stores};
use stream_top::show::report::svg::{palette, size_chart};
use stream_top::show::report::sweep::{SizeKind, size_sweep};
use stream_top::show::report::{Snapshot, to_svg};

/// A text element: where it is anchored, how, and what it says.
#[derive(Debug)]
struct Label {
    x: f64,
    y: f64,
    anchor: String,
    text: String,
}

fn num(n: Node, attr: &str) -> f64 {
    n.attribute(attr).unwrap().parse().unwrap()
}

fn labels(doc: &Document) -> Vec<Label> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| Label {
            x: num(n, "x"),
            y: num(n, "y"),
            anchor: n.attribute("text-anchor").unwrap_or("start").into(),
            text: n.text().unwrap_or("").trim().to_string(),
        })
        .collect()
}

/// Every polyline: its stroke colour and points.
fn polylines(doc: &Document) -> Vec<(String, Vec<(f64, f64)>)> {
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| {
            let points = n
                .attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            (n.attribute("stroke").unwrap().to_string(), points)
        })
        .collect()
}

fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The axis's tick labels: right-anchored numbers (GB/s), or the labels under the plot.
fn y_ticks(doc: &Document) -> Vec<(f64, f64)> {
    labels(doc)
        .into_iter()
        .filter(|l| l.anchor == "end")
        .filter_map(|l| Some((l.text.parse::<f64>().ok()?, l.y)))
        .collect()
}

fn x_ticks(doc: &Document) -> Vec<(String, f64)> {
    let floor = y_ticks(doc).iter().map(|t| t.1).fold(0.0, f64::max);
    let mut ticks: Vec<(String, f64)> = labels(doc)
        .into_iter()
        .filter(|l| l.anchor == "middle" && l.y > floor && l.y < floor + 30.0)
        .map(|l| (l.text, l.x))
        .collect();
    ticks.sort_by(|a, b| a.1.total_cmp(&b.1));
    ticks
}

/// Pixel positions that are a linear function of ln(value), to a pixel and a half.
fn assert_log_scaled(ticks: &[(f64, f64)]) {
    assert!(ticks.len() >= 3, "{ticks:?}");
    let (v0, p0) = ticks[0];
    let (v1, p1) = ticks[ticks.len() - 1];
    let per_ln = (p1 - p0) / (v1.ln() - v0.ln());
    for &(v, p) in ticks {
        let want = p0 + per_ln * (v.ln() - v0.ln());
        assert!(
            (p - want).abs() <= 1.5,
            "{v} at {p}, a log axis puts it at {want}: {ticks:?}"
        );
    }
}

fn parse(svg: &str) -> Document<'_> {
    Document::parse(svg).expect("the chart is well-formed XML")
}

#[test]
fn the_title_names_host_cpu_kernel_stores_and_date() {
    let mut snap = snapshot_a();
    snap.info.kernel.stores = Stores::Nt;
    snap.info.name = Some("after".into());
    let svg = to_svg(&snap);
    let doc = parse(&svg);
    let texts = labels(&doc);
    assert_eq!(
        texts[0].text,
        "stream-top on bench-a — AMD EPYC 7763 64-Core Processor"
    );
    assert_eq!(
        texts[1].text,
        "avx2 triad, non-temporal stores · pin spread · 2026-01-02 03:04:05 UTC · run after"
    );
    // A normal-store chart is told apart by its title.
    let normal = to_svg(&snapshot_a());
    assert!(
        labels(&parse(&normal))[1]
            .text
            .starts_with("avx2 triad, normal stores")
    );
}

#[test]
fn the_gbs_axis_is_log_scaled_and_the_points_sit_on_it() {
    let snap = snapshot_a();
    let svg = to_svg(&snap);
    let doc = parse(&svg);
    let ticks = y_ticks(&doc);
    assert_log_scaled(&ticks);
    // It spans the figures: from below dram × 1 (12 GB/s) to above l2 × 4 (110 GB/s).
    let values: Vec<f64> = ticks.iter().map(|t| t.0).collect();
    assert!(
        values[0] <= 12.0 && *values.last().unwrap() >= 110.0,
        "{values:?}"
    );
    // Every point's height is its median on that log scale.
    let (v0, p0) = ticks[0];
    let (v1, p1) = ticks[ticks.len() - 1];
    let at = |v: f64| p0 + (p1 - p0) * (v.ln() - v0.ln()) / (v1.ln() - v0.ln());
    let circles: Vec<(f64, f64)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .map(|n| (num(n, "cx"), num(n, "cy")))
        .collect();
    for c in snap.cells.iter().filter(|c| !c.rerun) {
        let y = at(c.figures.median_gbs);
        assert!(
            circles.iter().any(|p| (p.1 - y).abs() <= 1.5),
            "no point at {y} for {} × {}",
            c.label,
            c.threads
        );
    }
}

#[test]
fn the_thread_axis_holds_the_measured_counts_evenly_spaced() {
    let doc_text = to_svg(&snapshot_a());
    let doc = parse(&doc_text);
    let ticks = x_ticks(&doc);
    let names: Vec<&str> = ticks.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(names, ["1", "2", "4"]);
    let gaps: Vec<f64> = ticks.windows(2).map(|w| w[1].1 - w[0].1).collect();
    assert!((gaps[0] - gaps[1]).abs() <= 1.0, "{gaps:?}");
}

/// snapshot_a with its two sets in the other order.
fn snapshot_a_reordered() -> Snapshot {
    let grid = Grid {
        sets: vec![dram(), l2()],
        threads: vec![1, 2, 4],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(5);
    for (set, threads, rate) in [(1, 1, 30.0), (1, 2, 58.0), (0, 1, 12.0), (0, 2, 19.0)] {
        let cell = CellId::new(set, threads);
        feed(&mut board, cell, &[rate], None);
    }
    Snapshot::build(
        &run_info("h", None),
        &grid,
        &board,
        &host(0.1),
        "2026-01-02 03:04:05".into(),
    )
}

/// The colour of the data line whose points lie lowest (slowest), and of the highest.
fn lowest_and_highest_lines(svg: &str) -> (String, String) {
    let doc = parse(svg);
    let level_colours: Vec<String> = [palette::L1, palette::L2, palette::L3, palette::DRAM]
        .map(hex)
        .to_vec();
    let mut lines: Vec<(String, f64)> = polylines(&doc)
        .into_iter()
        // Data lines: more than one point, left of the legend (which has samples too).
        .filter(|(c, pts)| level_colours.contains(c) && pts.len() > 1)
        .filter(|(_, pts)| pts.iter().all(|p| p.0 < 700.0))
        .map(|(c, pts)| {
            let mean = pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64;
            (c, mean)
        })
        .collect();
    lines.sort_by(|a, b| a.1.total_cmp(&b.1));
    (lines.last().unwrap().0.clone(), lines[0].0.clone())
}

#[test]
fn each_level_keeps_its_colour_whatever_the_order_of_the_sets() {
    for svg in [to_svg(&snapshot_a()), to_svg(&snapshot_a_reordered())] {
        let (lowest, highest) = lowest_and_highest_lines(&svg);
        assert_eq!(lowest, hex(palette::DRAM), "dram is the slow line");
        assert_eq!(highest, hex(palette::L2));
    }
    assert_eq!(palette::of_level(Some(Level::L1)), palette::L1);
    assert_eq!(palette::of_level(None), palette::EXPLICIT);
    // Five distinct colours.
    let all = [
        palette::L1,
        palette::L2,
        palette::L3,
        palette::DRAM,
        palette::EXPLICIT,
    ]
    .map(hex);
    for (i, a) in all.iter().enumerate() {
        assert!(!all[i + 1..].contains(a));
    }
}

#[test]
fn the_vendor_figure_is_dashed_and_absent_when_unknown() {
    let doc_text = to_svg(&snapshot_a());
    let doc = parse(&doc_text);
    let vendor = hex(palette::VENDOR);
    let dashes = polylines(&doc).iter().filter(|(c, _)| *c == vendor).count();
    // A dashed line is many short segments (and one sample in the legend).
    assert!(dashes > 10, "{dashes} vendor segments");
    assert!(
        labels(&doc)
            .iter()
            .any(|l| l.text == "vendor figure 40 GB/s")
    );
    let none_text = to_svg(&snapshot_b());
    let none = parse(&none_text);
    assert!(!polylines(&none).iter().any(|(c, _)| *c == vendor));
    assert!(!labels(&none).iter().any(|l| l.text.contains("vendor")));
}

#[test]
fn the_legend_names_each_set_and_the_rerun() {
    let doc_text = to_svg(&snapshot_a());
    let texts: Vec<String> = labels(&parse(&doc_text))
        .into_iter()
        .map(|l| l.text)
        .collect();
    for want in ["85 KiB/thread (l2)", "128 MiB (dram)", "threads"] {
        assert!(texts.iter().any(|t| t == want), "no {want:?} in {texts:?}");
    }
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("85 KiB/thread (l2), run"))
    );
}

/// Five per-thread sizes (and l2) × 1 and 2 threads.
fn size_sweep_snapshot() -> Snapshot {
    size_sweep_of(&[
        "l2",
        "4KiB/thread",
        "16KiB/thread",
        "64KiB/thread",
        "256KiB/thread",
        "4MiB/thread",
    ])
}

fn size_sweep_of(sets: &[&str]) -> Snapshot {
    let specs: Vec<SetSpec> = sets.iter().map(|s| SetSpec::parse(s).unwrap()).collect();
    let sets = size_sets(&specs, &topology(), &MemoryBudget::new(6 * GIB, None), 2).unwrap();
    let grid = Grid {
        sets,
        threads: vec![1, 2],
        ops: vec![stream_top::engine::kernel::Op::Triad],
    };
    let mut board = Board::new(3);
    for set in 0..grid.sets.len() {
        for threads in [1, 2] {
            let rate = 200.0 / (set + 1) as f64 * threads as f64;
            feed(&mut board, CellId::new(set, threads), &[rate], None);
        }
    }
    Snapshot::build(
        &run_info("h", Some(40.0)),
        &grid,
        &board,
        &host(0.1),
        "2026-01-02 03:04:05".into(),
    )
}

#[test]
fn a_size_sweep_is_drawn_against_size_on_a_log_axis() {
    let snap = size_sweep_snapshot();
    assert_eq!(size_sweep(&snap), Some(SizeKind::PerThread));
    assert_eq!(size_sweep(&snapshot_a()), None);
    let svg = to_svg(&snap);
    assert_eq!(svg, size_chart(&snap, SizeKind::PerThread));
    let doc = parse(&svg);
    assert_log_scaled(&y_ticks(&doc));
    // Size ticks: powers of two in bytes, on a log axis.
    let sizes: Vec<(f64, f64)> = x_ticks(&doc)
        .into_iter()
        .map(|(text, x)| {
            let (n, unit) = text.split_once(' ').unwrap();
            let scale = match unit {
                "KiB" => 1024.0,
                "MiB" => 1024.0 * 1024.0,
                _ => panic!("{text}"),
            };
            (n.parse::<f64>().unwrap() * scale, x)
        })
        .collect();
    assert_log_scaled(&sizes);
    let texts: Vec<String> = labels(&doc).into_iter().map(|l| l.text).collect();
    for want in [
        "1 thread",
        "2 threads",
        "L1d full (32 KiB)",
        "L2 full (512 KiB)",
    ] {
        assert!(texts.iter().any(|t| t == want), "no {want:?} in {texts:?}");
    }
    // One line per thread count, in two colours.
    let first_two = [palette::THREADS[0], palette::THREADS[1]].map(hex);
    let lines = polylines(&doc)
        .into_iter()
        .filter(|(c, pts)| first_two.contains(c) && pts.len() == snap.grid.sets.len())
        .count();
    assert_eq!(lines, 2);
}

#[test]
fn a_cache_edge_near_the_right_is_labelled_left_of_its_line() {
    // The fixture's L3 holds three 10.7 MiB arrays per CPU: near the right of a sweep to
    // 16 MiB/thread, where a label to the right of its line would run into the legend.
    let snap = size_sweep_of(&[
        "4KiB/thread",
        "16KiB/thread",
        "64KiB/thread",
        "256KiB/thread",
        "16MiB/thread",
    ]);
    let svg = to_svg(&snap);
    let doc = parse(&svg);
    // Edges are labelled `L3 full (64 MiB)`, with the thread count where it moves the edge.
    let anchors = |name: &str| {
        let found: Vec<String> = labels(&doc)
            .into_iter()
            .filter(|l| l.text.starts_with(name))
            .map(|l| l.anchor)
            .collect();
        assert!(!found.is_empty(), "no {name:?}");
        found
    };
    assert!(anchors("L3 full").iter().all(|a| a == "end"));
    assert!(anchors("L1d full").iter().all(|a| a == "start"));
}

#[test]
fn noisy_cells_are_counted_under_the_chart() {
    let noisy_line = |snap: &Snapshot| {
        let svg = to_svg(snap);
        labels(&parse(&svg))
            .into_iter()
            .map(|l| l.text)
            .find(|t| t.starts_with("Noisy: "))
    };
    // snapshot_a: l2 and dram × 4 threads on 2 CPUs; dram × 4 late every other round too.
    let quiet = noisy_line(&snapshot_a()).unwrap();
    assert!(quiet.starts_with("Noisy: 2 of 7 cells ("), "{quiet}");
    let noisy = noisy_line(&snapshot_a_noisy_l2()).unwrap();
    assert!(noisy.starts_with("Noisy: 3 of 7 cells ("), "{noisy}");
    assert_eq!(noisy_line(&m4_pro_reference_snapshot()), None);
}

/// A noisy cell's point on the size chart is hollow (an outline), a quiet
/// one filled, and the note under the plot names the noisy points and why; a quiet sweep has
/// no hollow point and no such note.
#[test]
fn noisy_points_of_a_size_sweep_are_hollow_and_said_why() {
    let hollow = |svg: &str| -> Vec<String> {
        parse(svg)
            .descendants()
            .filter(|n| n.has_tag_name("circle") && n.attribute("fill") == Some("none"))
            .map(|n| n.attribute("stroke").unwrap_or_default().to_string())
            .collect()
    };
    let note = |svg: &str| {
        labels(&parse(svg))
            .into_iter()
            .map(|l| l.text)
            .find(|t| t.starts_with("Hollow markers: "))
    };
    let quiet = size_sweep_snapshot();
    let svg = to_svg(&quiet);
    assert!(hollow(&svg).is_empty(), "{svg}");
    assert_eq!(note(&svg), None);
    let filled = parse(&svg)
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();

    let mut noisy = size_sweep_snapshot();
    for c in noisy
        .cells
        .iter_mut()
        .filter(|c| c.threads == 1 && c.set >= 3)
    {
        c.figures.noisy = vec!["cv 26.4 % over 5 %".into()];
    }
    let svg = to_svg(&noisy);
    // Three points of the 1-thread curve (64 KiB, 256 KiB and 4 MiB per thread), in its colour.
    assert_eq!(hollow(&svg), vec![hex(palette::THREADS[0]); 3], "{svg}");
    let circles = parse(&svg)
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(circles, filled, "the same points, three of them hollow");
    let note = note(&svg).expect("a note on the hollow markers");
    assert!(
        note.starts_with(
            "Hollow markers: 3 of 12 points noisy, their medians less sure: 64 KiB/thread × 1 \
             thread (cv 26.4 % over 5 %)"
        ),
        "{note}"
    );
}

#[test]
fn an_empty_table_still_gives_a_chart() {
    let mut snap = snapshot_b();
    snap.cells.clear();
    let svg = to_svg(&snap);
    let doc = parse(&svg);
    assert!(labels(&doc).iter().any(|l| l.text == "threads"));
}

#[test]
fn text_is_escaped() {
    let mut snap = snapshot_b();
    snap.info.hostname = "a<b>&c".into();
    let svg = to_svg(&snap);
    assert!(svg.contains("a&lt;b&gt;&amp;c"));
    assert!(
        labels(&parse(&svg))[0]
            .text
            .starts_with("stream-top on a<b>&c")
    );
}

#[test]
#[ignore = "writes the fixtures' charts to $STREAM_TOP_DUMP for a look"]
fn dump_charts() {
    let dir = std::path::PathBuf::from(std::env::var("STREAM_TOP_DUMP").unwrap());
    std::fs::write(dir.join("a.svg"), to_svg(&snapshot_a())).unwrap();
    std::fs::write(dir.join("b.svg"), to_svg(&snapshot_b())).unwrap();
    std::fs::write(dir.join("m4-pro.svg"), to_svg(&m4_pro_reference_snapshot())).unwrap();
    std::fs::write(dir.join("sizes.svg"), to_svg(&size_sweep_snapshot())).unwrap();
}
