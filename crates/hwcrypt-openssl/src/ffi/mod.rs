//! The boundary with libcrypto: the only place in this crate with
//! `unsafe`. Every block states why it is sound (`// SAFETY:`).

pub(crate) mod cipher;
pub(crate) mod params;
pub(crate) mod provider;
pub(crate) mod types;
