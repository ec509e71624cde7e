//! Where to put a scatter plot's point labels and its legend so that they do not cover one
//! another, the points or the line through the front (pixel geometry, y down).

/// An axis-aligned box in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left.
    pub x0: f64,
    /// Top.
    pub y0: f64,
    /// Right.
    pub x1: f64,
    /// Bottom.
    pub y1: f64,
}

impl Rect {
    /// The box of width `w` and height `h` with its top-left corner at `(x, y)`.
    pub fn at(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect {
            x0: x,
            y0: y,
            x1: x + w,
            y1: y + h,
        }
    }

    fn overlap(&self, o: &Rect) -> f64 {
        let w = self.x1.min(o.x1) - self.x0.max(o.x0);
        let h = self.y1.min(o.y1) - self.y0.max(o.y0);
        if w > 0.0 && h > 0.0 {
            w * h
        } else {
            0.0
        }
    }

    fn contains(&self, (x, y): (f64, f64)) -> bool {
        x >= self.x0 && x <= self.x1 && y >= self.y0 && y <= self.y1
    }

    /// Area of `self` outside `area`.
    fn outside(&self, area: &Rect) -> f64 {
        (self.x1 - self.x0) * (self.y1 - self.y0) - self.overlap(area)
    }
}

/// Approximate size of `text` in a sans-serif font of `px` pixels (average advance 0.6 em).
pub fn text_size(text: &str, px: f64) -> (f64, f64) {
    (text.chars().count() as f64 * px * 0.6, px * 1.2)
}

/// Samples along a segment, used to count how much of a line a box covers.
fn samples(a: (f64, f64), b: (f64, f64)) -> impl Iterator<Item = (f64, f64)> {
    let n = ((b.0 - a.0).hypot(b.1 - a.1) / 3.0).ceil().max(1.0) as usize;
    (0..=n).map(move |i| {
        let t = i as f64 / n as f64;
        (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
    })
}

/// Top-left corners for the labels of `anchors` (one label of the given size per anchor),
/// placed greedily in anchor order at the candidate spot (right, left, above, below the
/// point) that covers the least of the labels placed so far, every point of `points`, the
/// `path` through consecutive points and the outside of `area`.
pub fn labels(
    anchors: &[(f64, f64)],
    sizes: &[(f64, f64)],
    points: &[(f64, f64)],
    path: &[(f64, f64)],
    area: Rect,
) -> Vec<(f64, f64)> {
    const R: f64 = 6.0;
    let mut placed: Vec<Rect> = Vec::new();
    let mut out = Vec::with_capacity(anchors.len());
    for (&(x, y), &(w, h)) in anchors.iter().zip(sizes) {
        let candidates = [
            (x + R, y + 1.0),
            (x + R, y - h - 1.0),
            (x - R - w, y + 1.0),
            (x - R - w, y - h - 1.0),
            (x - w / 2.0, y - h - R),
            (x - w / 2.0, y + R),
            (x + R, y - h / 2.0),
            (x - R - w, y - h / 2.0),
        ];
        let cost = |&(cx, cy): &(f64, f64)| {
            let b = Rect::at(cx, cy, w, h);
            let labels: f64 = placed.iter().map(|p| b.overlap(p)).sum();
            let dots: f64 = points
                .iter()
                .map(|&(px, py)| b.overlap(&Rect::at(px - R, py - R, 2.0 * R, 2.0 * R)))
                .sum();
            let line = path
                .windows(2)
                .flat_map(|s| samples(s[0], s[1]))
                .filter(|&p| b.contains(p))
                .count() as f64;
            4.0 * labels + 2.0 * dots + 20.0 * line + 8.0 * b.outside(&area)
        };
        let mut best = candidates[0];
        let mut best_cost = cost(&best);
        for c in &candidates[1..] {
            let k = cost(c);
            if k < best_cost {
                best = *c;
                best_cost = k;
            }
        }
        placed.push(Rect::at(best.0, best.1, w, h));
        out.push(best);
    }
    out
}

/// A corner of the plotting area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corner {
    /// Top right.
    UpperRight,
    /// Top left.
    UpperLeft,
    /// Bottom right.
    LowerRight,
    /// Bottom left.
    LowerLeft,
}

/// The corner of `area` whose box of `w` × `h` pixels covers the fewest of `points` and of
/// the `paths` through consecutive points (ties in the order of [`Corner`]).
pub fn emptiest_corner(
    points: &[(f64, f64)],
    paths: &[Vec<(f64, f64)>],
    area: Rect,
    w: f64,
    h: f64,
) -> Corner {
    let corners = [
        (Corner::UpperRight, Rect::at(area.x1 - w, area.y0, w, h)),
        (Corner::UpperLeft, Rect::at(area.x0, area.y0, w, h)),
        (Corner::LowerRight, Rect::at(area.x1 - w, area.y1 - h, w, h)),
        (Corner::LowerLeft, Rect::at(area.x0, area.y1 - h, w, h)),
    ];
    let covered = |b: &Rect| {
        let dots = points.iter().filter(|&&p| b.contains(p)).count() * 10;
        let lines = paths
            .iter()
            .flat_map(|p| p.windows(2).flat_map(|s| samples(s[0], s[1])))
            .filter(|&p| b.contains(p))
            .count();
        dots + lines
    };
    let mut best = corners[0];
    let mut n = covered(&best.1);
    for c in &corners[1..] {
        let k = covered(&c.1);
        if k < n {
            best = *c;
            n = k;
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const AREA: Rect = Rect {
        x0: 0.0,
        y0: 0.0,
        x1: 400.0,
        y1: 300.0,
    };

    #[test]
    fn close_labels_do_not_overlap() {
        // Two points 8 px apart whose labels would overlap in the same spot.
        let anchors = [(100.0, 100.0), (108.0, 104.0)];
        let sizes = [(30.0, 13.0), (30.0, 13.0)];
        let at = labels(&anchors, &sizes, &anchors, &[], AREA);
        let a = Rect::at(at[0].0, at[0].1, 30.0, 13.0);
        let b = Rect::at(at[1].0, at[1].1, 30.0, 13.0);
        assert_eq!(a.overlap(&b), 0.0, "{:?}", at);
        assert_ne!(at[0], at[1]);
    }

    #[test]
    fn labels_stay_inside_and_off_the_line() {
        // A point at the right edge: its label goes left. A line running right from a point:
        // the label avoids it.
        let at = labels(&[(395.0, 150.0)], &[(40.0, 13.0)], &[], &[], AREA);
        assert!(at[0].0 + 40.0 <= 400.0, "{:?}", at);
        let path = [(200.0, 150.0), (300.0, 150.0)];
        let at = labels(&[(200.0, 150.0)], &[(40.0, 13.0)], &path, &path, AREA);
        let b = Rect::at(at[0].0, at[0].1, 40.0, 13.0);
        assert!(
            !samples(path[0], path[1]).any(|p| b.contains(p)),
            "{:?}",
            at
        );
    }

    #[test]
    fn legend_goes_to_an_empty_corner() {
        // Points along the bottom-left to top-right diagonal: the upper left is free.
        let pts: Vec<(f64, f64)> = (0..10)
            .map(|i| (40.0 * i as f64, 300.0 - 30.0 * i as f64))
            .collect();
        assert_eq!(
            emptiest_corner(&pts, std::slice::from_ref(&pts), AREA, 100.0, 60.0),
            Corner::UpperLeft
        );
        assert_eq!(
            emptiest_corner(&[], &[], AREA, 100.0, 60.0),
            Corner::UpperRight
        );
    }
}
