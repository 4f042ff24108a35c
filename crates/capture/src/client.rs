//! The one [`Client`] record of the process: what the Vulkan layer and the
//! GL library both know of it and set up the same way (identity, config,
//! HUD switches, frame cap (its placement: [`Client::cap_at`]), test faults, the display
//! and input sources (their calls: `crate::sources`), the analysis thread), with one exit path, one
//! process-exit hook and one fork check. Each graphics API keeps only what
//! is its own beside it: the layer its dispatch, devices and swapchains
//! (`src/layer/state.rs`), the GL library its contexts and windows
//! (`crates/gl/src/process.rs`).
//!
//! The record is two floors: its data (`crate::client_state`: identity,
//! config, HUD, cap, faults, sources), which the analysis thread reads,
//! and this top, which owns the analysis thread, the fork flag and the
//! exit path and reads as its data (`Deref`). So the analysis never
//! imports the record that runs it.
//!
//! It is the capture core's only global (docs/design.md, "Where state
//! lives"). Each shared library links its own copy of this crate, so the
//! layer and the GL library in one process (a GL game on zink) each have
//! their own record, as they have their own logs.

use crate::analysis::{Analysis, StreamSpec};
use crate::client_state::ClientState;
use crate::faults::Faults;
use crate::guard;
use crate::identity::Identity;
use crate::rings::Stream;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use steadyhud_config::{Config, LimitMethod};
use steadyhud_log::Api;

/// What the process's client (the Vulkan layer or the GL library) holds:
/// its data ([`ClientState`], which the analysis thread reads; every field
/// of it reads through this record), the analysis thread, and whose it is.
pub struct Client {
    state: ClientState,
    pub analysis: Analysis,
    /// The process that set the client up.
    pid: u32,
    /// Set in a child forked without exec: its copy of this record (locks
    /// another thread held at the fork included) is not its own.
    forked: AtomicBool,
}

impl Deref for Client {
    type Target = ClientState;
    #[inline]
    fn deref(&self) -> &ClientState {
        &self.state
    }
}

static CLIENT: OnceLock<Client> = OnceLock::new();

/// `pthread_atfork`'s child handler: the child's record is its parent's.
extern "C" fn forked_child() {
    if let Some(c) = CLIENT.get() {
        c.forked.store(true, Ordering::Relaxed);
    }
}

/// The process's client record for `api`, set up on first use (config
/// warnings printed once). Every later call returns the same record.
pub fn client(api: Api) -> &'static Client {
    CLIENT.get_or_init(|| Client::of_this_process(api))
}

/// The client record if it was set up, in the process that set it up (for
/// exit paths and hooks that must not set it up; `None` in a forked child).
pub fn existing() -> Option<&'static Client> {
    CLIENT.get().filter(|c| c.is_own())
}

impl Client {
    fn of_this_process(api: Api) -> Client {
        let Identity {
            name,
            config,
            left_alone,
        } = Identity::of_this_process();
        // The Vulkan loader applies the layer manifest's
        // `disable_environment` itself, to the implicit layer only: a layer
        // enabled explicitly runs whatever it says (the present-cost bench
        // loads it so). A preloaded library has no loader to ask.
        let disabled =
            api == Api::OpenGl && std::env::var("DISABLE_STEADYHUD").as_deref() == Ok("1");
        if disabled {
            guard::say(format_args!(
                "steadyhud: DISABLE_STEADYHUD=1: steadyhud stays out of this process"
            ));
        }
        // SAFETY: registers a handler that only stores an atomic.
        unsafe { libc::pthread_atfork(None, None, Some(forked_child)) };
        let left_alone = left_alone.is_some() || disabled;
        Client::with(name, api, config, left_alone, Faults::from_env())
    }

    /// The record, its sources and analysis thread not started.
    fn with(name: String, api: Api, config: Config, left_alone: bool, faults: Faults) -> Client {
        Client {
            state: ClientState::new(name, api, config, left_alone, faults),
            analysis: Analysis::default(),
            pid: std::process::id(),
            forked: AtomicBool::new(false),
        }
    }

    /// Whether this record belongs to the running process (false in a
    /// child forked without exec, where every hook passes through).
    #[inline]
    pub fn is_own(&self) -> bool {
        !self.forked() && self.pid == std::process::id()
    }

    /// Whether this is a child forked without exec (its copy of the
    /// record, locks included, is its parent's: every hook passes through).
    #[inline]
    pub fn forked(&self) -> bool {
        self.forked.load(Ordering::Relaxed)
    }

    /// Whether this client measures and draws at all (not left alone, not
    /// a forked child's copy).
    #[inline]
    pub fn active(&self) -> bool {
        !self.left_alone && !self.forked()
    }

    /// The frame cap's wait on one side of a present or swap: the cap in
    /// force when its wait goes `after` the real call (the wait starts the
    /// next frame) or before it (`fps_limit_method=early`: the wait ends
    /// this frame); `None` when there is no cap or it waits on the other
    /// side. The Vulkan present and the GL swap both place it by this.
    #[inline]
    pub fn cap_at(&self, after: bool) -> Option<u32> {
        let fps = self.limit.fps();
        let early = self.config.fps_limit_method == LimitMethod::Early;
        (fps != 0 && after != early).then_some(fps)
    }

    /// A new capture stream, as `spec` says, fed to the analysis thread.
    pub fn new_stream(&'static self, spec: StreamSpec) -> Arc<Stream> {
        self.analysis.new_stream(&self.state, spec)
    }

    /// The exit path: finishes every session log and joins the analysis
    /// thread, in the process that set the client up only.
    pub fn finish_at_exit(&self) {
        if self.is_own() {
            guard::contain((), || self.analysis.shutdown_at_exit());
        }
    }
}

/// Runs from `.fini_array` at process exit or library unload (also after
/// `exit()` without destroying anything): finishes the session logs and
/// joins the analysis thread. Touches nothing in a forked child (a lock
/// another thread of the parent held at the fork would never be released
/// there) or when no client was ever set up.
extern "C" fn on_unload() {
    if let Some(c) = existing() {
        c.finish_at_exit();
    }
}

#[used]
#[link_section = ".fini_array"]
static ON_UNLOAD: extern "C" fn() = on_unload;
