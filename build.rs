//! `libsteadyhud.so` links with `-z defs`: a symbol left undefined fails
//! the link instead of the game's `dlopen`. Above all the one `#[no_panic]`
//! leaves behind in a function it cannot prove panic-free (the present's
//! own work, `src/layer/present.rs`): in a shared library the linker would
//! otherwise let it through.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,defs");
    println!("cargo:rerun-if-changed=build.rs");
}
