//! The keys of a replay: its own (steps, counts, episodes, typed times, play, speed), a
//! refusal for the live monitor's that steer the engine or write files, and the rest handled
//! as live at the cursor's time.

use super::super::app::Action;
use super::super::view::ViewState;
use super::{Did, Replay};
use crate::engine::events::Command;
use ratatui::crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers,
};

impl Replay {
    pub(super) fn notice(&mut self, text: String) {
        self.app.view.guard.notice = Some(text);
    }

    /// A key: the replay's own, a refusal for the live monitor's that steer the engine or
    /// write files, or the live monitor's handling.
    pub fn on_key(&mut self, key: KeyEvent) -> Did {
        if key.kind != KeyEventKind::Press {
            return Did::Nothing;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(text) = &mut self.typing {
            match key.code {
                KeyCode::Enter => {
                    let text = std::mem::take(text);
                    self.typing = None;
                    if let Err(e) = self.goto(&text) {
                        self.notice(format!("g {e}"));
                    }
                }
                KeyCode::Esc => self.typing = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char('c') if ctrl => return Did::Quit,
                KeyCode::Char(c) => text.push(c),
                _ => return Did::Nothing,
            }
            self.say();
            return Did::Redraw;
        }
        // The log view and the help take their keys as live.
        let overlay = self.app.view.log.open || self.app.view.help;
        if !overlay && !ctrl {
            let had_notice = self.app.view.guard.notice.take().is_some();
            let count = self.count.take();
            let n = count.unwrap_or(1).max(1) as i64;
            match key.code {
                KeyCode::Char(d @ '0'..='9') => {
                    let d = u64::from(d as u8 - b'0');
                    self.count = Some(count.unwrap_or(0).saturating_mul(10).saturating_add(d));
                    return Did::Nothing;
                }
                KeyCode::Char('[') => self.step(-n),
                KeyCode::Char(']') => self.step(n),
                KeyCode::Char('{') => {
                    self.jump(false);
                }
                KeyCode::Char('}') => {
                    self.jump(true);
                }
                KeyCode::Char('g') => {
                    self.typing = Some(String::new());
                    self.say();
                }
                KeyCode::Char(' ') => self.toggle_play(),
                KeyCode::Char('>') => self.next_speed(),
                KeyCode::Enter | KeyCode::Char('d' | 'e' | 'r' | 'R' | 'p' | 'P' | 'f') => {
                    self.notice(
                        "a replay shows what was recorded: focus, duty, export, reset, pin and \
                         the engine's keys are the live monitor's"
                            .into(),
                    );
                }
                _ => return self.live_key(key, had_notice),
            }
            return Did::Redraw;
        }
        self.live_key(key, false)
    }

    /// A key the live monitor handles, at the cursor's time; what would reach the engine or
    /// write a file is dropped.
    fn live_key(&mut self, key: KeyEvent, had_notice: bool) -> Did {
        let at = self.instant(self.at_ms);
        match self.app.on_key_at(key, at) {
            Action::Quit => Did::Quit,
            Action::None if had_notice => Did::Redraw,
            Action::None => Did::Nothing,
            Action::Redraw => Did::Redraw,
            // `o` shows the next recorded op: the view changes, the engine it would tell is
            // not there.
            Action::Send(Command::ShowOp(_)) => Did::Redraw,
            Action::Send(_) | Action::Export | Action::Suspend => {
                self.notice("not in a replay: that key is the live monitor's".into());
                Did::Redraw
            }
        }
    }

    /// A terminal event (a key, a click, a resize).
    pub(super) fn on_input(&mut self, ev: TermEvent, view: &ViewState) -> Did {
        match ev {
            TermEvent::Key(k) => {
                if view.threads_page > 0 {
                    self.app.view.threads_page = view.threads_page;
                }
                if view.log_page > 0 {
                    self.app.view.log.page = view.log_page;
                }
                self.on_key(k)
            }
            TermEvent::Mouse(m) => match self.app.on_mouse(m, &view.clicks) {
                Action::None => Did::Nothing,
                Action::Quit => Did::Quit,
                _ => Did::Redraw,
            },
            TermEvent::Resize(..) => Did::Redraw,
            _ => Did::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use crate::engine::kernel::Op;
    use crate::engine::plan::CellId;
    use crate::show::record::format::tests::round;
    use crate::show::record::format::{Body, Frame};

    #[test]
    fn o_shows_each_recorded_op_in_turn() {
        let (mut frames, _) = frames_of(true, 50);
        let Body::Header(h) = &mut frames[0].body else {
            unreachable!()
        };
        h.frame.grid.ops = vec!["triad".into(), "copy".into()];
        let mut copy = round(1, 1, 4.0);
        copy.cell.op = Op::Copy;
        // At the recording's last time, so that its end is unchanged.
        frames.push(Frame {
            t_ms: frames.last().unwrap().t_ms,
            body: Body::Round(Box::new(copy)),
        });
        let mut r = Replay::new(held(frames, "night.rec"));
        r.seek(u64::MAX);
        assert_eq!(r.app.view.op, Op::Triad);
        assert_eq!(r.on_key(key('o')), Did::Redraw);
        assert_eq!(r.app.view.op, Op::Copy, "o shows the next op, as live");
        assert!(r.app.view.guard.notice.is_none(), "and is not refused");
        let copy_cell = CellId::of(Op::Copy, 1, 1);
        assert_eq!(r.app.board.cell(copy_cell).map(|c| c.total_rounds), Some(1));
        r.on_key(key('o'));
        assert_eq!(r.app.view.op, Op::Triad, "and back to the first");
    }

    #[test]
    fn the_engines_keys_are_refused_and_q_quits() {
        let (rec, _) = recording(true);
        let mut r = Replay::new(rec);
        let duty = r.app.view.duty;
        for c in ['d', 'r', 'p', 'e'] {
            assert_eq!(r.on_key(key(c)), Did::Redraw);
            let notice = r.app.view.guard.notice.clone().unwrap_or_default();
            assert!(notice.contains("live monitor"), "{c}: {notice}");
        }
        r.on_key(KeyEvent::from(KeyCode::Enter));
        assert_eq!(r.app.view.mode, crate::show::tui::app::Mode::Sweep);
        assert_eq!(r.app.view.duty, duty);
        // The help and the log view open as live.
        r.on_key(key('?'));
        assert!(r.app.view.help);
        r.on_key(key('x'));
        assert!(!r.app.view.help);
        assert_eq!(r.on_key(key('q')), Did::Quit);
    }
}
