//! Link arguments of `libsteadyhud_gl.so`.
//!
//! `-z defs`: a symbol left undefined fails the link instead of the game's
//! `dlopen`. Above all the one `#[no_panic]` leaves behind in a function it
//! cannot prove panic-free (the swap's own work, `crates/gl/src/swap.rs`):
//! in a shared library the linker would otherwise let it through.
//!
//! On 32-bit x86 the exported `dlsym` is the `global_asm!` entry
//! `steadyhud_dlsym_entry` (src/hooks.rs): rustc's version script exports
//! the name only because Rust defines a `dlsym` too, and the linker's
//! `--defsym` (which wins over an object's definition) points the name at
//! the entry, so no compiler prologue precedes it whatever the Rust flags.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,defs");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--defsym=dlsym=steadyhud_dlsym_entry");
    }
}
