//! The live loaded-latency view (`stream-top --measure loaded-latency`): the curve filling in
//! point by point, a table of the points beside a chart of latency against load bandwidth,
//! the knee named as soon as the points show one. The curve is measured on its own thread
//! (`engine::latency::loaded`), which sends each point over a channel; this thread draws and
//! reads keys. `q`, Esc or Ctrl-C quits at once (the measuring thread is told to stop and
//! left to the end of the process); the terminal is restored as the monitor's is
//! (`terminal::Guard`, its panic hook and the signal thread).

use super::event_loop::Ended;
use super::terminal::{self, Guard, Input};
use super::ui::theme;
use crate::base::error::{Error, Result};
use crate::engine::latency::loaded::{
    KNEE_FACTOR, LoadPlan, LoadedCurve, LoadedOptions, LoadedPoint, Progress, find_knee,
    loaded_latency,
};
use crate::platform::Signals;
use crate::platform::signals::Asks;
use crate::show::report::loaded::delay_text;
use crossbeam_channel::{Receiver, select};
use ratatui::Frame;
use ratatui::crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Dataset, GraphType, Paragraph, Row, Table,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the measuring thread sends.
#[derive(Debug)]
pub enum Update {
    Planned(Vec<u64>),
    Idle(LoadedPoint),
    Point(LoadedPoint),
    Done(Finish),
}

/// How the measurement ended: all points measured, or failed with the reason said.
#[derive(Debug, Clone, PartialEq)]
pub enum Finish {
    Measured,
    Failed(String),
}

impl Finish {
    /// The end the measuring thread's result means.
    pub fn of<T>(result: &Result<T>) -> Finish {
        match result {
            Ok(_) => Finish::Measured,
            Err(e) => Finish::Failed(e.to_string()),
        }
    }
}

/// The view's state: what runs, the points so far, whether it has ended.
#[derive(Debug, Clone, Default)]
pub struct LoadedView {
    /// What runs, in one line (the chase, the load, the delays).
    plan_line: String,
    delays: Vec<u64>,
    idle: Option<LoadedPoint>,
    points: Vec<LoadedPoint>,
    /// None while measuring; then how it ended.
    ended: Option<Finish>,
}

impl LoadedView {
    pub fn apply(&mut self, u: Update) {
        match u {
            Update::Planned(d) => self.delays = d,
            Update::Idle(p) => self.idle = Some(p),
            Update::Point(p) => self.points.push(p),
            Update::Done(r) => self.ended = Some(r),
        }
    }

    /// The knee of the points so far.
    fn knee(&self) -> Option<usize> {
        find_knee(self.idle.as_ref()?.latency_ns, &self.points)
    }

    fn status(&self) -> String {
        match (&self.ended, &self.idle) {
            (Some(Finish::Measured), _) => "done · q quits".into(),
            (Some(Finish::Failed(e)), _) => format!("FAILED: {e} · q quits"),
            (None, None) => {
                "building the chain and the load's arrays, then idle latency… · q quits".into()
            }
            (None, Some(_)) => format!(
                "point {} of {} · q quits",
                (self.points.len() + 1).min(self.delays.len().max(1)),
                self.delays.len().max(1)
            ),
        }
    }

    fn knee_text(&self) -> String {
        let Some(idle) = &self.idle else {
            return String::new();
        };
        match self.knee().map(|i| &self.points[i]) {
            Some(k) => format!(
                "knee at {:.1} GB/s of load (delay {}): {:.1} ns, {:.2} × idle — from there on \
                 latency stays above {KNEE_FACTOR} × idle {:.1} ns",
                k.load_gbs,
                delay_text(k.delay_ns),
                k.latency_ns,
                k.latency_ns / idle.latency_ns,
                idle.latency_ns
            ),
            None => format!(
                "no knee{}: latency not above {KNEE_FACTOR} × idle {:.1} ns for good",
                if self.ended.is_some() { "" } else { " so far" },
                idle.latency_ns
            ),
        }
    }

    /// Draws the whole screen.
    pub fn draw(&self, f: &mut Frame<'_>) {
        let [title, status, body, knee] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(6),
            Constraint::Length(1),
        ])
        .areas(f.area());
        f.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled("stream-top ", theme::BRAND),
                Span::styled(self.plan_line.clone(), theme::LABEL),
            ])),
            title,
        );
        let status_style = match &self.ended {
            Some(Finish::Failed(_)) => theme::ENDED,
            _ => theme::HINT,
        };
        f.render_widget(
            Paragraph::new(Span::styled(self.status(), status_style)),
            status,
        );
        let [table, chart] =
            Layout::horizontal([Constraint::Length(52), Constraint::Min(20)]).areas(body);
        self.draw_table(f, table);
        self.draw_chart(f, chart);
        f.render_widget(
            Paragraph::new(Span::styled(self.knee_text(), theme::VALUE)),
            knee,
        );
    }

    fn draw_table(&self, f: &mut Frame<'_>, area: ratatui::layout::Rect) {
        let idle_ns = self.idle.as_ref().map(|p| p.latency_ns);
        let knee = self.knee();
        let row = |p: &LoadedPoint, is_knee: bool| {
            let times = idle_ns.map_or("–".into(), |i| format!("{:.2}", p.latency_ns / i));
            let style = if is_knee { theme::ALARM } else { theme::VALUE };
            Row::new(vec![
                Cell::from(delay_text(p.delay_ns)),
                Cell::from(format!("{:.2}", p.load_gbs)),
                Cell::from(format!("{:.1}", p.latency_ns)),
                Cell::from(if is_knee {
                    format!("{times} knee")
                } else {
                    times
                }),
            ])
            .style(style)
        };
        let mut rows: Vec<Row<'_>> = self.idle.iter().map(|p| row(p, false)).collect();
        rows.extend(
            self.points
                .iter()
                .enumerate()
                .map(|(i, p)| row(p, knee == Some(i))),
        );
        // The delays still to come, so the table shows the whole plan.
        for &d in self.delays.iter().skip(self.points.len()) {
            rows.push(
                Row::new(vec![Cell::from(delay_text(Some(d))), Cell::from("…")]).style(theme::HINT),
            );
        }
        let t = Table::new(
            rows,
            [
                Constraint::Length(15),
                Constraint::Length(9),
                Constraint::Length(10),
                Constraint::Length(10),
            ],
        )
        .header(Row::new(vec!["delay", "load GB/s", "latency ns", "× idle"]).style(theme::TITLE))
        .block(Block::default().borders(Borders::ALL).title("points"));
        f.render_widget(t, area);
    }

    fn draw_chart(&self, f: &mut Frame<'_>, area: ratatui::layout::Rect) {
        let mut curve: Vec<(f64, f64)> = self
            .idle
            .iter()
            .chain(&self.points)
            .map(|p| (p.load_gbs, p.latency_ns))
            .collect();
        curve.sort_by(|a, b| a.0.total_cmp(&b.0));
        let x_max = curve.iter().map(|p| p.0).fold(1.0f64, f64::max) * 1.1;
        let idle = self.idle.as_ref().map(|p| p.latency_ns);
        let y_max = curve
            .iter()
            .map(|p| p.1)
            .chain(idle.map(|i| KNEE_FACTOR * i))
            .fold(1.0f64, f64::max)
            * 1.1;
        let threshold: Vec<(f64, f64)> = idle
            .map(|i| vec![(0.0, KNEE_FACTOR * i), (x_max, KNEE_FACTOR * i)])
            .unwrap_or_default();
        let knee: Vec<(f64, f64)> = self
            .knee()
            .map(|k| vec![(self.points[k].load_gbs, self.points[k].latency_ns)])
            .unwrap_or_default();
        let datasets = vec![
            Dataset::default()
                .name(format!("{KNEE_FACTOR} × idle"))
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(theme::REFERENCE_LINE)
                .data(&threshold),
            Dataset::default()
                .name("latency")
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(theme::TIMELINE_BAR)
                .data(&curve),
            Dataset::default()
                .name("knee")
                .marker(Marker::Block)
                .graph_type(GraphType::Scatter)
                .style(theme::ALARM)
                .data(&knee),
        ];
        let label = |v: f64| {
            let text = if v < 10.0 {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            };
            Span::styled(text, theme::AXIS)
        };
        let chart = Chart::new(datasets)
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title("latency against load"),
            )
            .x_axis(
                Axis::default()
                    .title("load GB/s")
                    .style(theme::AXIS)
                    .bounds([0.0, x_max])
                    .labels([label(0.0), label(x_max / 2.0), label(x_max)]),
            )
            .y_axis(
                Axis::default()
                    .title("latency ns")
                    .style(theme::AXIS)
                    .bounds([0.0, y_max])
                    .labels([label(0.0), label(y_max / 2.0), label(y_max)]),
            );
        f.render_widget(chart, area);
    }
}

/// What a key asks of the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAction {
    Quit,
    Nothing,
}

/// `q`, Esc or Ctrl-C quit; every other key does nothing.
pub fn key_action(ev: &Event) -> KeyAction {
    let Event::Key(k) = ev else {
        return KeyAction::Nothing;
    };
    if k.kind == KeyEventKind::Release {
        return KeyAction::Nothing;
    }
    match k.code {
        KeyCode::Char('q') | KeyCode::Char('Q') | KeyCode::Esc => KeyAction::Quit,
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => KeyAction::Quit,
        _ => KeyAction::Nothing,
    }
}

/// Starts measuring the curve on its own thread; its updates come on the receiver. `stop`
/// ends it at the next step.
fn start(plan: LoadPlan, opts: LoadedOptions, stop: Arc<AtomicBool>) -> Result<Receiver<Update>> {
    let (tx, rx) = crossbeam_channel::unbounded();
    std::thread::Builder::new()
        .name("stream-top-loaded".into())
        .spawn(move || {
            let result: Result<LoadedCurve> = loaded_latency(&plan, &opts, |p| {
                let _ = tx.send(match p {
                    Progress::Planned { delays_ns } => Update::Planned(delays_ns.to_vec()),
                    Progress::Idle(p) => Update::Idle(p.clone()),
                    Progress::Point { point, .. } => Update::Point(point.clone()),
                });
                !stop.load(Ordering::Relaxed)
            });
            let _ = tx.send(Update::Done(Finish::of(&result)));
        })
        .map_err(|e| Error::machine(format!("cannot start the loaded-latency thread: {e}")))?;
    Ok(rx)
}

/// Runs the view until `q` or a signal.
pub fn run(plan: LoadPlan, opts: LoadedOptions, plan_line: String) -> Result<Ended> {
    super::terminal::require_terminal()?;
    let (_signals, mut sig_rx) = Signals::start()?;
    let stop = Arc::new(AtomicBool::new(false));
    let updates = start(plan, opts, stop.clone())?;
    let mut guard = Guard::enter()?;
    let (_input, keys) = Input::start();
    let mut view = LoadedView {
        plan_line,
        ..LoadedView::default()
    };
    let mut updates = Some(updates);
    let ended = loop {
        if terminal::active() {
            guard
                .terminal
                .draw(|f| view.draw(f))
                .map_err(|e| Error::machine(format!("cannot draw: {e}")))?;
        }
        let from_engine = updates.clone().unwrap_or_else(crossbeam_channel::never);
        select! {
            recv(keys) -> k => match k {
                Ok(Ok(ev)) if key_action(&ev) == KeyAction::Quit => break Ended::Quit,
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
                Err(_) => break Ended::Quit,
            },
            recv(from_engine) -> u => match u {
                Ok(u) => view.apply(u),
                // The thread ended: nothing more comes.
                Err(_) => updates = None,
            },
            recv(sig_rx) -> sig => match sig.map(Asks::of) {
                Ok(Asks::End(sig)) => break Ended::Signal(sig),
                Ok(Asks::Stop) => terminal::suspend()?,
                Ok(Asks::Continued) => terminal::retake()?,
                Err(_) => sig_rx = crossbeam_channel::never(),
            },
        }
    };
    // At once: the measuring thread is told to stop and not waited for.
    stop.store(true, Ordering::Relaxed);
    drop(guard);
    Ok(ended)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::KeyEvent;

    fn point(delay: Option<u64>, gbs: f64, ns: f64) -> LoadedPoint {
        LoadedPoint {
            delay_ns: delay,
            delay_spins: delay,
            load_threads: usize::from(delay.is_some()),
            load_gbs: gbs,
            latency_ns: ns,
            runs_ns: vec![ns],
        }
    }

    fn screen(view: &LoadedView) -> String {
        let mut t = Terminal::new(TestBackend::new(110, 20)).unwrap();
        t.draw(|f| view.draw(f)).unwrap();
        let buf = t.backend().buffer().clone();
        (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_view_fills_in_point_by_point_and_names_the_knee() {
        let mut v = LoadedView {
            plan_line: "a 384 MiB chase on CPU 0 against 1 load thread".into(),
            ..LoadedView::default()
        };
        assert!(screen(&v).contains("building the chain"));
        v.apply(Update::Planned(vec![0, 5_000, 20_000]));
        v.apply(Update::Idle(point(None, 0.0, 100.0)));
        let s = screen(&v);
        assert!(s.contains("point 1 of 3"), "{s}");
        assert!(s.contains("idle (no load)"), "{s}");
        assert!(s.contains("20.0 µs"), "the delays to come: {s}");
        assert!(s.contains("no knee so far"), "{s}");
        v.apply(Update::Point(point(Some(0), 18.0, 250.0)));
        v.apply(Update::Point(point(Some(5_000), 12.0, 140.0)));
        let s = screen(&v);
        assert!(s.contains("point 3 of 3"), "{s}");
        assert!(s.contains("2.50 knee"), "{s}");
        assert!(s.contains("knee at 18.0 GB/s of load (delay 0 ns)"), "{s}");
        assert!(
            s.contains("load GB/s") && s.contains("latency ns"),
            "axes: {s}"
        );
        v.apply(Update::Done(Finish::Measured));
        assert!(screen(&v).contains("done · q quits"));
        assert!(s.contains("stream-top a 384 MiB chase"), "{s}");
        v.apply(Update::Done(Finish::Failed("no memory".into())));
        assert!(screen(&v).contains("FAILED: no memory"));
    }

    #[test]
    fn q_esc_and_ctrl_c_quit() {
        let key = |code, modifiers| Event::Key(KeyEvent::new(code, modifiers));
        for quit in [
            key(KeyCode::Char('q'), KeyModifiers::NONE),
            key(KeyCode::Esc, KeyModifiers::NONE),
            key(KeyCode::Char('c'), KeyModifiers::CONTROL),
        ] {
            assert_eq!(key_action(&quit), KeyAction::Quit, "{quit:?}");
        }
        assert_eq!(
            key_action(&key(KeyCode::Char('c'), KeyModifiers::NONE)),
            KeyAction::Nothing
        );
        assert_eq!(key_action(&Event::FocusGained), KeyAction::Nothing);
    }
}
