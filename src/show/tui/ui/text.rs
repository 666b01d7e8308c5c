//! Text shapes the panels share: labelled figures packed into lines, wrapped log text, bars,
//! CPU lists.

use super::theme;
use crate::base::units::cpu_ranges;
use ratatui::text::{Line, Span};

/// A labelled figure: `median 10.0 GB/s`.
pub(super) fn fig(label: &str, value: String) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!("{label} "), theme::LABEL),
        Span::styled(value, theme::VALUE),
    ]
}

/// A value that may not be known, `-` when it is not.
pub(super) fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// A share in per cent to a tenth, from a difference of counters that can come out a hair
/// below zero: anything not above zero is `0.0 %` (never `-0.0 %`), a share above zero that
/// rounds to nothing `< 0.1 %`; `-` when it is not known.
pub(super) fn percent(v: Option<f64>) -> String {
    opt(v, |v| {
        if v.is_nan() {
            "-".into()
        } else if v <= 0.0 {
            "0.0 %".into()
        } else if v < 0.05 {
            "< 0.1 %".into()
        } else {
            format!("{v:.1} %")
        }
    })
}

/// Packs labelled figures into lines no wider than `width`, three spaces apart.
pub(super) fn flow(items: Vec<Vec<Span<'static>>>, width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut cur: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for item in items {
        let w: usize = item.iter().map(|s| s.width()).sum();
        if used > 0 && used + 3 + w > width as usize {
            lines.push(Line::from(std::mem::take(&mut cur)));
            used = 0;
        }
        if used > 0 {
            cur.push(Span::raw("   "));
            used += 3;
        }
        used += w;
        cur.extend(item);
    }
    if !cur.is_empty() {
        lines.push(Line::from(cur));
    }
    lines
}

/// Units that stay on the line of the number before them.
const UNITS: &[&str] = &[
    "%", "GB/s", "MB/s", "B", "KiB", "MiB", "GiB", "TiB", "s", "ms", "µs", "ns", "min", "h", "GHz",
    "B/s", "KiB/s", "MiB/s", "GiB/s",
];

/// Whether a word is a unit (trailing punctuation aside): it must not begin a line.
fn is_unit(word: &str) -> bool {
    let bare = word.trim_end_matches([')', ',', ';', ':', '.', ']']);
    UNITS.contains(&bare)
}

/// Whether a word is a number: `59`, `6.77`.
fn is_number(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The words of a text, each unit glued to the number before it (`31 %`, `6.77 GB/s`), and a
/// duration kept whole (`2 min 05 s`).
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split(' ') {
        match out.last_mut() {
            Some(prev)
                if !prev.is_empty()
                    && (is_unit(w)
                        || (is_number(w) && (prev.ends_with(" min") || prev.ends_with(" h")))) =>
            {
                prev.push(' ');
                prev.push_str(w);
            }
            _ => out.push(w.to_string()),
        }
    }
    out
}

/// Splits text into lines of at most `width` characters, at spaces where it can, never
/// between a number and its unit.
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    for mut word in words(text) {
        loop {
            let cur_len = cur.chars().count();
            let word_len = word.chars().count();
            let need = if cur.is_empty() {
                word_len
            } else {
                cur_len + 1 + word_len
            };
            if need <= width {
                if !cur.is_empty() {
                    cur.push(' ');
                }
                cur.push_str(&word);
                break;
            }
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            // A word longer than a line: cut it.
            let head: String = word.chars().take(width).collect();
            word = word.chars().skip(width).collect();
            out.push(head);
            if word.is_empty() {
                break;
            }
        }
    }
    if !cur.is_empty() || out.is_empty() {
        out.push(cur);
    }
    out
}

/// Items joined with `sep` into lines of at most `width`; an item too long for a line wraps
/// between its words.
pub(super) fn pack(items: &[String], sep: &str, width: usize) -> Vec<String> {
    let len = |s: &str| s.chars().count();
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for item in items {
        if !cur.is_empty() && len(&cur) + len(sep) + len(item) <= width {
            cur.push_str(sep);
            cur.push_str(item);
            continue;
        }
        if !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        let mut parts = wrap(item, width);
        cur = parts.pop().unwrap_or_default();
        lines.extend(parts);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// At most `max` characters, the last one `…` when something was cut.
pub(super) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A horizontal bar of `filled` cells (eighths allowed) in `width` cells.
pub(super) fn bar(filled: f64, width: usize) -> String {
    const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let filled = filled.clamp(0.0, width as f64);
    let full = filled.floor() as usize;
    let frac = ((filled - full as f64) * 8.0).floor() as usize;
    let mut s = "█".repeat(full);
    if full < width {
        s.push(EIGHTHS[frac.min(7)]);
        s.push_str(&" ".repeat(width - full - 1));
    }
    s
}

/// CPUs as ranges, `0-3,8`; `-` for none.
pub(super) fn cpu_list(cpus: impl IntoIterator<Item = i32>) -> String {
    let parts = cpu_ranges(cpus);
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_share_is_never_below_zero_and_says_when_it_is_too_small_to_show() {
        assert_eq!(percent(Some(-0.0)), "0.0 %");
        assert_eq!(percent(Some(-0.04)), "0.0 %");
        assert_eq!(percent(Some(0.0)), "0.0 %");
        assert_eq!(percent(Some(0.03)), "< 0.1 %");
        assert_eq!(percent(Some(12.46)), "12.5 %");
        assert_eq!(percent(None), "-");
    }

    use super::*;

    #[test]
    fn wrapping_at_spaces_and_inside_long_words() {
        assert_eq!(wrap("a bb ccc dddd", 6), vec!["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("abcdefgh", 3), vec!["abc", "def", "gh"]);
        assert_eq!(wrap("", 5), vec![""]);
        assert_eq!(wrap("x ×2 y", 10), vec!["x ×2 y"]);
    }

    #[test]
    fn items_pack_into_lines_and_long_ones_wrap_between_words() {
        let items: Vec<String> = ["kernel avx2", "normal stores", "pin spread"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            pack(&items, " · ", 30),
            vec!["kernel avx2 · normal stores", "pin spread"]
        );
        let long = vec!["clock 3.24 GHz (dependent add chain)".to_string()];
        assert_eq!(
            pack(&long, " · ", 20),
            vec!["clock 3.24 GHz", "(dependent add", "chain)"]
        );
    }

    #[test]
    fn a_unit_never_begins_a_line() {
        assert_eq!(
            wrap("drop 24 % below median (4.67 vs 6.77 GB/s); steal", 12),
            vec![
                "drop 24 %",
                "below median",
                "(4.67 vs",
                "6.77 GB/s);",
                "steal"
            ]
        );
        assert_eq!(wrap("% alone", 3), vec!["%", "alo", "ne"]);
        assert_eq!(
            wrap("over after 2 min 05 s (12:00)", 16),
            vec!["over after", "2 min 05 s", "(12:00)"]
        );
    }

    #[test]
    fn bars_and_cpu_lists() {
        assert_eq!(bar(0.0, 4), "    ");
        assert_eq!(bar(4.0, 4), "████");
        assert_eq!(bar(1.5, 4), "█▌  ");
        assert_eq!(bar(9.0, 2), "██");
        assert_eq!(cpu_list([0, 1, 2, 5, 7, 8, -1]), "0-2,5,7-8");
        assert_eq!(cpu_list([]), "-");
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("dram", 4), "dram");
        assert_eq!(truncate("dram!", 4), "dra…");
    }
}
