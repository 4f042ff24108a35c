//! steadyhud's GL library, `libsteadyhud_gl.so`: preloaded into an OpenGL
//! game (`steadyhud run` sets `LD_PRELOAD`), it timestamps every GLX and
//! EGL swap into the capture core (`steadyhud_capture`: the same session
//! log, rolling metrics, control socket, system readings, frame cap as the
//! Vulkan layer) and draws the same HUD with GL.
//!
//! Modules: [`hooks`] (the exported symbols and the one hook table),
//! [`real`] (the real functions and glibc's `dlsym`), [`swap`] (one flow
//! per swap), [`process`] (the process's one record and its windows and
//! contexts), [`path`] (who measures a context: this library or, for GL on
//! Vulkan, the layer), [`hud`] (the GL renderer and the saved game state),
//! [`wayland`] (EGL displays on Wayland, for the hotkeys).

pub mod hooks;
pub mod hud;
pub mod path;
pub mod process;
pub mod real;
pub mod swap;
pub mod wayland;
