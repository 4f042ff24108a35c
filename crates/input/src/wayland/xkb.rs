//! libxkbcommon, loaded at run time with `libloading` (no build-time
//! dependency): the few functions the keyboard binding uses to turn a
//! compositor's keymap text into keycodes.

use std::ffi::{c_char, c_int, c_void};
use steadyhud_dl::{sym, LoadError};

/// `libxkbcommon.so.0`.
pub const XKB_LIB: &str = "libxkbcommon.so.0";

pub type XkbContext = c_void;
pub type XkbKeymap = c_void;
/// `XKB_KEYSYM_CASE_INSENSITIVE`.
const KEYSYM_CASE_INSENSITIVE: c_int = 1;
/// `XKB_CONTEXT_NO_DEFAULT_INCLUDES | XKB_CONTEXT_NO_ENVIRONMENT_NAMES`: a
/// compositor's keymap text is self-contained.
const CONTEXT_FLAGS: c_int = 1 | 2;
/// `XKB_KEYMAP_FORMAT_TEXT_V1`.
const FORMAT_TEXT_V1: c_int = 1;
/// `XKB_LOG_LEVEL_CRITICAL`: no xkbcommon warnings on the game's stderr.
const LOG_CRITICAL: c_int = 10;

/// The libxkbcommon functions we use.
pub struct Xkb {
    context_new: unsafe extern "C" fn(c_int) -> *mut XkbContext,
    context_unref: unsafe extern "C" fn(*mut XkbContext),
    set_log_level: unsafe extern "C" fn(*mut XkbContext, c_int),
    keymap_from_buffer:
        unsafe extern "C" fn(*mut XkbContext, *const c_char, usize, c_int, c_int) -> *mut XkbKeymap,
    keymap_unref: unsafe extern "C" fn(*mut XkbKeymap),
    min_keycode: unsafe extern "C" fn(*mut XkbKeymap) -> u32,
    max_keycode: unsafe extern "C" fn(*mut XkbKeymap) -> u32,
    num_layouts_for_key: unsafe extern "C" fn(*mut XkbKeymap, u32) -> u32,
    num_levels_for_key: unsafe extern "C" fn(*mut XkbKeymap, u32, u32) -> u32,
    syms_by_level: unsafe extern "C" fn(*mut XkbKeymap, u32, u32, u32, *mut *const u32) -> c_int,
    keysym_from_name: unsafe extern "C" fn(*const c_char, c_int) -> u32,
    _lib: libloading::Library,
}

// SAFETY: function pointers kept valid by `_lib`; the functions used on
// shared objects (keymap queries) are read-only, and contexts and keymaps
// are only ever created and dropped under our state's mutex.
unsafe impl Send for Xkb {}
// SAFETY: as above.
unsafe impl Sync for Xkb {}

impl Xkb {
    /// Loads `libxkbcommon.so.0`.
    pub fn load() -> Result<Xkb, LoadError> {
        let l = XKB_LIB;
        let lib = steadyhud_dl::open(l, "")?;
        // SAFETY: each type is the libxkbcommon prototype of the function.
        unsafe {
            Ok(Xkb {
                context_new: sym(&lib, l, "xkb_context_new\0", "")?,
                context_unref: sym(&lib, l, "xkb_context_unref\0", "")?,
                set_log_level: sym(&lib, l, "xkb_context_set_log_level\0", "")?,
                keymap_from_buffer: sym(&lib, l, "xkb_keymap_new_from_buffer\0", "")?,
                keymap_unref: sym(&lib, l, "xkb_keymap_unref\0", "")?,
                min_keycode: sym(&lib, l, "xkb_keymap_min_keycode\0", "")?,
                max_keycode: sym(&lib, l, "xkb_keymap_max_keycode\0", "")?,
                num_layouts_for_key: sym(&lib, l, "xkb_keymap_num_layouts_for_key\0", "")?,
                num_levels_for_key: sym(&lib, l, "xkb_keymap_num_levels_for_key\0", "")?,
                syms_by_level: sym(&lib, l, "xkb_keymap_key_get_syms_by_level\0", "")?,
                keysym_from_name: sym(&lib, l, "xkb_keysym_from_name\0", "")?,
                _lib: lib,
            })
        }
    }

    /// The keysym named `name` (exact spelling first, then ignoring case,
    /// as xkbcommon advises); `None` for an unknown name.
    pub fn keysym(&self, name: &str) -> Option<u32> {
        let c = std::ffi::CString::new(name).ok()?;
        [0, KEYSYM_CASE_INSENSITIVE]
            .into_iter()
            // SAFETY: a NUL-terminated string; the function only reads it.
            .map(|flags| unsafe { (self.keysym_from_name)(c.as_ptr(), flags) })
            .find(|&k| k != 0)
    }

    /// Compiles a keymap from its text (`XKB_KEYMAP_FORMAT_TEXT_V1`, as
    /// `wl_keyboard.keymap` sends); the text may end at a NUL byte.
    pub fn compile(&self, text: &[u8]) -> Option<Keymap<'_>> {
        let len = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        // SAFETY: the flags are valid context flags.
        let ctx = unsafe { (self.context_new)(CONTEXT_FLAGS) };
        if ctx.is_null() {
            return None;
        }
        // SAFETY: `ctx` is a live context; `text[..len]` is readable.
        let keymap = unsafe {
            (self.set_log_level)(ctx, LOG_CRITICAL);
            (self.keymap_from_buffer)(ctx, text.as_ptr().cast(), len, FORMAT_TEXT_V1, 0)
        };
        // SAFETY: the keymap holds its own reference to the context.
        unsafe { (self.context_unref)(ctx) };
        (!keymap.is_null()).then_some(Keymap { xkb: self, keymap })
    }
}

/// A compiled keymap (unreferenced on drop).
pub struct Keymap<'a> {
    xkb: &'a Xkb,
    keymap: *mut XkbKeymap,
}

impl Keymap<'_> {
    /// Every keycode that produces `keysym` at some level of some layout.
    pub fn keycodes_of(&self, keysym: u32) -> Vec<u32> {
        let x = self.xkb;
        let mut out = Vec::new();
        // SAFETY: `keymap` is live; the query functions only read it, and
        // `syms` points into the keymap for `n` entries.
        unsafe {
            let (min, max) = ((x.min_keycode)(self.keymap), (x.max_keycode)(self.keymap));
            for key in min..=max {
                let layouts = (x.num_layouts_for_key)(self.keymap, key);
                'key: for layout in 0..layouts {
                    for level in 0..(x.num_levels_for_key)(self.keymap, key, layout) {
                        let mut syms: *const u32 = std::ptr::null();
                        let n = (x.syms_by_level)(self.keymap, key, layout, level, &mut syms);
                        if n > 0
                            && !syms.is_null()
                            && std::slice::from_raw_parts(syms, n as usize).contains(&keysym)
                        {
                            out.push(key);
                            break 'key;
                        }
                    }
                }
            }
        }
        out
    }
}

impl Drop for Keymap<'_> {
    fn drop(&mut self) {
        // SAFETY: created in `compile`, unreferenced exactly once.
        unsafe { (self.xkb.keymap_unref)(self.keymap) };
    }
}

// SAFETY: an xkb keymap is immutable after compilation and reference
// counted atomically; we only query it.
unsafe impl Send for Keymap<'_> {}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A complete keymap with four keys (no include files needed).
    pub const TINY_KEYMAP: &str = r#"xkb_keymap {
    xkb_keycodes "tiny" {
        minimum = 8;
        maximum = 255;
        <AC01> = 38;
        <RTSH> = 62;
        <FK12> = 96;
        <LCTL> = 37;
    };
    xkb_types "tiny" {
        virtual_modifiers NumLock;
        type "ONE_LEVEL" { modifiers = none; level_name[Level1] = "Any"; };
        type "TWO_LEVEL" {
            modifiers = Shift;
            map[Shift] = Level2;
            level_name[Level1] = "Base";
            level_name[Level2] = "Shift";
        };
    };
    xkb_compat "tiny" { };
    xkb_symbols "tiny" {
        key <AC01> { type = "TWO_LEVEL", [ a, A ] };
        key <RTSH> { [ Shift_R ] };
        key <FK12> { [ F12 ] };
        key <LCTL> { [ Control_L ] };
    };
};
"#;

    /// libxkbcommon, or `None` (with a skip line) where it is not installed.
    pub fn xkb() -> Option<Xkb> {
        match Xkb::load() {
            Ok(x) => Some(x),
            Err(e) => {
                eprintln!("skipped: {e}");
                None
            }
        }
    }

    #[test]
    fn names_resolve_to_keycodes_of_a_real_keymap() {
        let Some(x) = xkb() else { return };
        let mut text = TINY_KEYMAP.as_bytes().to_vec();
        text.push(0); // as wl_keyboard.keymap sends it
        text.extend_from_slice(b"garbage after the NUL");
        let km = x.compile(&text).expect("tiny keymap compiles");
        let codes = |name: &str| km.keycodes_of(x.keysym(name).expect(name));
        assert_eq!(codes("Shift_R"), [62]);
        assert_eq!(codes("F12"), [96]);
        assert_eq!(codes("f12"), [96], "case-insensitive fallback");
        assert_eq!(codes("control_l"), [37]);
        assert_eq!(codes("A"), [38], "level 2 of the a key");
        assert_eq!(codes("a"), [38]);
        assert_eq!(codes("F1"), Vec::<u32>::new(), "a keysym the map lacks");
        assert_eq!(x.keysym("NoSuchKey"), None);
        assert!(x.compile(b"xkb_keymap { nonsense").is_none());
    }
}
