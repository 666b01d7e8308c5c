//! The SVG of several ops: a chart per op, stacked in one document on the same axes, each
//! titled with its op and formula; one op's SVG is the chart it always was.

use crate::support::report_fixtures::*;
use roxmltree::{Document, Node};
use stream_top::show::report::svg::{palette, threads_chart};
use stream_top::show::report::{Snapshot, to_svg};

/// Snapshot A with a copy cell beside each triad cell, at half the triad's medians so the two
/// ops' points lie apart.
fn with_copy(mut s: Snapshot) -> Snapshot {
    let mut copies = s.cells.clone();
    for c in &mut copies {
        c.op = "copy".into();
        c.figures.median_gbs /= 2.0;
    }
    s.cells.extend(copies);
    s.grid.ops = vec!["copy".into(), "triad".into()];
    s
}

/// The texts of a node's `<text>` elements.
fn texts<'a>(n: Node<'a, 'a>) -> Vec<&'a str> {
    n.descendants()
        .filter(|t| t.has_tag_name("text"))
        .filter_map(|t| t.text())
        .collect()
}

/// The points of a node's data lines (stroked in a level's colour, not the grid's), sorted,
/// as text.
fn lines<'a>(n: Node<'a, 'a>) -> Vec<&'a str> {
    let levels =
        [palette::L2, palette::DRAM].map(|c| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2));
    let mut v: Vec<&str> = n
        .descendants()
        .filter(|p| p.has_tag_name("polyline"))
        .filter(|p| {
            p.attribute("stroke")
                .is_some_and(|s| levels.iter().any(|l| l == s))
        })
        .filter_map(|p| p.attribute("points"))
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn svg_of_two_ops_draws_a_chart_per_op() {
    let svg = to_svg(&with_copy(snapshot_a()));
    let doc = Document::parse(&svg).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.attribute("height"), Some("1200"), "two charts high");
    let panels: Vec<Node> = root.children().filter(|n| n.has_tag_name("svg")).collect();
    assert_eq!(panels.len(), 2, "{svg}");
    assert_eq!(panels[0].attribute("y"), Some("0"));
    assert_eq!(panels[1].attribute("y"), Some("600"));

    // In the grid's order, each titled with its op and formula.
    let named = |p: Node, what: &str| texts(p).iter().any(|t| t.contains(what));
    assert!(named(panels[0], "copy (a = b),"), "{:?}", texts(panels[0]));
    assert!(
        named(panels[1], "triad (a = b + s·c),"),
        "{:?}",
        texts(panels[1])
    );
    assert!(
        !named(panels[0], "triad"),
        "the copy chart has copy's cells only"
    );

    // Each panel has as many lines as one op's chart, and the ops' points differ: each is
    // its own op's cells, not the triad's twice.
    let alone = to_svg(&snapshot_a());
    let alone = Document::parse(&alone).unwrap();
    let one_op = lines(alone.root_element());
    assert!(!one_op.is_empty());
    let (copy, triad) = (lines(panels[0]), lines(panels[1]));
    assert_eq!(copy.len(), one_op.len());
    assert_eq!(triad.len(), one_op.len());
    assert_ne!(copy, triad, "copy's points are its own");
}

#[test]
fn svg_of_one_op_is_the_threads_chart() {
    let s = snapshot_a();
    let svg = to_svg(&s);
    assert_eq!(svg, threads_chart(&s));
    let doc = Document::parse(&svg).unwrap();
    assert_eq!(
        doc.root_element()
            .descendants()
            .filter(|n| n.has_tag_name("svg"))
            .count(),
        1,
        "one chart, not nested"
    );
    assert!(svg.contains(" triad, "), "the title names the op as before");
    assert!(!svg.contains("a = b + s·c"), "no formula for one op");
}
