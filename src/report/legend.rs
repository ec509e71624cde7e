//! A legend beside the plot instead of over it, for charts with many series (grouped bars,
//! strips), where a legend inside the plotting area covers data.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// How a legend entry is drawn.
#[derive(Clone, Copy, Debug)]
pub enum Key {
    /// A filled square (bars, strip states).
    Fill(RGBColor),
    /// A thick line (the papers' marks).
    Line(RGBColor),
}

/// Width in pixels of a side legend for these names (bounded: longer names run on).
pub fn width(names: &[&str]) -> u32 {
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) as u32;
    (34 + longest * 7).clamp(90, 220)
}

/// Draws `entries` top-down in `area` (the strip right of the plot, below the title).
pub fn draw(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[(String, Key)],
) -> Result<(), Box<dyn std::error::Error>> {
    let font =
        TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (name, key)) in entries.iter().enumerate() {
        let y = 16 + 19 * i as i32;
        match key {
            Key::Fill(c) => area.draw(&Rectangle::new([(4, y - 5), (16, y + 5)], c.filled()))?,
            Key::Line(c) => {
                area.draw(&PathElement::new(vec![(4, y), (16, y)], c.stroke_width(3)))?
            }
        }
        area.draw(&Text::new(name.clone(), (22, y), font.clone()))?;
    }
    Ok(())
}
