pub mod synth;
