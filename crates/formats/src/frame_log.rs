//! What every reader returns ([`FrameLog`]: durations and where they came
//! from) and what it is asked for ([`ReadOptions`], [`Filter`]).

/// A log format `analyze` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    SteadyHud,
    PresentMon,
    /// CapFrameX and OCAT (PresentMon columns plus metadata).
    CapFrameX,
    MangoHud,
    Plain,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::SteadyHud,
        Format::PresentMon,
        Format::CapFrameX,
        Format::MangoHud,
        Format::Plain,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Format::SteadyHud => "steadyhud",
            Format::PresentMon => "presentmon",
            Format::CapFrameX => "capframex",
            Format::MangoHud => "mangohud",
            Format::Plain => "plain",
        }
    }
}

/// What was read and from where.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    pub format: Format,
    /// Human description, e.g. "PresentMon 2.x CSV".
    pub detail: String,
    /// Application / process the frames belong to, when the log says.
    pub source: Option<String>,
    /// Column the frame times were taken from.
    pub column: String,
    /// Things the reader decided or skipped (other swapchains, cut-off last
    /// line, unit detection, ring overflows …).
    pub notes: Vec<String>,
    /// Statistics counter columns of a steadyhud session log (`None` for
    /// other formats and logs written without counters).
    pub counters: Option<steadyhud_counters::CounterColumns>,
    /// Per-frame GPU busy (and wait) time, when the log has such a column
    /// (PresentMon 2.x `MsGPUBusy`/`GPUBusy`, 1.x `msGPUActive`, steadyhud
    /// `gpu_busy_ms`); frames without a value hold
    /// [`steadyhud_metrics::gpu::NO_DATA`].
    pub gpu: Option<steadyhud_metrics::gpu::GpuColumns>,
    /// Per-frame system readings (CPU/GPU load, clocks, temperatures,
    /// power, memory) and GPU throttle reasons, when the log has such
    /// columns (steadyhud `gpu_power_w`…, MangoHud `gpu_power`…,
    /// PresentMon 2 `GPUPower`…), in steadyhud's units; NaN = no reading.
    pub sensors: Option<steadyhud_metrics::sensors::SensorColumns>,
    /// Per-frame display columns (display interval, dropped flag,
    /// animation error, latencies), when a PresentMon-style capture has a
    /// display-interval column (`MsBetweenDisplayChange`, `DisplayedTime`).
    pub display: Option<steadyhud_metrics::display::DisplayColumns>,
    /// Marks of a steadyhud session log (`steadyhud ctl mark`), in the
    /// order written; empty for other formats.
    pub marks: Vec<Mark>,
    /// The target frame rate a steadyhud session log records (its
    /// `# target_fps:` line, [`steadyhud_log::TARGET_FPS_PREFIX`]); `None`
    /// for other formats and older logs.
    pub target_fps: Option<u32>,
}

/// A named point of a session: the segment `text` starts at frame `frame`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Mark {
    pub frame: u64,
    pub text: String,
}

impl Mark {
    /// Reads the text after [`steadyhud_log::MARK_PREFIX`]:
    /// `TEXT at frame N` (the frame number is last, so the text may hold
    /// anything).
    pub fn parse(rest: &str) -> Option<Mark> {
        let (text, frame) = rest.trim_end().rsplit_once(" at frame ")?;
        Some(Mark {
            frame: frame.parse().ok()?,
            text: text.to_string(),
        })
    }
}

impl Meta {
    pub fn new(format: Format, detail: &str, column: &str) -> Meta {
        Meta {
            format,
            detail: detail.to_string(),
            source: None,
            column: column.to_string(),
            notes: Vec::new(),
            counters: None,
            gpu: None,
            sensors: None,
            display: None,
            marks: Vec::new(),
            target_fps: None,
        }
    }
}

/// Frame durations (ns, in order) and their metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameLog {
    pub durations_ns: Vec<u64>,
    pub meta: Meta,
}

/// Which frames of a multi-process PresentMon-style log to take. Empty:
/// the (process, swapchain) group with the most frames.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// Application name (case-insensitive) or process id.
    pub process: Option<String>,
    /// Swapchain address (hex; leading zeros and case ignored).
    pub swapchain: Option<String>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.process.is_none() && self.swapchain.is_none()
    }

    pub fn wants(&self, app: &str, pid: &str, swapchain: &str) -> bool {
        let process_ok = self
            .process
            .as_deref()
            .is_none_or(|p| p.eq_ignore_ascii_case(app) || p == pid);
        let swapchain_ok = self
            .swapchain
            .as_deref()
            .is_none_or(|s| norm_hex(s) == norm_hex(swapchain));
        process_ok && swapchain_ok
    }

    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = &self.process {
            parts.push(format!("process {p}"));
        }
        if let Some(s) = &self.swapchain {
            parts.push(format!("swapchain {s}"));
        }
        parts.join(", ")
    }
}

fn norm_hex(s: &str) -> String {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    let s = s.trim_start_matches('0');
    s.to_ascii_lowercase()
}

/// How to read a file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadOptions {
    /// `None`: detect from the content.
    pub format: Option<Format>,
    pub filter: Filter,
}
