//! Headless-Chromium checks of a rendered report: screenshots, and a layout
//! probe that finds overlapping or cut-off text.
//!
//! Chromium lays text out with whatever fonts fontconfig offers it, and a
//! user's machine may have any: every run here is pinned to one of
//! [`Fonts::ALL`] (its own `FONTCONFIG_FILE` listing one font folder), so
//! a layout passes under DejaVu alone (a bare Debian) and under Noto (many
//! desktops, and games such as warzone2100 pull it in), whatever else
//! this machine has installed.
//!
//! The report itself has no script. The probe renders a copy with one
//! appended: it measures every line of HTML text (`Range.getClientRects`)
//! and every SVG `<text>` (its bounding box) after layout, and writes them
//! into the page as JSON, which `--dump-dom` hands back. The overlap test
//! runs here in Rust, so a failure names the texts involved.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Chromium, which `.ci/run` installs.
pub fn chromium() -> PathBuf {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("chromium is not installed: .ci/run installs it (apt-get install chromium)")
}

/// A set of fonts Chromium may use: the only folder its fontconfig lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fonts {
    /// DejaVu alone (`fonts-dejavu-core`), what a bare Debian has.
    DejaVu,
    /// Noto alone (`fonts-noto-core`): narrower letters, taller lines.
    Noto,
}

impl Fonts {
    /// The setups every layout test runs under.
    pub const ALL: [Fonts; 2] = [Fonts::DejaVu, Fonts::Noto];

    /// The font folder and the Debian package that fills it.
    fn folder(self) -> (&'static str, &'static str) {
        match self {
            Fonts::DejaVu => ("/usr/share/fonts/truetype/dejavu", "fonts-dejavu-core"),
            Fonts::Noto => ("/usr/share/fonts/truetype/noto", "fonts-noto-core"),
        }
    }

    /// A fontconfig file in `dir` that offers only this setup's folder
    /// (its cache in `dir` too); panics naming the package when the
    /// folder is missing.
    fn config(self, dir: &Path) -> PathBuf {
        let (folder, package) = self.folder();
        assert!(
            Path::new(folder).is_dir(),
            "{folder} is missing: .ci/run installs it (apt-get install {package})"
        );
        let file = dir.join(format!("fonts-{self:?}.conf"));
        let cache = dir.join(format!("fontcache-{self:?}"));
        std::fs::write(
            &file,
            format!(
                "<?xml version=\"1.0\"?>\n<!DOCTYPE fontconfig SYSTEM \"fonts.dtd\">\n\
                 <fontconfig><dir>{folder}</dir><cachedir>{}</cachedir></fontconfig>\n",
                cache.display()
            ),
        )
        .unwrap();
        file
    }
}

impl std::fmt::Display for Fonts {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "fonts: {} only", self.folder().1)
    }
}

/// Headless Chromium with a private profile, no network activity of its
/// own, and only the fonts of `fonts` (its fontconfig file beside the
/// profile).
pub fn chromium_cmd(profile: &Path, fonts: Fonts) -> Command {
    let dir = profile.parent().unwrap_or(profile);
    std::fs::create_dir_all(dir).unwrap();
    let mut c = Command::new(chromium());
    c.env("FONTCONFIG_FILE", fonts.config(dir));
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}-{fonts:?}", profile.display()));
    c
}

/// A screenshot of `html` in a `width`×`height` window.
pub fn screenshot(html: &Path, profile: &Path, png: &Path, width: u32, height: u32, fonts: Fonts) {
    let st = chromium_cmd(profile, fonts)
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(
        st.status.success() && png.exists(),
        "chromium took no screenshot: {}",
        String::from_utf8_lossy(&st.stderr)
    );
}

/// Pixels of the screenshot within a small distance of `rgb`.
pub fn count_colour(png_path: &Path, rgb: [u8; 3]) -> usize {
    let decoder = png::Decoder::new(std::fs::File::open(png_path).expect("screenshot"));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png data");
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| {
            p[..3]
                .iter()
                .zip(rgb)
                .all(|(&a, b)| (a as i32 - b as i32).abs() <= 24)
        })
        .count()
}

/// One measured piece of text: a line of an HTML text node, or an SVG
/// `<text>`; page coordinates in CSS pixels.
#[derive(Debug, Deserialize)]
pub struct TextBox {
    /// The text node or `<text>` element it belongs to (lines of one
    /// wrapped node never count as overlapping each other).
    pub node: u32,
    pub text: String,
    /// Index into [`Layout::svgs`] for SVG text.
    pub svg: Option<usize>,
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

/// An `<svg>` element's box.
#[derive(Debug, Deserialize)]
pub struct SvgBox {
    pub id: String,
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

/// What the probe measured.
#[derive(Debug, Deserialize)]
pub struct Layout {
    pub boxes: Vec<TextBox>,
    pub svgs: Vec<SvgBox>,
    /// The page's width including anything that sticks out to the right.
    pub scroll_width: f64,
    pub inner_width: f64,
    pub height: f64,
}

const PROBE: &str = r#"<script>(function(){
const boxes=[];let node=0;
const push=(r,text,svg)=>{if(r.width<0.5||r.height<0.5)return;boxes.push({node,text:text.slice(0,80),svg,x0:r.left+scrollX,y0:r.top+scrollY,x1:r.right+scrollX,y1:r.bottom+scrollY});};
const w=document.createTreeWalker(document.body,NodeFilter.SHOW_TEXT);
while(w.nextNode()){const n=w.currentNode;const p=n.parentElement;
 if(!n.textContent.trim()||!p||p.closest('svg')||p.closest('script'))continue;
 node++;const rg=document.createRange();rg.selectNodeContents(n);
 for(const r of rg.getClientRects())push(r,n.textContent.trim(),null);}
const svgs=[];
document.querySelectorAll('svg').forEach((s,k)=>{const r=s.getBoundingClientRect();
 svgs.push({id:s.id,x0:r.left+scrollX,y0:r.top+scrollY,x1:r.right+scrollX,y1:r.bottom+scrollY});
 s.querySelectorAll('text').forEach(t=>{node++;let txt='';
  t.childNodes.forEach(c=>{if(c.nodeType===3)txt+=c.textContent;});
  push(t.getBoundingClientRect(),txt,k);});});
const out={boxes,svgs,scroll_width:document.documentElement.scrollWidth,inner_width:innerWidth,height:document.documentElement.scrollHeight};
const pre=document.createElement('pre');pre.id='probe';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
})();</script>"#;

/// Lays `html` out in a window `width` pixels wide with `fonts` and
/// measures its text.
pub fn measure(html: &Path, profile: &Path, width: u32, fonts: Fonts) -> Layout {
    let page = std::fs::read_to_string(html).unwrap();
    let end = page.rfind("</body>").expect("report has a </body>");
    let probed = html.with_extension("probe.html");
    std::fs::write(&probed, format!("{}{PROBE}{}", &page[..end], &page[end..])).unwrap();
    let out = chromium_cmd(profile, fonts)
        .arg(format!("--window-size={width},1000"))
        .arg("--dump-dom")
        .arg(format!("file://{}", probed.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"probe\">").unwrap_or_else(|| {
        panic!(
            "the probe did not run: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    }) + "<pre id=\"probe\">".len();
    let json = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    // --dump-dom escapes text content; JSON has no other entities.
    let json = json
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("probe output: {e}: {json:.200}"))
}

/// Two boxes overlap when they share more than this many pixels both ways:
/// the boxes are font boxes (ascent to descent), and labels on adjacent
/// 12-pixel rows touch by a fraction of a pixel without their glyphs meeting.
const SLACK: f64 = 2.0;

impl Layout {
    /// Pairs of texts that overlap (texts of different nodes only).
    pub fn overlaps(&self) -> Vec<(&TextBox, &TextBox)> {
        let mut order: Vec<&TextBox> = self.boxes.iter().collect();
        order.sort_by(|a, b| a.y0.total_cmp(&b.y0));
        let mut out = Vec::new();
        // Sweep down the page: only boxes that start above a box's bottom
        // can overlap it.
        for (i, a) in order.iter().enumerate() {
            for b in &order[i + 1..] {
                if b.y0 >= a.y1 - SLACK {
                    break;
                }
                let dx = a.x1.min(b.x1) - a.x0.max(b.x0);
                let dy = a.y1.min(b.y1) - a.y0.max(b.y0);
                if a.node != b.node && dx > SLACK && dy > SLACK {
                    out.push((*a, *b));
                }
            }
        }
        out
    }

    /// SVG texts that stick out of their `<svg>` (SVG clips them).
    pub fn clipped(&self) -> Vec<&TextBox> {
        self.boxes
            .iter()
            .filter(|b| {
                b.svg.is_some_and(|k| {
                    let s = &self.svgs[k];
                    b.x0 < s.x0 - 1.0 || b.x1 > s.x1 + 1.0 || b.y0 < s.y0 - 1.0 || b.y1 > s.y1 + 1.0
                })
            })
            .collect()
    }

    /// Texts that reach past the window's right edge.
    pub fn off_page(&self) -> Vec<&TextBox> {
        self.boxes
            .iter()
            .filter(|b| b.x1 > self.inner_width + 1.0)
            .collect()
    }

    /// What makes the page hard to read, one line per kind of problem,
    /// naming the first offenders: overlapping texts, texts clipped by their
    /// chart, texts past the window's edge.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let overlaps = self.overlaps();
        if !overlaps.is_empty() {
            let show: Vec<String> = overlaps
                .iter()
                .take(8)
                .map(|(a, b)| {
                    format!(
                        "{:?} at ({:.0},{:.0}) over {:?} at ({:.0},{:.0})",
                        a.text, a.x0, a.y0, b.text, b.x0, b.y0
                    )
                })
                .collect();
            out.push(format!(
                "{} overlapping texts, e.g. {}",
                overlaps.len(),
                show.join("; ")
            ));
        }
        let clipped: Vec<&str> = self.clipped().iter().map(|b| b.text.as_str()).collect();
        if !clipped.is_empty() {
            out.push(format!("texts cut by their chart: {clipped:?}"));
        }
        let off: Vec<&str> = self.off_page().iter().map(|b| b.text.as_str()).collect();
        if !off.is_empty() || self.scroll_width > self.inner_width {
            out.push(format!(
                "page {} px wide in a {} px window; texts past the edge: {off:?}",
                self.scroll_width, self.inner_width
            ));
        }
        out
    }

    /// The width of the page's widest text box: the same page under two
    /// font setups gives two widths when the pin took effect.
    pub fn widest_text(&self) -> f64 {
        self.boxes.iter().map(|b| b.x1 - b.x0).fold(0.0, f64::max)
    }

    /// Panics with [`Layout::problems`] unless there are none.
    pub fn assert_readable(&self, what: &str) {
        let p = self.problems();
        assert!(p.is_empty(), "{what}:\n{}", p.join("\n"));
    }
}
