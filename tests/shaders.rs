//! The SPIR-V committed in `shaders/` is what its GLSL compiles to: every
//! `*.vert`/`*.frag`/`*.comp` is recompiled with `glslc` and compared byte
//! for byte with the `.spv` beside it. Without `glslc` only the `.spv` files'
//! presence is checked, or the test fails under `STEADYHUD_REQUIRE_TOOLS=1`
//! (tests/require; CI installs it).

mod require;

use std::path::Path;
use std::process::Command;

#[test]
fn committed_spirv_matches_its_glsl() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let sources: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("vert" | "frag" | "comp")
            )
        })
        .collect();
    assert!(
        !sources.is_empty(),
        "no shader sources in {}",
        dir.display()
    );
    if !require::program("glslc", "glslc") {
        // Only that every source has its .spv.
        for src in &sources {
            assert!(src
                .with_extension(format!(
                    "{}.spv",
                    src.extension().unwrap().to_str().unwrap()
                ))
                .exists());
        }
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for src in &sources {
        let name = src.file_name().unwrap().to_str().unwrap();
        let committed = dir.join(format!("{name}.spv"));
        let fresh = tmp.path().join(format!("{name}.spv"));
        let out = Command::new("glslc")
            .arg(src)
            .arg("-o")
            .arg(&fresh)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "glslc {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            std::fs::read(&fresh).unwrap() == std::fs::read(&committed).unwrap_or_default(),
            "{} is stale: run `glslc shaders/{name} -o shaders/{name}.spv`",
            committed.display()
        );
    }
}

/// The GL library's shaders (`shaders/gl/`) are GLSL the driver compiles at
/// run time, behind a `#version` line the library picks (130, 150 or
/// 300 es): they have no SPIR-V to compare. `glslc` checks them as GLSL
/// 3.30 for OpenGL, so a mistake shows here and not first in a game; a
/// broken copy must fail the same check.
#[test]
fn gl_shaders_are_valid_glsl() {
    if !require::program("glslc", "glslc") {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/gl");
    let tmp = tempfile::tempdir().unwrap();
    let check = |stage: &str, text: &str| {
        let src = tmp.path().join(format!("check.{stage}"));
        // With the desktop define, as the library compiles them there.
        std::fs::write(
            &src,
            format!("#version 330\n#define STEADYHUD_CLIP_DISTANCES\n{text}"),
        )
        .unwrap();
        let out = Command::new("glslc")
            .args([
                "--target-env=opengl",
                "-fauto-map-locations",
                "-fauto-bind-uniforms",
            ])
            .arg(&src)
            .arg("-o")
            .arg(tmp.path().join("check.spv"))
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut checked = 0;
    for stage in ["vert", "frag"] {
        let text = std::fs::read_to_string(dir.join(format!("hud.{stage}"))).unwrap();
        let (ok, err) = check(stage, &text);
        assert!(ok, "shaders/gl/hud.{stage}: {err}");
        let (broken, _) = check(stage, &text.replace("void main", "void main("));
        assert!(!broken, "glslc accepted a broken hud.{stage}");
        checked += 1;
    }
    assert_eq!(checked, 2);
}
