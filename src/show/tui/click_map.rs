//! Where the last frame drew what can be clicked. The renderer records each rectangle as it
//! draws; `App` resolves a click against the map of the frame on screen. So the state never
//! calls the renderer, and a click lands on what was really drawn there.

use ratatui::layout::{Position, Rect};

/// Something on screen that a click can pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// A cell of the grid: index into `grid.sets`, index into `grid.threads`.
    Cell { set: usize, col: usize },
}

/// The clickable rectangles of one frame, in the order they were drawn.
#[derive(Debug, Clone, Default)]
pub struct ClickMap {
    areas: Vec<(Rect, Target)>,
}

impl ClickMap {
    /// Forgets the previous frame.
    pub(crate) fn clear(&mut self) {
        self.areas.clear();
    }

    pub(crate) fn add(&mut self, area: Rect, target: Target) {
        self.areas.push((area, target));
    }

    /// What was drawn at a screen position; where rectangles overlap, the one drawn last.
    pub(crate) fn at(&self, column: u16, row: u16) -> Option<Target> {
        let at = Position::new(column, row);
        self.areas
            .iter()
            .rev()
            .find(|(area, _)| area.contains(at))
            .map(|(_, target)| *target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_finds_the_rectangle_drawn_there_last() {
        let mut map = ClickMap::default();
        let a = Target::Cell { set: 0, col: 0 };
        let b = Target::Cell { set: 0, col: 1 };
        map.add(Rect::new(10, 2, 4, 1), a);
        map.add(Rect::new(12, 2, 4, 1), b);
        assert_eq!(map.at(10, 2), Some(a));
        assert_eq!(map.at(13, 2), Some(b), "drawn last wins");
        assert_eq!(map.at(16, 2), None, "right edge is outside");
        assert_eq!(map.at(10, 3), None);
        map.clear();
        assert_eq!(map.at(10, 2), None);
    }
}
