//! The layer's last entry point: process exit or library unload.

use crate::guard;

/// Runs from `.fini_array` when the library is unloaded or the process
/// exits (also via `exit()` without destroying the instance): finishes the
/// session logs and joins the analysis thread. Returns at once, touching no
/// lock, in a forked child (a lock another thread of the parent held at
/// fork time would never be released there) and when the layer was never
/// set up. (With loader 1.3.239 glibc keeps the library mapped after the
/// loader's dlclose, so in practice this runs at process exit.)
extern "C" fn on_unload() {
    let Some(l) = crate::layer::state::existing() else {
        return;
    };
    if l.pid != std::process::id() {
        return;
    }
    guard::contain((), || l.analysis.shutdown_at_exit());
}

#[used]
#[link_section = ".fini_array"]
static ON_UNLOAD: extern "C" fn() = on_unload;
