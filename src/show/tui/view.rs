//! What the screen remembers from one frame to the next. The event loop owns it; the panels
//! write it as they draw; `App` reads the click map.

use crate::judge::watch::log::{Entry, EventLog, Filter};
use crate::show::tui::click_map::ClickMap;

#[derive(Debug, Default)]
pub struct ViewState {
    /// Where the frame on screen drew each cell of the grid, for the mouse.
    pub clicks: ClickMap,
    /// Draw without colour (`NO_COLOR`, `TERM=dumb`): set once, before the first frame.
    pub monochrome: bool,
    /// The first thread column the grid shows: it scrolls only as far as the selection needs.
    pub(super) grid_offset: usize,
    /// The first working-set row the grid shows, likewise.
    pub(super) grid_row_offset: usize,
    /// Thread lines the per-thread list had room for: a page for PgUp/PgDn.
    pub threads_page: usize,
    /// Log lines the log view had room for: its page for PgUp/PgDn.
    pub(crate) log_page: usize,
}

/// The full-screen log view (`L`): what it shows, from where, and what it searches. The keys
/// change it (`input`); `log_view` draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct LogView {
    /// It covers the screen.
    pub open: bool,
    pub filter: Filter,
    /// The entry at its bottom, by `Entry::seq`; None: the newest, following new ones.
    pub bottom: Option<u64>,
    /// The search's text, and whether it is still being typed (`/` … Enter).
    pub query: String,
    pub typing: bool,
    /// The entry the search found last: marked, and where `n` goes on from.
    pub found: Option<u64>,
    /// Said on its last line until the next key: a search that found nothing.
    pub(crate) notice: Option<String>,
    /// Entries PgUp and PgDn move by: the lines the view had room for in the last frame.
    pub(crate) page: usize,
}

impl Default for LogView {
    fn default() -> LogView {
        LogView {
            open: false,
            filter: Filter::All,
            bottom: None,
            query: String::new(),
            typing: false,
            found: None,
            notice: None,
            page: 10,
        }
    }
}

impl LogView {
    /// Where the bottom entry is among `shown` (the filter's entries, oldest first): the
    /// anchor, or the nearest older one the filter admits (the oldest if none is older).
    pub(crate) fn bottom_index(&self, shown: &[&Entry]) -> Option<usize> {
        let last = shown.len().checked_sub(1)?;
        Some(match self.bottom {
            None => last,
            Some(b) => shown.iter().rposition(|e| e.seq <= b).unwrap_or(0),
        })
    }

    /// Moves the bottom `by` entries (negative: back to older ones); back at the newest, it
    /// follows new entries again.
    pub fn scroll(&mut self, log: &EventLog, by: isize) {
        let shown = log.shown(self.filter);
        let Some(i) = self.bottom_index(&shown) else {
            return;
        };
        let to = i.saturating_add_signed(by).min(shown.len() - 1);
        self.bottom = (to + 1 < shown.len()).then(|| shown[to].seq);
    }

    /// Home: the oldest entry at the top (the view fills down from its bottom anchor when
    /// nothing older is left).
    pub fn home(&mut self, log: &EventLog) {
        let shown = log.shown(self.filter);
        self.bottom = match shown.len() {
            0 | 1 => None,
            _ => Some(shown[0].seq),
        };
    }

    /// The next entry that holds the query, older (`n`) or newer (`N`) than the last found or,
    /// with none found yet, than the bottom: it becomes the bottom.
    pub fn search(&mut self, log: &EventLog, older: bool) {
        let from = match (self.found, self.bottom) {
            (Some(f), _) => f,
            // With nothing found yet, the bottom entry itself is the first looked at.
            (None, Some(b)) if older => b + 1,
            (None, Some(b)) => b,
            (None, None) => u64::MAX,
        };
        match log.find(self.filter, &self.query, from, older) {
            Some(seq) => {
                self.found = Some(seq);
                let newest = log.shown(self.filter).last().map(|e| e.seq);
                self.bottom = (newest != Some(seq)).then_some(seq);
            }
            None => {
                let way = if older { "older" } else { "newer" };
                self.notice = Some(format!("no {way} entry holds “{}”", self.query));
            }
        }
    }
}
