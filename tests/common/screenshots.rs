//! Screenshots: taking one of a harness's X screen, reading pixels,
//! comparing images and regions, and saving them as PNG for a human.

use super::Harness;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An RGB screenshot.
pub struct Screenshot {
    pub width: u32,
    pub height: u32,
    /// Row-major RGB, 3 bytes per pixel.
    pub rgb: Vec<u8>,
}

impl Screenshot {
    /// Parses binary PPM (P6, maxval 255).
    pub fn from_ppm(data: &[u8]) -> Result<Screenshot, String> {
        let mut fields = Vec::new();
        let mut i = 0;
        while fields.len() < 4 {
            while i < data.len() && data[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < data.len() && data[i] == b'#' {
                while i < data.len() && data[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            let s = i;
            while i < data.len() && !data[i].is_ascii_whitespace() {
                i += 1;
            }
            if s == i {
                return Err("truncated PPM header".into());
            }
            fields.push(String::from_utf8_lossy(&data[s..i]).into_owned());
        }
        i += 1; // the single whitespace after maxval
        if fields[0] != "P6" {
            return Err(format!("not a P6 PPM: {}", fields[0]));
        }
        let w: u32 = fields[1].parse().map_err(|_| "bad width")?;
        let h: u32 = fields[2].parse().map_err(|_| "bad height")?;
        if fields[3] != "255" {
            return Err(format!("unsupported maxval {}", fields[3]));
        }
        let need = (w * h * 3) as usize;
        let rgb = data.get(i..i + need).ok_or("truncated PPM data")?.to_vec();
        Ok(Screenshot {
            width: w,
            height: h,
            rgb,
        })
    }

    /// The (r, g, b) at (x, y).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        assert!(
            x < self.width && y < self.height,
            "pixel ({x},{y}) outside {}x{}",
            self.width,
            self.height
        );
        let o = ((y * self.width + x) * 3) as usize;
        [self.rgb[o], self.rgb[o + 1], self.rgb[o + 2]]
    }

    /// Number of pixels in the rectangle that differ from `other`'s by more
    /// than `tolerance` in any channel.
    pub fn diff_count(
        &self,
        other: &Screenshot,
        x0: u32,
        y0: u32,
        w: u32,
        h: u32,
        tolerance: u8,
    ) -> usize {
        let mut n = 0;
        for y in y0..(y0 + h).min(self.height).min(other.height) {
            for x in x0..(x0 + w).min(self.width).min(other.width) {
                let a = self.pixel(x, y);
                let b = other.pixel(x, y);
                if a.iter().zip(&b).any(|(p, q)| p.abs_diff(*q) > tolerance) {
                    n += 1;
                }
            }
        }
        n
    }

    /// Fraction of the pixels of the rectangle (clipped to the image)
    /// within `tolerance` of `rgb` in every channel.
    pub fn fraction_close(
        &self,
        x0: u32,
        y0: u32,
        w: u32,
        h: u32,
        rgb: [u8; 3],
        tolerance: u8,
    ) -> f64 {
        let (x1, y1) = ((x0 + w).min(self.width), (y0 + h).min(self.height));
        let area = u64::from(x1.saturating_sub(x0)) * u64::from(y1.saturating_sub(y0));
        if area == 0 {
            return 0.0;
        }
        let n = (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .filter(|&(x, y)| close(self.pixel(x, y), rgb, tolerance))
            .count();
        n as f64 / area as f64
    }

    /// Keeps the screenshot as `target/hud-shots/<name>.png` for a human to
    /// look at (printed on stderr); its path.
    #[allow(dead_code)]
    pub fn keep(&self, name: &str) -> PathBuf {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../hud-shots");
        std::fs::create_dir_all(&dir).expect("create target/hud-shots");
        let png = dir.join(format!("{name}.png"));
        self.save_png(&png);
        eprintln!("screenshot: {}", png.display());
        png
    }

    /// Saves as PNG (via ImageMagick) for looking at a failure.
    pub fn save_png(&self, path: &Path) {
        let mut ppm = format!("P6\n{} {}\n255\n", self.width, self.height).into_bytes();
        ppm.extend_from_slice(&self.rgb);
        let tmp = path.with_extension("ppm");
        std::fs::write(&tmp, ppm).expect("write ppm");
        let _ = Command::new("convert").arg(&tmp).arg(path).status();
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Whether `px` is within `tol` of `want` in every channel.
pub fn close(px: [u8; 3], want: [u8; 3], tol: u8) -> bool {
    px.iter().zip(&want).all(|(a, b)| a.abs_diff(*b) <= tol)
}

impl Harness {
    /// A screenshot of the whole root window.
    pub fn screenshot(&self) -> Screenshot {
        let out = Command::new("import")
            .args([
                "-display",
                &self.xvfb.display(),
                "-window",
                "root",
                "-depth",
                "8",
                "ppm:-",
            ])
            .stdin(Stdio::null())
            .output()
            .expect("run ImageMagick `import` (imagemagick package)");
        assert!(
            out.status.success(),
            "import failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Screenshot::from_ppm(&out.stdout).expect("parse the PPM screenshot from import")
    }
}
