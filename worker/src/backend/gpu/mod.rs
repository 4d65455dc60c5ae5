//! What the GPU backends (cuda, hip) share: the same logic over their own result layers
//! (`cuda/result.rs`, `hip/result.rs`), written once.

pub(crate) mod blas;
pub(crate) mod modules;
