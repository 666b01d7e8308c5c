//! The SVG chart: a document with a line and legend entry per working set, the vendor figure's
//! dashed line and label, and a title naming the host and CPU model.

use crate::report_fixtures::*;
use stream_top::report::to_svg;

#[test]
fn draws_sets_vendor_line_and_title() {
    let snap = snapshot_a();
    let svg = to_svg(&snap);
    assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("stream-top on bench-a — AMD EPYC 7763 64-Core Processor"));
    // Legend entries: each set, the rerun marker, the vendor figure.
    for label in [
        ">\n85 KiB/thread (l2)\n<",
        ">\n128 MiB (dram)\n<",
        ">\n85 KiB/thread (l2), run again last\n<",
        ">\nvendor figure 40 GB/s\n<",
        ">\nthreads\n<",
    ] {
        assert!(svg.contains(label), "no {label:?}");
    }
    // The dashed vendor line is drawn as several short segments (a solid one would be one).
    let segments = svg.matches("<polyline").count();
    assert!(segments > 10, "{segments} polylines");
    // One marker per cell that is not the rerun.
    assert_eq!(svg.matches("<circle").count(), 6);
}

#[test]
fn without_a_vendor_figure_there_is_no_vendor_line() {
    let svg = to_svg(&snapshot_b());
    assert!(!svg.contains("vendor figure"));
    assert!(svg.contains(">\n128 MiB (dram)\n<"));
    assert_eq!(svg.matches("<circle").count(), 6);
}

#[test]
fn an_empty_table_still_gives_a_chart() {
    let mut snap = snapshot_b();
    snap.cells.clear();
    let svg = to_svg(&snap);
    assert!(svg.starts_with("<svg") && svg.contains(">\nthreads\n<"));
}

#[test]
fn text_is_escaped() {
    let mut snap = snapshot_b();
    snap.info.hostname = "a<b>&c".into();
    let svg = to_svg(&snap);
    assert!(svg.contains("a&lt;b&gt;&amp;c"));
    assert!(!svg.contains("a<b>"));
}

#[test]
#[ignore = "writes the fixtures' charts to $STREAM_TOP_DUMP for a look"]
fn dump_charts() {
    let dir = std::path::PathBuf::from(std::env::var("STREAM_TOP_DUMP").unwrap());
    std::fs::write(dir.join("a.svg"), to_svg(&snapshot_a())).unwrap();
    std::fs::write(dir.join("b.svg"), to_svg(&snapshot_b())).unwrap();
    std::fs::write(dir.join("seed.svg"), to_svg(&seed_snapshot())).unwrap();
}
