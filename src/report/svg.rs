//! Inline SVG for the report and `render`: time-series plots with shaded
//! intervals, lanes, a histogram, and views of the cell (top and side) and
//! of the platen surface. Plain strings; every drawing is self-contained.

use std::fmt::Write;

/// Colours used throughout: one per series, then the states' own.
pub const SERIES: [&str; 8] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];
/// A stop.
pub const STOP: &str = "#d62728";
/// A hold on a grant.
pub const HOLD: &str = "#ff9f1c";
/// Slowed (speed scaling below 1).
pub const SLOW: &str = "#f2d74e";
/// Proceeding on a grant.
pub const PROCEED: &str = "#59a14f";
/// Backing away.
pub const BACK: &str = "#b07aa1";

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// An SVG of `w` × `h` pixels, with a `data-plot` name and a title.
pub struct Svg {
    /// The markup so far.
    pub body: String,
    w: f64,
    h: f64,
    name: String,
}

impl Svg {
    /// An empty drawing.
    pub fn new(name: &str, w: f64, h: f64) -> Svg {
        Svg { body: String::new(), w, h, name: name.to_string() }
    }

    /// A rectangle: left, top, width, height.
    pub fn rect(&mut self, (x, y, w, h): (f64, f64, f64, f64), fill: &str, opacity: f64, title: Option<&str>) {
        let _ = write!(
            self.body,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" fill-opacity="{opacity:.2}">"#,
            w.max(0.5),
            h.max(0.5)
        );
        if let Some(t) = title {
            let _ = write!(self.body, "<title>{}</title>", esc(t));
        }
        self.body.push_str("</rect>");
    }

    /// A line.
    pub fn line(&mut self, a: (f64, f64), b: (f64, f64), stroke: &str, width: f64, dash: bool) {
        let _ = write!(
            self.body,
            r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{stroke}" stroke-width="{width}"{}/>"#,
            a.0,
            a.1,
            b.0,
            b.1,
            if dash { r#" stroke-dasharray="4 3""# } else { "" }
        );
    }

    /// A polyline through `pts`.
    pub fn polyline(&mut self, pts: &[(f64, f64)], stroke: &str, width: f64) {
        if pts.len() < 2 {
            return;
        }
        self.body.push_str(r#"<polyline fill="none" stroke=""#);
        self.body.push_str(stroke);
        let _ = write!(self.body, r#"" stroke-width="{width}" points=""#);
        for (x, y) in pts {
            let _ = write!(self.body, "{x:.1},{y:.1} ");
        }
        self.body.push_str(r#""/>"#);
    }

    /// A closed polygon.
    pub fn polygon(&mut self, pts: &[(f64, f64)], fill: &str, opacity: f64, stroke: &str) {
        self.body.push_str(r#"<polygon points=""#);
        for (x, y) in pts {
            let _ = write!(self.body, "{x:.1},{y:.1} ");
        }
        let _ =
            write!(self.body, r#"" fill="{fill}" fill-opacity="{opacity:.2}" stroke="{stroke}" stroke-width="1"/>"#);
    }

    /// A circle.
    pub fn circle(&mut self, c: (f64, f64), r: f64, fill: &str, opacity: f64, stroke: Option<&str>) {
        let _ = write!(
            self.body,
            r#"<circle cx="{:.1}" cy="{:.1}" r="{:.2}" fill="{fill}" fill-opacity="{opacity:.2}""#,
            c.0, c.1, r
        );
        match stroke {
            Some(s) => {
                let _ = write!(self.body, r#" stroke="{s}" stroke-width="0.8" stroke-dasharray="2 2"/>"#);
            }
            None => self.body.push_str("/>"),
        }
    }

    /// Text at `(x, y)`.
    pub fn text(&mut self, x: f64, y: f64, size: f64, anchor: &str, s: &str) {
        let _ = write!(
            self.body,
            r##"<text x="{x:.1}" y="{y:.1}" font-size="{size}" text-anchor="{anchor}" fill="#222">{}</text>"##,
            esc(s)
        );
    }

    /// The finished markup.
    pub fn finish(self) -> String {
        format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" data-plot="{}" width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>{}</svg>"#,
            esc(&self.name),
            self.w,
            self.h,
            self.w,
            self.h,
            self.body
        )
    }
}

/// Axes of a plot: data ranges onto a pixel box.
#[derive(Clone, Copy)]
pub struct Axes {
    /// Pixel box: left, top, width, height.
    pub px: (f64, f64, f64, f64),
    /// Data x range.
    pub x: (f64, f64),
    /// Data y range.
    pub y: (f64, f64),
}

impl Axes {
    /// Pixel x of data `x`.
    pub fn sx(&self, x: f64) -> f64 {
        let (l, _, w, _) = self.px;
        l + (x - self.x.0) / (self.x.1 - self.x.0).max(1e-12) * w
    }

    /// Pixel y of data `y` (clamped to the box).
    pub fn sy(&self, y: f64) -> f64 {
        let (_, t, _, h) = self.px;
        let f = ((y - self.y.0) / (self.y.1 - self.y.0).max(1e-12)).clamp(0.0, 1.0);
        t + h - f * h
    }

    /// Frame, ticks and labels.
    pub fn draw(&self, svg: &mut Svg, xlabel: &str, ylabel: &str, yunit_scale: f64) {
        let (l, t, w, h) = self.px;
        svg.line((l, t + h), (l + w, t + h), "#333", 1.0, false);
        svg.line((l, t), (l, t + h), "#333", 1.0, false);
        for k in 0..=5 {
            let x = self.x.0 + (self.x.1 - self.x.0) * k as f64 / 5.0;
            svg.line((self.sx(x), t + h), (self.sx(x), t + h + 4.0), "#333", 1.0, false);
            svg.text(self.sx(x), t + h + 16.0, 11.0, "middle", &format!("{x:.1}"));
            let y = self.y.0 + (self.y.1 - self.y.0) * k as f64 / 5.0;
            svg.line((l - 4.0, self.sy(y)), (l, self.sy(y)), "#333", 1.0, false);
            svg.line((l, self.sy(y)), (l + w, self.sy(y)), "#eee", 1.0, false);
            svg.text(l - 6.0, self.sy(y) + 4.0, 11.0, "end", &format!("{:.0}", y * yunit_scale));
        }
        svg.text(l + w / 2.0, t + h + 32.0, 12.0, "middle", xlabel);
        svg.text(l, t - 8.0, 12.0, "start", ylabel);
    }
}

/// A colour from green (clear beyond `slow`) through amber to red (at or
/// within `margin`).
pub fn clearance_colour(c: f64, margin: f64, slow: f64) -> &'static str {
    if c.is_nan() || c <= margin {
        STOP
    } else if c < slow {
        HOLD
    } else {
        PROCEED
    }
}
