//! The layer's end of the control socket ([`steadyhud_control`]): started with
//! the analysis thread, polled by it every tick, and what each request does
//! here (HUD visibility, the frame cap, marks in the logs, status).
//!
//! The requests act on state the hotkeys already share with the present
//! path (the HUD flag and the frame cap are atomics) or on state the
//! analysis thread owns (logs, rolling windows), so answering never takes a
//! lock the present path takes.

use crate::client_state::ClientState;
use crate::guard;
use crate::hud_state::Toast;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use steadyhud_config::hud::PRESETS;
use steadyhud_control::protocol::{HudChange, Reply, Request, HELP};
use steadyhud_control::replies::{
    self, HelpReply, HistogramReply, HudReply, LimitReply, MarkReply, MarkedLog, PresetReply,
    WindowHistogram, WindowStatus,
};
use steadyhud_control::server::Server;
use steadyhud_sys::lock::Recover;

/// How long a status reply's stream part is reused: a flood of `status`
/// requests costs one computation per this period.
const STATUS_FRESH: Duration = Duration::from_millis(100);

/// Where a mark landed.
#[derive(Clone, Debug)]
pub struct MarkPlaced {
    pub log: PathBuf,
    /// The first frame of the marked segment.
    pub frame: u64,
}

/// What the answers need of the analysis thread's streams.
pub trait ControlStreams {
    /// Brings every stream up to date, writes the mark into every open log
    /// and says where it went.
    fn mark(&mut self, text: &str) -> Vec<MarkPlaced>;
    /// Every stream's status.
    fn status(&mut self) -> Vec<WindowStatus>;
    /// Every stream's totals and time histogram since its first frame.
    fn histograms(&mut self) -> Vec<WindowHistogram>;
    /// Brings every stream up to date (drains its ring; a changed frame
    /// cap is logged at the frame count this reaches).
    fn catch_up(&mut self);
}

/// The served socket and the cached status.
pub struct Control {
    server: Server,
    status: Option<(Instant, Vec<WindowStatus>)>,
}

impl Control {
    /// Serves `$XDG_RUNTIME_DIR/steadyhud/<pid>.sock` unless the config
    /// turns it off; one `steadyhud:` line when it cannot.
    pub fn start(client: &'static ClientState) -> Option<Control> {
        if !client.config.control {
            return None;
        }
        let dir = match steadyhud_control::socket_dir() {
            Ok(d) => d,
            Err(e) => {
                guard::say(format_args!("steadyhud: no control socket: {e}"));
                return None;
            }
        };
        match Server::bind(&dir, std::process::id()) {
            Ok(server) => Some(Control {
                server,
                status: None,
            }),
            Err(e) => {
                guard::say(format_args!("steadyhud: no control socket: {e}"));
                None
            }
        }
    }

    /// The sockets to wait for, and whether requests wait already
    /// ([`Server::interest`]).
    pub fn interest(&self, fds: &mut Vec<libc::pollfd>) -> bool {
        self.server.interest(fds)
    }

    /// Whether connections are open (they time out when idle).
    pub fn has_connections(&self) -> bool {
        self.server.connections() > 0
    }

    /// Serves what is ready; `streams` is locked only for requests that
    /// need it (`mark`, and `status` when its cache is stale).
    pub fn poll<S: ControlStreams>(&mut self, client: &'static ClientState, streams: &Mutex<S>) {
        let now = Instant::now();
        let cache = &mut self.status;
        self.server.poll(now, &mut |request| {
            answer(request, client, now, cache, streams)
        });
    }
}

fn answer<S: ControlStreams>(
    request: Request,
    client: &'static ClientState,
    now: Instant,
    cache: &mut Option<(Instant, Vec<WindowStatus>)>,
    streams: &Mutex<S>,
) -> Reply {
    let hud = &client.hud;
    let on_off = |on: bool| if on { "on" } else { "off" }.to_string();
    match request {
        Request::Help => replies::ok(&HelpReply {
            requests: HELP.iter().map(|r| r.to_string()).collect(),
        }),
        Request::Hud(change) => {
            let on = match change {
                HudChange::On => true,
                HudChange::Off => false,
                HudChange::Toggle => !hud.visible(),
            };
            hud.set_visible(on);
            replies::ok(&HudReply { hud: on_off(on) })
        }
        Request::Histogram => replies::ok(&HistogramReply {
            pid: std::process::id(),
            exe: client.name.to_string(),
            windows: streams.lock_or_recover().histograms(),
        }),
        Request::Preset(n) => {
            hud.set_preset(n);
            replies::ok(&PresetReply {
                preset: n,
                name: PRESETS[usize::from(n) % PRESETS.len()].name.to_string(),
            })
        }
        Request::Limit(fps) => {
            // Frames presented before the change count as before it: the
            // log's `# fps_limit` line then names the frame exactly.
            let mut streams = streams.lock_or_recover();
            streams.catch_up();
            client.limit.set(fps.unwrap_or(0));
            streams.catch_up();
            hud.say(Toast::Cap(fps.unwrap_or(0)));
            replies::ok(&LimitReply {
                fps_limit: fps.unwrap_or(0),
            })
        }
        Request::Mark(text) => {
            let placed = streams.lock_or_recover().mark(&text);
            // A status asked after the mark must count its frames.
            *cache = None;
            if placed.is_empty() {
                return Reply::Err(
                    "no session log is open yet (nothing presented, or logging is off)".into(),
                );
            }
            let logs = placed
                .iter()
                .map(|m| MarkedLog {
                    log: m.log.display().to_string(),
                    frame: m.frame,
                })
                .collect();
            replies::ok(&MarkReply { mark: text, logs })
        }
        Request::Status => {
            let windows = match cache {
                Some((at, w)) if now.duration_since(*at) < STATUS_FRESH => w.clone(),
                _ => {
                    let w = streams.lock_or_recover().status();
                    *cache = Some((now, w.clone()));
                    w
                }
            };
            replies::ok(&status(client, windows))
        }
    }
}

/// The `status` reply: the process, the HUD and cap in force, and each
/// window; `frames`, `log` and `fps` repeat the first window's.
fn status(client: &'static ClientState, windows: Vec<WindowStatus>) -> replies::Status {
    let first = windows.first();
    replies::Status {
        pid: std::process::id(),
        exe: client.name.to_string(),
        hud: if client.hud.visible() { "on" } else { "off" }.to_string(),
        preset: client.hud.preset(),
        fps_limit: client.limit.fps(),
        frames: first.map_or(0, |w| w.frames),
        log: first.and_then(|w| w.log.clone()),
        fps: first
            .and_then(|w| w.metrics.as_ref())
            .and_then(|m| m.number("average_fps")),
        windows,
    }
}
