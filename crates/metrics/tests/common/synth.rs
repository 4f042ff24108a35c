//! A generator of benchmark-like runs for the comparison's calibration and
//! speed: frame times around a run's own level (runs differ, as real
//! benchmark runs do), autocorrelated (an AR(1) walk of the log frame
//! time: scenes get heavier and lighter), with occasional stutters (a
//! frame 3–6 times its neighbours).

use steadyhud_metrics::{summarize, Options};

/// What a generator draws.
#[derive(Clone, Copy, Debug)]
pub struct Synth {
    /// Mean frame time, ms.
    pub frame_ms: f64,
    /// Run-to-run spread of the level: sd of its log.
    pub run_sd: f64,
    /// AR(1) of the log frame time: coefficient and innovation sd.
    pub phi: f64,
    pub noise_sd: f64,
    /// Chance of a stutter per frame, and the run-to-run spread of that
    /// chance (sd of its log).
    pub stutter_p: f64,
    pub stutter_run_sd: f64,
    pub frames: usize,
}

impl Default for Synth {
    fn default() -> Self {
        Synth {
            frame_ms: 1000.0 / 60.0,
            run_sd: 0.03,
            phi: 0.95,
            noise_sd: 0.02,
            stutter_p: 0.004,
            stutter_run_sd: 0.2,
            frames: 1800,
        }
    }
}

/// A run: its frames (ns) and its stutters as the metrics find them.
pub struct Run {
    pub durations_ns: Vec<u64>,
    pub stutter_frames: Vec<usize>,
}

impl Run {
    pub fn input(&self) -> steadyhud_metrics::bootstrap::RunInput<'_> {
        steadyhud_metrics::bootstrap::RunInput {
            durations_ns: &self.durations_ns,
            stutter_frames: &self.stutter_frames,
            target_fps: 60,
        }
    }
}

fn normal(rng: &mut fastrand::Rng) -> f64 {
    // Box–Muller.
    let (u, v) = (1.0 - rng.f64(), rng.f64());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

impl Synth {
    /// One run of seed `seed`; `stutter_scale` multiplies the chance of a
    /// stutter, `stretch` every frame's time.
    pub fn run(&self, seed: u64, stutter_scale: f64, stretch: f64) -> Run {
        let mut rng = fastrand::Rng::with_seed(seed);
        let level = self.frame_ms.ln() + self.run_sd * normal(&mut rng);
        let p = self.stutter_p * stutter_scale * (self.stutter_run_sd * normal(&mut rng)).exp();
        let stationary = self.noise_sd / (1.0 - self.phi * self.phi).sqrt();
        let mut x = stationary * normal(&mut rng);
        let durations_ns: Vec<u64> = (0..self.frames)
            .map(|_| {
                x = self.phi * x + self.noise_sd * normal(&mut rng);
                let mut ms = (level + x).exp() * stretch;
                if rng.f64() < p {
                    ms *= 3.0 + 3.0 * rng.f64();
                }
                (ms * 1e6) as u64
            })
            .collect();
        let stutter_frames = summarize(&durations_ns, &Options::default())
            .map(|s| s.stutter_frames)
            .unwrap_or_default();
        Run {
            durations_ns,
            stutter_frames,
        }
    }

    /// `n` runs from seeds `seed`, `seed + 1`, ….
    pub fn runs(&self, n: usize, seed: u64, stutter_scale: f64, stretch: f64) -> Vec<Run> {
        (0..n as u64)
            .map(|i| self.run(seed * 1000 + i, stutter_scale, stretch))
            .collect()
    }
}
