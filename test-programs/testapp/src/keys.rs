//! `--type-keys N` (issue 50): types N key presses on the compositor's
//! seat through `zwp_virtual_keyboard_v1`, each stamped with the
//! CLOCK_MONOTONIC milliseconds of when it is sent, as a real keyboard's
//! events are (`wtype` stamps every key 0, which no reader can map to a
//! clock). The key is `a` on evdev code `--key-code` (1 unless told),
//! pressed then released 2 ms later; one press every `--key-gap-ms`.
//! Prints `testapp: typed K at MS` per key.

use crate::wayland::clock_ns;
use std::io::Write as _;
use std::os::fd::AsFd;
use std::time::Duration;
use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::{wl_registry, wl_seat};
use wayland_client::{delegate_noop, Connection, Dispatch};

/// The protocol's client code, generated from its XML.
#[allow(non_upper_case_globals, non_camel_case_types, clippy::all, dead_code)]
mod vk {
    use wayland_client;
    use wayland_client::protocol::*;
    pub mod __interfaces {
        use wayland_client::backend as wayland_backend;
        use wayland_client::protocol::__interfaces::*;
        wayland_scanner::generate_interfaces!("protocols/virtual-keyboard-unstable-v1.xml");
    }
    use self::__interfaces::*;
    wayland_scanner::generate_client_code!("protocols/virtual-keyboard-unstable-v1.xml");
}
use vk::zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1;
use vk::zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1;

/// A keymap of one key, `a` on evdev code `code` (xkb keycode code + 8).
fn keymap(code: u32) -> String {
    let xkb = code + 8;
    format!(
        "xkb_keymap {{\n\
    xkb_keycodes \"k\" {{ minimum = 8; maximum = {xkb}; <K1> = {xkb}; }};\n\
    xkb_types \"k\" {{}};\n\
    xkb_compatibility \"k\" {{}};\n\
    xkb_symbols \"k\" {{ key <K1> {{ [ a ] }}; }};\n\
}};\n"
    )
}

struct Nothing;

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for Nothing {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &wayland_client::QueueHandle<Self>,
    ) {
    }
}
delegate_noop!(Nothing: ignore wl_seat::WlSeat);
delegate_noop!(Nothing: ignore ZwpVirtualKeyboardManagerV1);
delegate_noop!(Nothing: ignore ZwpVirtualKeyboardV1);

/// Types `n` presses of `a` on evdev code `code`, one every `gap`.
pub fn type_keys(n: u32, gap: Duration, code: u32) -> Result<(), String> {
    let conn = Connection::connect_to_env().map_err(|e| format!("Wayland connect: {e}"))?;
    let (globals, mut queue) =
        registry_queue_init::<Nothing>(&conn).map_err(|e| format!("Wayland registry: {e}"))?;
    let qh = queue.handle();
    let seat: wl_seat::WlSeat = globals
        .bind(&qh, 1..=1, ())
        .map_err(|e| format!("wl_seat: {e}"))?;
    let manager: ZwpVirtualKeyboardManagerV1 = globals
        .bind(&qh, 1..=1, ())
        .map_err(|e| format!("zwp_virtual_keyboard_manager_v1: {e}"))?;
    let kb = manager.create_virtual_keyboard(&seat, &qh, ());
    let mut file = tempfile_keymap()?;
    let keymap = keymap(code);
    file.write_all(keymap.as_bytes())
        .and_then(|()| file.write_all(b"\0"))
        .map_err(|e| format!("keymap file: {e}"))?;
    kb.keymap(1, file.as_fd(), keymap.len() as u32 + 1);
    queue
        .roundtrip(&mut Nothing)
        .map_err(|e| format!("Wayland roundtrip: {e}"))?;
    let ms = || (clock_ns(libc::CLOCK_MONOTONIC) / 1_000_000) as u32;
    for k in 0..n {
        std::thread::sleep(gap);
        let t = ms();
        kb.key(t, code, 1);
        queue
            .roundtrip(&mut Nothing)
            .map_err(|e| format!("Wayland roundtrip: {e}"))?;
        println!("testapp: typed {k} at {t}");
        std::thread::sleep(Duration::from_millis(2));
        kb.key(ms(), code, 0);
        queue
            .roundtrip(&mut Nothing)
            .map_err(|e| format!("Wayland roundtrip: {e}"))?;
    }
    kb.destroy();
    queue
        .roundtrip(&mut Nothing)
        .map_err(|e| format!("Wayland roundtrip: {e}"))?;
    Ok(())
}

/// An unlinked file for the keymap (the compositor maps the fd).
fn tempfile_keymap() -> Result<std::fs::File, String> {
    let dir = std::env::var_os("XDG_RUNTIME_DIR").unwrap_or_else(|| "/tmp".into());
    let path = std::path::Path::new(&dir).join(format!("testapp-keymap-{}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| format!("keymap file {}: {e}", path.display()))?;
    let _ = std::fs::remove_file(&path);
    Ok(f)
}
