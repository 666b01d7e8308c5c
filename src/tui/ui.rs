//! Drawing: the layout and one function per panel, all reading `App` and nothing else. The
//! layout is a pure function of the screen size and the app, so a mouse click is mapped to a
//! cell with the same arithmetic that drew it.

use super::app::{App, Mode, gbs};
use super::log::Kind;
use crate::engine::events::Stage;
use crate::engine::plan::CellId;
use crate::machine::cgroup::quota_text;
use crate::stats::Figures;
use crate::units::format_bytes;
use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Gauge, Paragraph, Sparkline, SparklineBar};

pub const MIN_WIDTH: u16 = 80;
/// Rows every layout needs besides one per working set.
const FIXED_ROWS: u16 = 20;
/// Rows the detail row needs before the per-thread bars get a panel beside it.
const MIDDLE_FOR_THREADS: u16 = 10;
/// Width of the grid's row labels.
const LABEL_WIDTH: u16 = 24;

/// Where each panel goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Areas {
    pub header: Rect,
    pub grid: Rect,
    pub detail: Rect,
    pub threads: Rect,
    pub host: Rect,
    pub log: Rect,
    pub footer: Rect,
}

/// The smallest screen the layout fits: 80 columns, and 20 rows plus one per set (at least
/// two): 80×23 for the default l1, l2, dram.
pub fn min_size(app: &App) -> (u16, u16) {
    (MIN_WIDTH, FIXED_ROWS + app.grid.sets.len().max(2) as u16)
}

pub fn too_small(area: Rect, app: &App) -> bool {
    let (w, h) = min_size(app);
    area.width < w || area.height < h
}

pub fn layout(area: Rect, app: &App) -> Areas {
    let grid_h = app.grid.sets.len() as u16 + 4;
    // What is left for the detail and threads row and the host and log row: the first gets
    // room for the per-thread bars before the second grows past its minimum, then the second
    // takes a third of any more.
    let avail = area.height.saturating_sub(4 + grid_h + 1);
    let bottom_h = if avail >= 17 {
        (7 + (avail - 17) / 3).min(16)
    } else {
        avail.saturating_sub(MIDDLE_FOR_THREADS).clamp(5, 7)
    };
    let [header, grid, middle, bottom, footer] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Length(grid_h),
        Constraint::Length(avail.saturating_sub(bottom_h)),
        Constraint::Length(bottom_h),
        Constraint::Length(1),
    ])
    .areas(area);
    // On a short screen the detail takes the whole row, so that every figure stays in view;
    // the per-thread bars come back with a few more rows.
    let detail_share = if middle.height < MIDDLE_FOR_THREADS {
        100
    } else {
        55
    };
    let [detail, threads] = Layout::horizontal([
        Constraint::Percentage(detail_share),
        Constraint::Percentage(100 - detail_share),
    ])
    .areas(middle);
    let [host, log] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(bottom);
    Areas {
        header,
        grid,
        detail,
        threads,
        host,
        log,
        footer,
    }
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if too_small(area, app) {
        draw_too_small(frame, area, app);
        return;
    }
    let a = layout(area, app);
    draw_header(frame, a.header, app);
    draw_grid(frame, a.grid, app);
    draw_detail(frame, a.detail, app);
    if a.threads.width > 0 {
        draw_threads(frame, a.threads, app);
    }
    draw_host(frame, a.host, app);
    draw_log(frame, a.log, app);
    draw_footer(frame, a.footer, app);
    if app.help {
        draw_help(frame, area);
    }
}

fn draw_too_small(frame: &mut Frame, area: Rect, app: &App) {
    let (w, h) = min_size(app);
    let text = vec![
        Line::from("stream-top needs a larger terminal".bold()),
        Line::from(format!(
            "at least {w}×{h}; this one is {}×{}",
            area.width, area.height
        )),
        Line::from("(q quits)".dim()),
    ];
    let y = area.height.saturating_sub(3) / 2;
    let r = Rect::new(area.x, area.y + y, area.width, 3.min(area.height));
    frame.render_widget(
        Paragraph::new(text)
            .alignment(Alignment::Center)
            .wrap(ratatui::widgets::Wrap { trim: true }),
        r,
    );
}

fn draw_header(frame: &mut Frame, area: Rect, app: &App) {
    let h = &app.header;
    let mut first = vec![
        Span::styled("stream-top ", Style::new().bold().fg(Color::Cyan)),
        Span::styled(h.machine.clone(), Style::new().bold()),
    ];
    if app.board.any_checksum_failed() {
        first.push(Span::raw("  "));
        first.push(Span::styled(
            " CHECKSUM FAILED: figures are wrong ",
            Style::new()
                .bold()
                .fg(Color::White)
                .bg(Color::Red)
                .add_modifier(Modifier::SLOW_BLINK),
        ));
    }
    let lines = vec![
        Line::from(first),
        Line::from(h.caches.clone()),
        Line::from(h.run.clone()),
        Line::from(h.vendor.clone()),
    ];
    frame.render_widget(Paragraph::new(lines), area);
}

/// Width of one thread column.
fn col_width(app: &App) -> u16 {
    if app.baseline.is_empty() { 12 } else { 19 }
}

/// How many thread columns fit and the first one shown (the grid scrolls to keep the
/// selection in view).
fn columns(inner: Rect, app: &App) -> (usize, usize) {
    let cw = col_width(app);
    let visible = (inner.width.saturating_sub(LABEL_WIDTH) / cw).max(1) as usize;
    let offset = (app.sel_col + 1).saturating_sub(visible);
    let cols = app.grid.threads.len();
    (visible.min(cols.saturating_sub(offset)), offset)
}

fn grid_block(app: &App) -> Block<'static> {
    let mut title = vec![Span::styled(" median GB/s ", Style::new().bold())];
    title.push(Span::raw(match app.mode {
        Mode::Sweep => "· sweep ".to_string(),
        Mode::Focus(c) => format!("· focus on {} ", app.cell_name(c)),
    }));
    if app.paused {
        title.push(Span::styled(
            "· PAUSED ",
            Style::new().bold().fg(Color::Yellow),
        ));
    }
    title.push(Span::raw(format!("· duty {} % ", app.duty)));
    if let Some(b) = &app.baseline_name {
        title.push(Span::raw(format!("· vs {b} ")));
    }
    Block::new().borders(Borders::ALL).title(Line::from(title))
}

/// The rectangles of the visible cells: (set, column index, rect), for drawing and clicks.
pub fn grid_cells(area: Rect, app: &App) -> Vec<(usize, usize, Rect)> {
    let inner = grid_block(app).inner(area);
    let (visible, offset) = columns(inner, app);
    let cw = col_width(app);
    let mut out = Vec::new();
    for set in 0..app.grid.sets.len() {
        let y = inner.y + 1 + set as u16;
        if y >= inner.bottom() {
            break;
        }
        for i in 0..visible {
            let x = inner.x + LABEL_WIDTH + i as u16 * cw;
            out.push((set, offset + i, Rect::new(x, y, cw, 1)));
        }
    }
    out
}

/// Colour of a figure: by fraction of the vendor figure for DRAM-sized sets, by scaling per
/// thread for per-thread (cache) sets. Greener is closer to what the hardware can give.
pub fn heat(app: &App, cell: CellId, f: &Figures) -> Option<Color> {
    let per_thread = app.grid.sets.get(cell.set)?.is_per_thread();
    let x = if per_thread {
        f.scaling? / cell.threads as f64
    } else {
        f.vendor_fraction?
    };
    let (hi, mid) = if per_thread { (0.9, 0.7) } else { (0.6, 0.3) };
    Some(if x >= hi {
        Color::Green
    } else if x >= mid {
        Color::Yellow
    } else {
        Color::Red
    })
}

fn draw_grid(frame: &mut Frame, area: Rect, app: &App) {
    let block = grid_block(app);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let (visible, offset) = columns(inner, app);
    let cw = col_width(app) as usize;
    // Column heads.
    let mut head = vec![Span::styled(
        format!("{:<w$}", "working set \\ threads", w = LABEL_WIDTH as usize),
        Style::new().dim(),
    )];
    // Heads end where the values end (before the late mark and the baseline change).
    let tail = if app.baseline.is_empty() { 2 } else { 9 };
    for t in app.grid.threads.iter().skip(offset).take(visible) {
        head.push(Span::styled(
            format!("{:>w$}{:tail$}", format!("{t} thr"), "", w = cw - tail),
            Style::new().bold(),
        ));
    }
    if offset + visible < app.grid.threads.len() {
        head.push(Span::styled(" ▸", Style::new().dim()));
    }
    let mut lines = vec![Line::from(head)];
    for (si, set) in app.grid.sets.iter().enumerate() {
        let mut label = set.label();
        if set.note.is_some() {
            label.push('†');
        }
        let mut spans = vec![Span::raw(format!(
            "{:<w$}",
            truncate(&label, LABEL_WIDTH as usize - 1),
            w = LABEL_WIDTH as usize
        ))];
        for ci in offset..offset + visible {
            let t = app.grid.threads[ci];
            spans.extend(cell_spans(app, CellId::new(si, t), (si, ci), cw));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), inner);
    let status = Rect::new(inner.x, inner.bottom() - 1, inner.width, 1);
    draw_status(frame, status, app);
}

fn cell_spans(app: &App, cell: CellId, pos: (usize, usize), width: usize) -> Vec<Span<'static>> {
    let selected = pos == (app.sel_set, app.sel_col);
    let now = app.current == Some(cell) && !app.paused && !app.finished;
    let stats = app.board.cell(cell);
    let failed = stats.is_some_and(|s| s.checksum_failures > 0);
    let figures = app.figures(cell);
    let mark = if now {
        "▶"
    } else if app.mode == Mode::Focus(cell) {
        "◆"
    } else {
        " "
    };
    let mut style = Style::new();
    let mut spans = Vec::new();
    let body_w = width - 1;
    if failed {
        style = style.fg(Color::White).bg(Color::Red).bold();
        spans.push(Span::styled(
            format!("{:>body_w$}", format!("{mark}✗ CHECKSUM ")),
            style,
        ));
    } else {
        let (value, late) = match &figures {
            Some(f) => (gbs(f.median_gbs), f.late_rounds > 0),
            None if now => ("…".to_string(), false),
            None => ("·".to_string(), false),
        };
        if let Some(c) = figures.as_ref().and_then(|f| heat(app, cell, f)) {
            style = style.fg(c);
        }
        if figures.is_none() {
            style = style.dim();
        }
        let delta = if app.baseline.is_empty() {
            String::new()
        } else {
            match app.baseline_change(cell) {
                Some(d) => format!(" {:>+5.1}%", d * 100.0),
                None => "       ".to_string(),
            }
        };
        let pad = body_w.saturating_sub(2 + delta.chars().count() + value.chars().count());
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(mark.to_string(), Style::new().fg(Color::Cyan)));
        spans.push(Span::styled(value, style.bold()));
        spans.push(Span::styled(
            if late { "*" } else { " " },
            Style::new().fg(Color::Yellow).bold(),
        ));
        if !delta.is_empty() {
            let d = app.baseline_change(cell).unwrap_or(0.0);
            let c = if d <= -0.05 {
                Color::Red
            } else if d >= 0.05 {
                Color::Green
            } else {
                Color::Gray
            };
            spans.push(Span::styled(delta, Style::new().fg(c)));
        }
        spans.push(Span::raw(" "));
    }
    if selected {
        for s in &mut spans {
            s.style = s.style.add_modifier(Modifier::REVERSED);
        }
    }
    spans
}

fn draw_status(frame: &mut Frame, area: Rect, app: &App) {
    if let Some(p) = app.progress {
        let what = match p.stage {
            Stage::Allocating => "allocating",
            Stage::FirstTouch => "first touch of",
        };
        let label = format!(
            "{what} arrays for {}: {} of {}",
            app.cell_name(p.cell),
            format_bytes(p.done_bytes),
            format_bytes(p.total_bytes)
        );
        frame.render_widget(
            Gauge::default()
                .ratio(p.ratio())
                .label(label)
                .gauge_style(Style::new().fg(Color::Blue).bg(Color::Black))
                .use_unicode(true),
            area,
        );
        return;
    }
    let line = if app.finished {
        Line::from(Span::styled(
            format!(
                "the engine ended{}",
                app.last_error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ),
            Style::new().fg(Color::Red).bold(),
        ))
    } else if app.paused {
        Line::from(Span::styled(
            "paused: workers parked, CPUs idle (space resumes)",
            Style::new().fg(Color::Yellow),
        ))
    } else if app.pause_requested {
        Line::from("pausing after this round…".dim())
    } else {
        match app.current {
            Some(c) => Line::from(vec![
                Span::styled("▶ ", Style::new().fg(Color::Cyan)),
                Span::raw(format!("measuring {} now", app.cell_name(c))),
                Span::styled(
                    "   * late rounds  † sizing note  colour: vendor fraction (dram) / scaling per thread (cache)",
                    Style::new().dim(),
                ),
            ]),
            None => Line::from("starting…".dim()),
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// Packs labelled figures into lines no wider than `width`.
fn flow(items: Vec<Vec<Span<'static>>>, width: u16) -> Vec<Line<'static>> {
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

fn fig(label: &str, value: String) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!("{label} "), Style::new().dim()),
        Span::styled(value, Style::new().bold()),
    ]
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// CPUs as ranges: `0-3,8`.
pub fn cpu_list(cpus: impl IntoIterator<Item = i32>) -> String {
    let mut v: Vec<i32> = cpus.into_iter().filter(|c| *c >= 0).collect();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", v[i], v[j])
        } else {
            v[i].to_string()
        });
        i = j + 1;
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(",")
    }
}

fn draw_detail(frame: &mut Frame, area: Rect, app: &App) {
    let cell = app.selected();
    let set = app.grid.sets.get(cell.set);
    let mut title = format!(" {} ", app.cell_name(cell));
    if let Some(s) = set {
        title = format!(
            " {} × {} thread{} · {} per array ",
            s.label(),
            cell.threads,
            if cell.threads == 1 { "" } else { "s" },
            format_bytes(s.array_bytes(cell.threads))
        );
    }
    let block = Block::bordered().title(title.bold());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let stats = app.board.cell(cell);
    let Some(f) = app.figures(cell) else {
        let msg = if app.current == Some(cell) {
            "warming up: no timed round yet"
        } else {
            "no timed round yet"
        };
        frame.render_widget(Paragraph::new(msg.dim()), inner);
        return;
    };
    let stats = stats.expect("figures come from a cell");
    let mut items = vec![
        fig("median", format!("{} GB/s", gbs(f.median_gbs))),
        fig("best", gbs(f.best_gbs)),
        fig("cv", format!("{:.1} %", f.cv * 100.0)),
        fig("fastest thread", gbs(f.fastest_thread_gbs)),
        fig("slowest thread", gbs(f.slowest_thread_gbs)),
        fig("late", format!("{} of {}", f.late_rounds, f.rounds)),
        fig("scaling", opt(f.scaling, |s| format!("{s:.2}×"))),
        fig("of vendor", opt(f.vendor_fraction, |v| format!("{v:.3}"))),
        fig("B/cycle", opt(f.bytes_per_cycle, |v| format!("{v:.2}"))),
        fig(
            "rounds",
            format!("{} ({} in all)", f.rounds, stats.total_rounds),
        ),
        fig("CPUs", cpu_list(stats.cpus.iter().copied())),
        fig("migrations", stats.migrations.to_string()),
    ];
    if stats.array_bytes > 0 {
        items.push(fig(
            "huge pages",
            format!(
                "{} of {}",
                format_bytes(stats.huge_bytes),
                format_bytes(stats.array_bytes)
            ),
        ));
    }
    items.push(match f.checksum_ok {
        Some(true) => fig("checksum", "ok".into()),
        Some(false) => vec![Span::styled(
            " CHECKSUM FAILED ",
            Style::new().bold().fg(Color::White).bg(Color::Red),
        )],
        None => fig("checksum", "pending".into()),
    });
    if let Some(a) = app.baseline.get(&cell) {
        let d = app
            .baseline_change(cell)
            .map(|d| format!(" ({:+.1} %)", d * 100.0))
            .unwrap_or_default();
        items.push(fig("baseline", format!("{}{d}", gbs(*a))));
    }
    let mut lines = flow(items, inner.width);
    if let Some(note) = set.and_then(|s| s.note.as_ref()) {
        lines.push(Line::from(Span::styled(
            format!("† {note}"),
            Style::new().fg(Color::Yellow),
        )));
    }
    // The sparkline takes what the figures leave, up to 8 rows (none when nothing is left).
    let spark_h = inner.height.saturating_sub(lines.len() as u16).min(8);
    let [spark, text] =
        Layout::vertical([Constraint::Length(spark_h), Constraint::Min(0)]).areas(inner);
    // The sparkline: newest round at the right; rounds more than 15 % under the median in red.
    let hist: Vec<f64> = stats.history.iter().copied().collect();
    let take = spark.width as usize;
    let bars: Vec<SparklineBar> = hist[hist.len().saturating_sub(take)..]
        .iter()
        .map(|&v| {
            let b = SparklineBar::from((v * 100.0) as u64);
            if v < super::contention::SLOW_FRACTION * f.median_gbs {
                b.style(Some(Style::new().fg(Color::Red)))
            } else {
                b
            }
        })
        .collect();
    frame.render_widget(
        Sparkline::default()
            .data(bars)
            .style(Style::new().fg(Color::Cyan)),
        spark,
    );
    frame.render_widget(Paragraph::new(lines), text);
}

fn draw_threads(frame: &mut Frame, area: Rect, app: &App) {
    let cell = app.selected();
    let last = app.board.cell(cell).and_then(|c| c.last.as_ref());
    let title = match last {
        Some(r) => format!(
            " threads, last round: {:.2} ms{}{} ",
            r.span_ns as f64 / 1e6,
            if r.warmup { ", warm-up" } else { "" },
            if r.late { ", LATE" } else { "" }
        ),
        None => " threads, last round ".into(),
    };
    let block = Block::bordered().title(title.bold());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(r) = last else {
        frame.render_widget(Paragraph::new("no round yet".dim()), inner);
        return;
    };
    let fastest = r.fastest_thread_gbs().max(f64::MIN_POSITIVE);
    let start0 = r.threads.iter().map(|t| t.start_ns).min().unwrap_or(0);
    let rows = inner.height as usize;
    let n = r.threads.len();
    let shown = if n > rows { rows.saturating_sub(1) } else { n };
    // "t12 cpu 12→13 " + bar + " 123.4 +1234µs"
    let fixed = 15 + 16;
    let bar_w = (inner.width as usize).saturating_sub(fixed).max(4);
    let mut lines = Vec::new();
    for (i, t) in r.threads.iter().enumerate().take(shown) {
        let rate = t.gbs();
        let own = t.ns() as f64;
        let offset_ns = t.start_ns.saturating_sub(start0);
        let held = offset_ns as f64 > 0.2 * own;
        let slow = rate < 0.8 * fastest;
        let color = if held {
            Color::Yellow
        } else if slow {
            Color::Red
        } else {
            Color::Green
        };
        let cpu = if t.migrated() {
            format!("{}→{}", t.cpu_start, t.cpu_end)
        } else {
            t.cpu_start.to_string()
        };
        let filled = rate / fastest * bar_w as f64;
        lines.push(Line::from(vec![
            Span::styled(format!("t{i:<3}"), Style::new().dim()),
            Span::raw(format!("cpu {cpu:<6} ")),
            Span::styled(bar(filled, bar_w), Style::new().fg(color)),
            Span::styled(format!(" {:>6}", gbs(rate)), Style::new().bold()),
            Span::styled(
                format!(" +{:.0}µs", offset_ns as f64 / 1e3),
                if held {
                    Style::new().fg(Color::Yellow)
                } else {
                    Style::new().dim()
                },
            ),
        ]));
    }
    if shown < n {
        lines.push(Line::from(
            format!(
                "+{} more; slowest {} GB/s",
                n - shown,
                gbs(r.slowest_thread_gbs())
            )
            .dim(),
        ));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// A horizontal bar of `filled` cells (eighths allowed) in `width` cells.
pub fn bar(filled: f64, width: usize) -> String {
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

fn draw_host(frame: &mut Frame, area: Rect, app: &App) {
    let block = Block::bordered().title(" host ".bold());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(h) = &app.host else {
        frame.render_widget(Paragraph::new("sampling…".dim()), inner);
        return;
    };
    let pct = |v: Option<f64>| opt(v, |v| format!("{v:.1} %"));
    let rate = |v: Option<f64>| opt(v, |v| format!("{v:.0}/s"));
    let mut lines = flow(
        vec![
            fig(
                "load",
                format!("{:.2} {:.2} {:.2}", h.load[0], h.load[1], h.load[2]),
            ),
            fig("steal", pct(h.steal_pct)),
        ],
        inner.width,
    );
    lines.extend(flow(
        vec![fig(
            "MemAvailable",
            format!(
                "{} of {}",
                format_bytes(h.mem_available),
                format_bytes(h.mem_total)
            ),
        )],
        inner.width,
    ));
    lines.extend(flow(
        vec![
            fig(
                "swap",
                format!(
                    "{} of {}",
                    format_bytes(h.swap_used),
                    format_bytes(h.swap_total)
                ),
            ),
            fig("in", rate(h.swap_in_per_s)),
            fig("out", rate(h.swap_out_per_s)),
        ],
        inner.width,
    ));
    lines.extend(flow(
        vec![
            fig("pressure cpu", pct(h.cpu_some_avg10)),
            fig("mem", pct(h.mem_some_avg10)),
        ],
        inner.width,
    ));
    if let Some(q) = h.cpu_quota {
        lines.extend(flow(
            vec![
                fig("quota", quota_text(q)),
                fig(
                    "throttled",
                    opt(h.throttled_ratio, |r| format!("{:.0} %", r * 100.0)),
                ),
            ],
            inner.width,
        ));
    }
    lines.push(Line::from(fig(
        "other processes",
        format!("{} of a CPU", pct(h.others_cpu_pct)),
    )));
    let mut top = vec![Span::styled("top ", Style::new().dim())];
    if h.top_others.is_empty() {
        top.push(Span::styled("-", Style::new().bold()));
    }
    for (i, p) in h.top_others.iter().take(3).enumerate() {
        if i > 0 {
            top.push(Span::raw("  "));
        }
        top.push(Span::styled(
            format!("{} {:.0} %", p.comm, p.cpu_pct),
            Style::new().bold(),
        ));
    }
    lines.push(Line::from(top));
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_log(frame: &mut Frame, area: Rect, app: &App) {
    let block = Block::bordered().title(" events ".bold());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows = inner.height as usize;
    // Newest at the bottom; a long entry wraps under its text, its time alone in the margin.
    const MARGIN: usize = 9;
    let text_w = (inner.width as usize).saturating_sub(MARGIN).max(10);
    let mut lines: Vec<Line> = Vec::new();
    for e in app.log.iter().rev() {
        if lines.len() >= rows {
            break;
        }
        let style = match e.kind {
            Kind::Info => Style::new(),
            Kind::Late => Style::new().fg(Color::Yellow),
            Kind::Contention => Style::new().fg(Color::Magenta).bold(),
            Kind::Checksum => Style::new().fg(Color::White).bg(Color::Red).bold(),
            Kind::Export => Style::new().fg(Color::Green),
            Kind::Error => Style::new().fg(Color::Red).bold(),
        };
        let mut text = e.text.clone();
        if e.count > 1 {
            text.push_str(&format!(" (×{})", e.count));
        }
        let mut entry: Vec<Line> = wrap(&text, text_w)
            .into_iter()
            .enumerate()
            .map(|(i, chunk)| {
                let margin = if i == 0 {
                    format!("{:<MARGIN$}", e.time)
                } else {
                    " ".repeat(MARGIN)
                };
                Line::from(vec![
                    Span::styled(margin, Style::new().dim()),
                    Span::styled(chunk, style),
                ])
            })
            .collect();
        // Keep the newest lines of an entry that does not fit whole.
        let room = rows - lines.len();
        if entry.len() > room {
            entry.drain(..entry.len() - room);
        }
        lines.extend(entry.into_iter().rev());
    }
    lines.reverse();
    if lines.is_empty() {
        lines.push(Line::from("nothing yet".dim()));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Splits text into lines of at most `width` characters, at spaces where it can.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
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

fn draw_footer(frame: &mut Frame, area: Rect, app: &App) {
    let key = |k: &str, what: String| {
        vec![
            Span::styled(format!(" {k} "), Style::new().reversed()),
            Span::raw(format!(" {what} ")),
        ]
    };
    let mut spans = Vec::new();
    spans.extend(key("q", "quit".into()));
    spans.extend(key("?", "help".into()));
    spans.extend(key("hjkl", "move".into()));
    spans.extend(key(
        "⏎",
        match app.mode {
            Mode::Focus(c) if c == app.selected() => "sweep".into(),
            _ => "focus".into(),
        },
    ));
    spans.extend(key(
        "space",
        if app.pause_requested {
            "resume".into()
        } else {
            "pause".into()
        },
    ));
    spans.extend(key("d", format!("duty {} %", app.duty)));
    spans.extend(key("e", "export".into()));
    spans.extend(key("r", "reset".into()));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The keys, in two lines.
pub const HELP_KEYS: [&str; 2] = [
    "←↓↑→/hjkl move (or click)   Enter focus ⇄ sweep   space pause ⇄ resume",
    "d duty 100→50→10 %   e export   r reset   ? help   q, Esc, Ctrl-C quit",
];

/// What every figure means, one line each.
pub const HELP_FIGURES: &[(&str, &str)] = &[
    (
        "median",
        "median GB/s of the last --rounds timed rounds: the figure",
    ),
    ("best", "the fastest round: what STREAM reports"),
    (
        "cv",
        "std deviation / mean of the round rates: how steady it is",
    ),
    (
        "fastest, slowest",
        "medians of each round's quickest and slowest thread",
    ),
    (
        "late",
        "rounds >20 % longer than their slowest thread: held back",
    ),
    (
        "scaling",
        "median / the 1-thread median of the same working set",
    ),
    (
        "of vendor",
        "median / the vendor's peak figure (means most for dram)",
    ),
    (
        "B/cycle",
        "GB/s / clock GHz / threads: bytes per core per cycle",
    ),
    (
        "rounds",
        "timed rounds in the window (all since reset); no warm-up",
    ),
    (
        "CPUs, migrations",
        "CPUs the threads ran on; thread-rounds that changed CPU",
    ),
    (
        "huge pages",
        "bytes of the arrays on transparent huge pages",
    ),
    (
        "checksum",
        "sum of a against its exact integer reference, each visit",
    ),
    (
        "GB/s",
        "24 bytes per element (2 reads, 1 write), 10^9 bytes/s",
    ),
    (
        "colour",
        "dram: vendor fraction; cache: scaling per thread; green high",
    ),
    (
        "marks",
        "▶ measuring  ◆ focused  * late rounds  † sizing note  ✗ bad sum",
    ),
    (
        "contention",
        "3 rounds in a row >15 % under median: logged, with steal",
    ),
    (
        "baseline",
        "change of the median against the --baseline run",
    ),
];

fn draw_help(frame: &mut Frame, area: Rect) {
    let w = area.width.min(84);
    let h = (HELP_FIGURES.len() as u16 + HELP_KEYS.len() as u16 + 3).min(area.height);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let mut lines: Vec<Line> = HELP_KEYS
        .iter()
        .map(|k| Line::from(Span::styled(k.to_string(), Style::new().fg(Color::Cyan))))
        .collect();
    lines.push(Line::from(""));
    lines.extend(HELP_FIGURES.iter().map(|(k, v)| {
        Line::from(vec![
            Span::styled(format!("{k:>16}  "), Style::new().bold()),
            Span::raw(v.to_string()),
        ])
    }));
    frame.render_widget(Clear, r);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" help: any key closes ".bold())),
        r,
    );
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_at_spaces_and_inside_long_words() {
        assert_eq!(wrap("a bb ccc dddd", 6), vec!["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("abcdefgh", 3), vec!["abc", "def", "gh"]);
        assert_eq!(wrap("", 5), vec![""]);
        assert_eq!(wrap("x ×2 y", 10), vec!["x ×2 y"]);
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
}
