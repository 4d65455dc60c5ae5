//! placeholder: filled by a later issue
