//! Just enough plotting for the bench's figures, with no font or system dependency: an RGB
//! canvas, lines and markers, a built-in 5×7 bitmap font, line charts with linear or log
//! axes; PNG files from the `png` crate.

pub type Rgb = [u8; 3];

pub const WHITE: Rgb = [255, 255, 255];
pub const BLACK: Rgb = [0, 0, 0];
pub const GRID: Rgb = [225, 225, 225];
pub const GRAY: Rgb = [110, 110, 110];
/// A palette readable by most colour-blind viewers (Okabe–Ito).
pub const PALETTE: [Rgb; 6] = [[0, 114, 178], [213, 94, 0], [0, 158, 115], [204, 121, 167], [230, 159, 0], [86, 180, 233]];

/// An RGB raster.
pub struct Canvas {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

impl Canvas {
    pub fn new(w: usize, h: usize) -> Self {
        Self { w, h, px: vec![255; w * h * 3] }
    }

    pub fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            let i = (y as usize * self.w + x as usize) * 3;
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    pub fn fill(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb) {
        for y in y0.min(y1)..=y0.max(y1) {
            for x in x0.min(x1)..=x0.max(x1) {
                self.set(x, y, c);
            }
        }
    }

    /// A straight line `width` pixels thick (Bresenham, each point stamped as a square).
    pub fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: Rgb, width: i64) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        let lo = -(width - 1) / 2;
        let hi = width / 2;
        loop {
            self.fill(x + lo, y + lo, x + hi, y + hi, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Text with its top-left corner at `(x, y)`, each font pixel `scale`² screen pixels.
    pub fn text(&mut self, x: i64, y: i64, s: &str, scale: i64, c: Rgb) {
        for (i, ch) in s.chars().enumerate() {
            let (g, drop) = (glyph(ch), descent(ch));
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        let (px, py) = (x + (i as i64 * 6 + col) * scale, y + (row as i64 + drop) * scale);
                        self.fill(px, py, px + scale - 1, py + scale - 1, c);
                    }
                }
            }
        }
    }

    /// Text turned 90° counter-clockwise (read bottom to top), starting at `(x, y)` and
    /// extending upwards; its glyphs' tops face left.
    pub fn text_up(&mut self, x: i64, y: i64, s: &str, scale: i64, c: Rgb) {
        for (i, ch) in s.chars().enumerate() {
            let (g, drop) = (glyph(ch), descent(ch));
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        let (px, py) = (x + (row as i64 + drop) * scale, y - (i as i64 * 6 + col) * scale);
                        self.fill(px, py - scale + 1, px + scale - 1, py, c);
                    }
                }
            }
        }
    }

    /// The PNG file of this canvas (8-bit RGB), by the `png` crate.
    pub fn png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.w as u32, self.h as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        // Writing into memory fails only on a size mismatch, which `px` rules out.
        let written = encoder.write_header().and_then(|mut writer| writer.write_image_data(&self.px));
        written.expect("a canvas's pixels fill its PNG");
        out
    }
}

/// Pixel width of `s` at `scale`.
pub fn text_width(s: &str, scale: i64) -> i64 {
    (s.chars().count() as i64 * 6 - 1).max(0) * scale
}

/// One line of a chart.
pub struct Series {
    pub name: String,
    pub color: Rgb,
    pub points: Vec<(f64, f64)>,
    /// Draw a marker at each point (for sparse series).
    pub markers: bool,
}

/// One axis of a chart.
pub struct Axis {
    pub label: String,
    pub log: bool,
    pub min: f64,
    pub max: f64,
    /// Tick positions and labels.
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// A linear axis from `min` to `max` with round ticks.
    pub fn linear(label: &str, min: f64, max: f64) -> Self {
        let max = if max > min { max } else { min + 1.0 };
        let raw = (max - min) / 6.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|&s| s >= raw).unwrap_or(10.0 * mag);
        let decimals = if step >= 1.0 {
            0
        } else {
            let e = -step.log10().floor();
            let mantissa = step * 10f64.powf(e);
            e as usize + usize::from((mantissa - mantissa.round()).abs() > 1e-6)
        };
        let mut ticks = Vec::new();
        let mut t = (min / step).ceil() * step;
        while t <= max + step * 1e-9 {
            ticks.push((t, format!("{t:.decimals$}")));
            t += step;
        }
        Self { label: label.into(), log: false, min, max, ticks }
    }

    /// A base-10 log axis from `min` to `max` (both > 0) with a tick per decade.
    pub fn log10(label: &str, min: f64, max: f64) -> Self {
        let (lo, hi) = (min.max(1e-12).log10().floor() as i32, max.max(min * 10.0).log10().ceil() as i32);
        let ticks = (lo..=hi)
            .map(|e| {
                let v = 10f64.powi(e);
                let label = if e >= 0 { format!("{v:.0}") } else { format!("{v}") };
                (v, label)
            })
            .collect();
        Self { label: label.into(), log: true, min: 10f64.powi(lo), max: 10f64.powi(hi), ticks }
    }

    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.max(1e-300).ln() - self.min.ln()) / (self.max.ln() - self.min.ln())
        } else {
            (v - self.min) / (self.max - self.min)
        }
    }
}

/// Draws a line chart into the `(x, y, w, h)` rectangle of `c`.
pub fn chart(c: &mut Canvas, (ox, oy, w, h): (i64, i64, i64, i64), title: &str, xa: &Axis, ya: &Axis, series: &[Series]) {
    let (left, right, top, bottom) = (78, 20, 34, 52);
    let (px0, py0, px1, py1) = (ox + left, oy + top, ox + w - right, oy + h - bottom);
    let to_px = |x: f64, y: f64| -> (i64, i64) {
        let fx = xa.frac(x).clamp(-0.02, 1.02);
        let fy = ya.frac(y).clamp(-0.02, 1.02);
        (px0 + (fx * (px1 - px0) as f64).round() as i64, py1 - (fy * (py1 - py0) as f64).round() as i64)
    };
    c.text(ox + (w - text_width(title, 2)) / 2, oy + 8, title, 2, BLACK);
    for (v, label) in &xa.ticks {
        let (x, _) = to_px(*v, ya.min);
        c.line((x, py0), (x, py1), GRID, 1);
        c.line((x, py1), (x, py1 + 4), BLACK, 1);
        c.text(x - text_width(label, 1) / 2, py1 + 8, label, 1, BLACK);
    }
    for (v, label) in &ya.ticks {
        let (_, y) = to_px(xa.min, *v);
        c.line((px0, y), (px1, y), GRID, 1);
        c.line((px0 - 4, y), (px0, y), BLACK, 1);
        c.text(px0 - 8 - text_width(label, 1), y - 3, label, 1, BLACK);
    }
    c.line((px0, py0), (px0, py1), BLACK, 1);
    c.line((px0, py1), (px1, py1), BLACK, 1);
    c.text(px0 + (px1 - px0 - text_width(&xa.label, 1)) / 2, py1 + 26, &xa.label, 1, BLACK);
    c.text_up(ox + 8, py0 + (py1 - py0 + text_width(&ya.label, 1)) / 2, &ya.label, 1, BLACK);
    for s in series {
        let pts: Vec<(i64, i64)> = s.points.iter().filter(|(x, y)| x.is_finite() && y.is_finite()).map(|&(x, y)| to_px(x, y)).collect();
        for pair in pts.windows(2) {
            c.line(pair[0], pair[1], s.color, 2);
        }
        if s.markers || pts.len() == 1 {
            for &(x, y) in &pts {
                c.fill(x - 3, y - 3, x + 3, y + 3, s.color);
            }
        }
    }
    // Legend: in whichever inside corner hides the fewest data points.
    let lw = series.iter().map(|s| text_width(&s.name, 1)).max().unwrap_or(0) + 36;
    let lh = series.len() as i64 * 14 + 8;
    let corners = [(px0 + 8, py0 + 8), (px1 - 8 - lw, py0 + 8), (px1 - 8 - lw, py1 - 8 - lh), (px0 + 8, py1 - 8 - lh)];
    // Points along every drawn segment, in pixels.
    let mut drawn = Vec::new();
    for s in series {
        let pts: Vec<(i64, i64)> = s.points.iter().filter(|(x, y)| x.is_finite() && y.is_finite()).map(|&(x, y)| to_px(x, y)).collect();
        drawn.extend_from_slice(&pts);
        for pair in pts.windows(2) {
            let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
            for i in 1..32 {
                drawn.push((x0 + (x1 - x0) * i / 32, y0 + (y1 - y0) * i / 32));
            }
        }
    }
    let hidden =
        |&(lx, ly): &(i64, i64)| drawn.iter().filter(|&&(x, y)| x >= lx - 10 && x <= lx + lw + 10 && y >= ly - 10 && y <= ly + lh + 10).count();
    let (lx, ly) = corners.iter().copied().min_by_key(hidden).unwrap_or(corners[0]);
    c.fill(lx, ly, lx + lw, ly + lh, WHITE);
    c.line((lx, ly), (lx + lw, ly), GRAY, 1);
    c.line((lx, ly + lh), (lx + lw, ly + lh), GRAY, 1);
    c.line((lx, ly), (lx, ly + lh), GRAY, 1);
    c.line((lx + lw, ly), (lx + lw, ly + lh), GRAY, 1);
    for (i, s) in series.iter().enumerate() {
        let y = ly + 8 + i as i64 * 14;
        c.line((lx + 6, y + 3), (lx + 26, y + 3), s.color, 3);
        c.text(lx + 32, y, &s.name, 1, BLACK);
    }
}

/// Rows a glyph is drawn below the others: letters with descenders are drawn in rows 2…8
/// of a 9-row cell (their glyphs start at the x-height), every other glyph in rows 0…6.
fn descent(ch: char) -> i64 {
    if matches!(ch, 'g' | 'p' | 'q' | 'y') {
        2
    } else {
        0
    }
}

/// The 5×7 glyph of `ch` (rows top to bottom, bit 4 the leftmost column); unknown
/// characters draw as a box.
fn glyph(ch: char) -> [u8; 7] {
    let rows: [&str; 7] = match ch {
        ' ' => [".....", ".....", ".....", ".....", ".....", ".....", "....."],
        '!' => ["..#..", "..#..", "..#..", "..#..", "..#..", ".....", "..#.."],
        '"' => [".#.#.", ".#.#.", ".....", ".....", ".....", ".....", "....."],
        '#' => [".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#."],
        '$' => ["..#..", ".####", "#.#..", ".###.", "..#.#", "####.", "..#.."],
        '%' => ["##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"],
        '&' => [".##..", "#..#.", "#.#..", ".#...", "#.#.#", "#..#.", ".##.#"],
        '\'' => ["..#..", "..#..", ".....", ".....", ".....", ".....", "....."],
        '(' => ["...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."],
        ')' => [".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."],
        '*' => [".....", "..#..", "#.#.#", ".###.", "#.#.#", "..#..", "....."],
        '+' => [".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."],
        ',' => [".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."],
        '-' => [".....", ".....", ".....", "#####", ".....", ".....", "....."],
        '.' => [".....", ".....", ".....", ".....", ".....", ".##..", ".##.."],
        '/' => [".....", "....#", "...#.", "..#..", ".#...", "#....", "....."],
        '0' => [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
        '1' => ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
        '2' => [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
        '3' => ["#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."],
        '4' => ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
        '5' => ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
        '6' => ["..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."],
        '7' => ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
        '8' => [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
        '9' => [".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."],
        ':' => [".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."],
        ';' => [".....", ".##..", ".##..", ".....", ".##..", "..#..", ".#..."],
        '<' => ["...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."],
        '=' => [".....", ".....", "#####", ".....", "#####", ".....", "....."],
        '>' => [".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."],
        '?' => [".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."],
        '@' => [".###.", "#...#", "....#", ".##.#", "#.#.#", "#.#.#", ".###."],
        'A' => [".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"],
        'B' => ["####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."],
        'C' => [".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."],
        'D' => ["###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."],
        'E' => ["#####", "#....", "#....", "####.", "#....", "#....", "#####"],
        'F' => ["#####", "#....", "#....", "####.", "#....", "#....", "#...."],
        'G' => [".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"],
        'H' => ["#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"],
        'I' => [".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."],
        'J' => ["..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."],
        'K' => ["#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"],
        'L' => ["#....", "#....", "#....", "#....", "#....", "#....", "#####"],
        'M' => ["#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"],
        'N' => ["#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"],
        'O' => [".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."],
        'P' => ["####.", "#...#", "#...#", "####.", "#....", "#....", "#...."],
        'Q' => [".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"],
        'R' => ["####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"],
        'S' => [".####", "#....", "#....", ".###.", "....#", "....#", "####."],
        'T' => ["#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."],
        'U' => ["#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."],
        'V' => ["#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."],
        'W' => ["#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."],
        'X' => ["#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"],
        'Y' => ["#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."],
        'Z' => ["#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"],
        '[' => [".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###."],
        '\\' => [".....", "#....", ".#...", "..#..", "...#.", "....#", "....."],
        ']' => [".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###."],
        '^' => ["..#..", ".#.#.", "#...#", ".....", ".....", ".....", "....."],
        '_' => [".....", ".....", ".....", ".....", ".....", ".....", "#####"],
        '`' => [".#...", "..#..", ".....", ".....", ".....", ".....", "....."],
        'a' => [".....", ".....", ".###.", "....#", ".####", "#...#", ".####"],
        'b' => ["#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."],
        'c' => [".....", ".....", ".###.", "#....", "#....", "#...#", ".###."],
        'd' => ["....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"],
        'e' => [".....", ".....", ".###.", "#...#", "#####", "#....", ".###."],
        'f' => ["..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."],
        'g' => [".####", "#...#", "#...#", ".####", "....#", "#...#", ".###."],
        'h' => ["#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"],
        'i' => ["..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."],
        'j' => ["...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.."],
        'k' => ["#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."],
        'l' => [".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."],
        'm' => [".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"],
        'n' => [".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"],
        'o' => [".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."],
        'p' => ["####.", "#...#", "#...#", "####.", "#....", "#....", "#...."],
        'q' => [".####", "#...#", "#...#", ".####", "....#", "....#", "....#"],
        'r' => [".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."],
        's' => [".....", ".....", ".###.", "#....", ".###.", "....#", "####."],
        't' => [".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."],
        'u' => [".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"],
        'v' => [".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."],
        'w' => [".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."],
        'x' => [".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"],
        'y' => ["#...#", "#...#", "#...#", ".####", "....#", "#...#", ".###."],
        'z' => [".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"],
        '{' => ["...#.", "..#..", "..#..", ".#...", "..#..", "..#..", "...#."],
        '|' => ["..#..", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."],
        '}' => [".#...", "..#..", "..#..", "...#.", "..#..", "..#..", ".#..."],
        '~' => [".....", ".....", ".#...", "#.#.#", "...#.", ".....", "....."],
        'µ' => [".....", ".....", "#...#", "#...#", "#..##", "###.#", "#...."],
        '×' => [".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "....."],
        '≤' => ["...#.", "..#..", ".#...", "..#..", "...#.", ".....", ".####"],
        '≥' => [".#...", "..#..", "...#.", "..#..", ".#...", ".....", "####."],
        _ => ["#####", "#...#", "#...#", "#...#", "#...#", "#...#", "#####"],
    };
    let mut g = [0u8; 7];
    for (i, r) in rows.iter().enumerate() {
        g[i] = r.bytes().fold(0, |acc, b| (acc << 1) | u8::from(b == b'#'));
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_decodes_to_the_canvas() {
        let mut c = Canvas::new(7, 5);
        c.set(3, 2, PALETTE[0]);
        let bytes = c.png();
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((info.width, info.height, info.color_type), (7, 5, png::ColorType::Rgb));
        assert_eq!(&pixels[..info.buffer_size()], &c.px[..]);
    }

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::linear("x", 0.0, 9.3);
        assert_eq!(a.ticks.first().map(|t| t.1.as_str()), Some("0"));
        assert!(a.ticks.iter().all(|(v, _)| (v / 2.0).fract() == 0.0));
        let b = Axis::linear("y", 0.0, 0.33);
        assert!(b.ticks.iter().any(|(_, l)| l == "0.05" || l == "0.1" || l == "0.10"), "{:?}", b.ticks);
    }
}
