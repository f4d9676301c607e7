//! One file per metric type: its [`crate::About`], its options parser and its state. The
//! registry ([`crate::registry`]) lists them.

pub mod agreement;
pub mod bradley_terry;
pub mod classification;
pub mod correlation;
pub mod frequency;
pub mod length_controlled;
pub mod mean;
pub mod min_max;
pub mod pass_at_k;
pub mod python;
pub mod ranking;
pub mod std_dev;
pub mod win_rate;
