//! What the HUD's fragment shader writes for a colour, per swapchain format
//! and colour space: the HUD's colours are sRGB-encoded values (what they
//! look like on an ordinary UNORM swapchain), and [`Encoding`] says how to
//! turn them into the numbers the swapchain expects. [`Encoding::encode`] is
//! the CPU reference of the shader (`shaders/hud.frag`), also used for the
//! panel's clear colour.

use ash::vk;

/// Luminance of HUD white on an HDR swapchain, in nits (cd/m²): about
/// "paper white", so the HUD is not a 10 000-nit glare.
pub const HDR_WHITE_NITS: f32 = 200.0;

/// Luminance of scRGB 1.0, in nits (the scRGB definition).
const SCRGB_ONE_NITS: f32 = 80.0;

/// How an sRGB-encoded HUD colour is written (the shader's specialization
/// constant is the discriminant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Encoding {
    /// As is: UNORM (or SFLOAT) formats in the sRGB non-linear colour space.
    Unorm = 0,
    /// sRGB → linear: a `*_SRGB` format encodes it again in hardware.
    Srgb = 1,
    /// HDR10: sRGB → linear, BT.709 → BT.2020 primaries, white at
    /// [`HDR_WHITE_NITS`], SMPTE ST 2084 (PQ) inverse EOTF.
    Pq = 2,
    /// scRGB (extended sRGB linear): sRGB → linear, scaled so white is
    /// [`HDR_WHITE_NITS`] (1.0 = 80 nits).
    ScRgb = 3,
}

impl Encoding {
    /// The shader's specialization constant for this encoding.
    pub fn shader_id(self) -> u32 {
        self as u32
    }

    /// Encodes an sRGB-encoded RGBA colour (alpha unchanged), exactly as the
    /// fragment shader does.
    pub fn encode(self, rgba: [f32; 4]) -> [f32; 4] {
        let [r, g, b, a] = rgba;
        let lin = [srgb_to_linear(r), srgb_to_linear(g), srgb_to_linear(b)];
        let rgb = match self {
            Encoding::Unorm => [r, g, b],
            Encoding::Srgb => lin,
            Encoding::Pq => {
                let scale = HDR_WHITE_NITS / 10_000.0;
                let bt2020 = bt709_to_bt2020(lin);
                bt2020.map(|c| pq_inverse_eotf(c * scale))
            }
            Encoding::ScRgb => lin.map(|c| c * (HDR_WHITE_NITS / SCRGB_ONE_NITS)),
        };
        [rgb[0], rgb[1], rgb[2], a]
    }

    /// The encoding for a swapchain of `format` in `color_space`, or why the
    /// HUD stays off for it.
    pub fn for_swapchain(
        format: vk::Format,
        color_space: vk::ColorSpaceKHR,
    ) -> Result<Encoding, &'static str> {
        let srgb = is_srgb(format);
        match color_space {
            // Pass-through: the values go to the display as they are, as a
            // GL framebuffer's do; zink (Mesa's GL on Vulkan) asks for it on
            // Wayland. An ordinary display shows them as sRGB.
            vk::ColorSpaceKHR::SRGB_NONLINEAR | vk::ColorSpaceKHR::PASS_THROUGH_EXT if srgb => {
                Ok(Encoding::Srgb)
            }
            vk::ColorSpaceKHR::SRGB_NONLINEAR | vk::ColorSpaceKHR::PASS_THROUGH_EXT => {
                Ok(Encoding::Unorm)
            }
            vk::ColorSpaceKHR::HDR10_ST2084_EXT if srgb => {
                Err("colour space HDR10_ST2084 with an sRGB format: HUD off")
            }
            vk::ColorSpaceKHR::HDR10_ST2084_EXT => Ok(Encoding::Pq),
            vk::ColorSpaceKHR::EXTENDED_SRGB_LINEAR_EXT if srgb => {
                Err("colour space EXTENDED_SRGB_LINEAR with an sRGB format: HUD off")
            }
            vk::ColorSpaceKHR::EXTENDED_SRGB_LINEAR_EXT => Ok(Encoding::ScRgb),
            other => Err(unsupported_space(other)),
        }
    }
}

/// Why the HUD is off for a colour space it does not encode for.
fn unsupported_space(space: vk::ColorSpaceKHR) -> &'static str {
    macro_rules! off {
        ($($name:ident),*) => {
            match space {
                $(vk::ColorSpaceKHR::$name => concat!("colour space ", stringify!($name), ": HUD off"),)*
                _ => "unknown colour space: HUD off",
            }
        };
    }
    off!(
        DISPLAY_P3_NONLINEAR_EXT,
        DISPLAY_P3_LINEAR_EXT,
        DCI_P3_NONLINEAR_EXT,
        BT709_LINEAR_EXT,
        BT709_NONLINEAR_EXT,
        BT2020_LINEAR_EXT,
        DOLBYVISION_EXT,
        HDR10_HLG_EXT,
        ADOBERGB_LINEAR_EXT,
        ADOBERGB_NONLINEAR_EXT,
        EXTENDED_SRGB_NONLINEAR_EXT,
        DISPLAY_NATIVE_AMD
    )
}

/// Whether writes to a view of `format` are sRGB-encoded by the hardware.
pub fn is_srgb(format: vk::Format) -> bool {
    matches!(
        format,
        vk::Format::R8_SRGB
            | vk::Format::R8G8_SRGB
            | vk::Format::R8G8B8_SRGB
            | vk::Format::B8G8R8_SRGB
            | vk::Format::R8G8B8A8_SRGB
            | vk::Format::B8G8R8A8_SRGB
            | vk::Format::A8B8G8R8_SRGB_PACK32
    )
}

/// sRGB transfer function inverse (IEC 61966-2-1).
pub fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// sRGB transfer function (IEC 61966-2-1), the inverse of [`srgb_to_linear`].
pub fn linear_to_srgb(c: f32) -> f32 {
    if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

/// Linear BT.709 (sRGB) primaries to linear BT.2020 primaries (ITU-R BT.2087).
fn bt709_to_bt2020([r, g, b]: [f32; 3]) -> [f32; 3] {
    [
        0.627_404 * r + 0.329_282 * g + 0.043_314 * b,
        0.069_097 * r + 0.919_540 * g + 0.011_361 * b,
        0.016_392 * r + 0.088_013 * g + 0.895_595 * b,
    ]
}

/// SMPTE ST 2084 inverse EOTF: normalised luminance (1.0 = 10 000 nits) to
/// the PQ code value 0..=1.
pub fn pq_inverse_eotf(y: f32) -> f32 {
    const M1: f32 = 2610.0 / 16384.0;
    const M2: f32 = 2523.0 / 4096.0 * 128.0;
    const C1: f32 = 3424.0 / 4096.0;
    const C2: f32 = 2413.0 / 4096.0 * 32.0;
    const C3: f32 = 2392.0 / 4096.0 * 32.0;
    let p = y.clamp(0.0, 1.0).powf(M1);
    ((C1 + C2 * p) / (1.0 + C3 * p)).powf(M2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHITE: [f32; 4] = [1.0, 1.0, 1.0, 1.0];

    fn close(a: f32, b: f32, tol: f32) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn pq_known_values() {
        // 0 nits: c1^m2 ≈ 7e-7, i.e. code value 0 in any real format.
        assert!(pq_inverse_eotf(0.0) < 1e-6);
        assert!(close(pq_inverse_eotf(1.0), 1.0, 1e-5));
        // 100 nits ≈ 0.508, 200 nits ≈ 0.580, 1000 nits ≈ 0.752 (ST 2084 tables).
        assert!(
            close(pq_inverse_eotf(0.01), 0.508, 2e-3),
            "{}",
            pq_inverse_eotf(0.01)
        );
        assert!(
            close(pq_inverse_eotf(0.02), 0.580, 2e-3),
            "{}",
            pq_inverse_eotf(0.02)
        );
        assert!(
            close(pq_inverse_eotf(0.1), 0.752, 2e-3),
            "{}",
            pq_inverse_eotf(0.1)
        );
        // Out of range input is clamped, never NaN.
        assert!(close(pq_inverse_eotf(2.0), 1.0, 1e-5));
        assert!(pq_inverse_eotf(-1.0).is_finite());
    }

    #[test]
    fn pq_white_is_200_nits_not_10000() {
        let w = Encoding::Pq.encode(WHITE);
        for c in &w[..3] {
            assert!(close(*c, 0.580, 2e-3), "{w:?}");
        }
        assert_eq!(w[3], 1.0);
        let black = Encoding::Pq.encode([0.0, 0.0, 0.0, 0.5]);
        assert!(black[..3].iter().all(|&c| c < 1e-5), "{black:?}");
        assert_eq!(black[3], 0.5);
    }

    #[test]
    fn pq_red_moves_into_bt2020_primaries() {
        // Pure sRGB red is inside BT.2020: mostly red, a little green and blue.
        let r = Encoding::Pq.encode([1.0, 0.0, 0.0, 1.0]);
        assert!(r[0] > r[1] && r[1] > r[2] && r[2] > 0.0, "{r:?}");
        let expect = pq_inverse_eotf(0.627_404 * 0.02);
        assert!(close(r[0], expect, 1e-6));
    }

    #[test]
    fn scrgb_white_is_2_5() {
        let w = Encoding::ScRgb.encode(WHITE);
        assert!(w[..3].iter().all(|&c| close(c, 2.5, 1e-6)), "{w:?}");
        let grey = Encoding::ScRgb.encode([0.5, 0.5, 0.5, 0.25]);
        assert!(close(grey[0], srgb_to_linear(0.5) * 2.5, 1e-6));
        assert_eq!(grey[3], 0.25);
    }

    #[test]
    fn srgb_and_unorm_round_trip() {
        for i in 0..=255 {
            let c = i as f32 / 255.0;
            assert!(close(linear_to_srgb(srgb_to_linear(c)), c, 1e-5), "{c}");
            let e = Encoding::Srgb.encode([c, c, c, 0.7]);
            assert!(close(linear_to_srgb(e[0]), c, 1e-5));
            assert_eq!(e[3], 0.7);
            assert_eq!(
                Encoding::Unorm.encode([c, 0.1, 0.2, 0.3]),
                [c, 0.1, 0.2, 0.3]
            );
        }
        assert_eq!(srgb_to_linear(0.0), 0.0);
        assert!(close(srgb_to_linear(1.0), 1.0, 1e-6));
        // 50 % sRGB grey is about 21.4 % linear.
        assert!(close(srgb_to_linear(0.5), 0.214, 1e-3));
    }

    #[test]
    fn decisions() {
        use vk::ColorSpaceKHR as S;
        use vk::Format as F;
        let d = Encoding::for_swapchain;
        assert_eq!(d(F::B8G8R8A8_UNORM, S::SRGB_NONLINEAR), Ok(Encoding::Unorm));
        assert_eq!(
            d(F::R16G16B16A16_SFLOAT, S::SRGB_NONLINEAR),
            Ok(Encoding::Unorm)
        );
        assert_eq!(d(F::B8G8R8A8_SRGB, S::SRGB_NONLINEAR), Ok(Encoding::Srgb));
        // zink's swapchains on Wayland.
        assert_eq!(
            d(F::B8G8R8A8_UNORM, S::PASS_THROUGH_EXT),
            Ok(Encoding::Unorm)
        );
        assert_eq!(d(F::B8G8R8A8_SRGB, S::PASS_THROUGH_EXT), Ok(Encoding::Srgb));
        assert_eq!(
            d(F::A8B8G8R8_SRGB_PACK32, S::SRGB_NONLINEAR),
            Ok(Encoding::Srgb)
        );
        assert_eq!(
            d(F::A2B10G10R10_UNORM_PACK32, S::HDR10_ST2084_EXT),
            Ok(Encoding::Pq)
        );
        assert_eq!(
            d(F::R16G16B16A16_SFLOAT, S::HDR10_ST2084_EXT),
            Ok(Encoding::Pq)
        );
        assert_eq!(
            d(F::R16G16B16A16_SFLOAT, S::EXTENDED_SRGB_LINEAR_EXT),
            Ok(Encoding::ScRgb)
        );
        let e = d(F::B8G8R8A8_SRGB, S::HDR10_ST2084_EXT).unwrap_err();
        assert!(e.contains("HDR10_ST2084") && e.contains("HUD off"), "{e}");
        let e = d(F::B8G8R8A8_SRGB, S::EXTENDED_SRGB_LINEAR_EXT).unwrap_err();
        assert!(
            e.contains("EXTENDED_SRGB_LINEAR") && e.contains("sRGB format"),
            "{e}"
        );
        assert_eq!(
            d(F::A2B10G10R10_UNORM_PACK32, S::DISPLAY_P3_NONLINEAR_EXT),
            Err("colour space DISPLAY_P3_NONLINEAR_EXT: HUD off")
        );
        assert_eq!(
            d(F::B8G8R8A8_UNORM, S::HDR10_HLG_EXT),
            Err("colour space HDR10_HLG_EXT: HUD off")
        );
        assert_eq!(
            d(F::B8G8R8A8_UNORM, S::from_raw(123_456)),
            Err("unknown colour space: HUD off")
        );
    }

    #[test]
    fn srgb_formats_detected() {
        assert!(is_srgb(vk::Format::B8G8R8A8_SRGB));
        assert!(!is_srgb(vk::Format::B8G8R8A8_UNORM));
        assert!(!is_srgb(vk::Format::A2B10G10R10_UNORM_PACK32));
    }
}
