//! One module per subcommand: each turns its flags into library calls.
pub mod age;
pub mod age_output;
pub mod cpu;
pub mod crack;
pub mod openssl_config;
pub mod prefs;
pub mod speed;
