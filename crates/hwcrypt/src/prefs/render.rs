//! The renderings of a [`Recommendation`]: cipher lists, `ssh_config` and
//! `sshd_config` lines, an OpenSSL configuration file, nginx directives,
//! BoringSSL calls and a Go `tls.Config`. Not the decisions (what comes
//! first and why: `prefs/mod.rs`), not the cipher names (`ciphers.rs`).

use super::*;

/// `text` as `#` comment lines of at most about 80 characters.
pub(super) fn comment(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for word in text.split_whitespace() {
        if line.len() > 1 && line.len() + 1 + word.len() > 80 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

pub(super) fn names(list: &[Choice]) -> impl Iterator<Item = &'static str> + '_ {
    list.iter().map(|c| c.name)
}

impl Recommendation {
    /// OpenSSH `Ciphers` value (comma-separated).
    pub fn openssh_ciphers(&self) -> String {
        names(&self.openssh).collect::<Vec<_>>().join(",")
    }

    /// OpenSSL TLS 1.3 `Ciphersuites` value (colon-separated).
    pub fn openssl_ciphersuites(&self) -> String {
        names(&self.tls13).collect::<Vec<_>>().join(":")
    }

    /// OpenSSL TLS 1.2 cipher string (colon-separated).
    pub fn openssl_cipher_string(&self) -> String {
        names(&self.tls12).collect::<Vec<_>>().join(":")
    }

    /// BoringSSL TLS 1.2 cipher string: `[a|b]` is an equal-preference group.
    pub fn boringssl_cipher_string(&self) -> String {
        self.boringssl_groups
            .iter()
            .map(|g| match g.as_slice() {
                [one] => (*one).to_string(),
                many => format!("[{}]", many.join("|")),
            })
            .collect::<Vec<_>>()
            .join(":")
    }

    fn legacy_comment(&self) -> String {
        match self.openssh_warning {
            Some(w) => comment(&format!("WARNING: {w}")),
            None => String::new(),
        }
    }

    /// A `Host *` block for `~/.ssh/config`.
    pub fn ssh_client_config(&self) -> String {
        format!(
            "# ~/.ssh/config: ssh keeps the first value it reads for each option, so put this\n\
             # block at the end (host-specific blocks above it still win).\n\
             # SSH uses the first cipher in the client's list that the server allows.\n\
             {}Host *\n    Ciphers {}\n",
            self.legacy_comment(),
            self.openssh_ciphers()
        )
    }

    /// The `Ciphers` line for `sshd_config`.
    pub fn sshd_config(&self) -> String {
        format!(
            "# /etc/ssh/sshd_config (sshd also keeps the first value it reads: mind\n\
             # sshd_config.d/ includes). The client's order picks the cipher; this list\n\
             # only allows, so keep ChaCha20-Poly1305 in it for clients without AES\n\
             # hardware. Check with `sshd -t`, then reload sshd.\n\
             {}{}Ciphers {}\n",
            comment(&format!("Note: {SSH_TERRAPIN_NOTE}.")),
            self.legacy_comment(),
            self.openssh_ciphers()
        )
    }

    /// Both OpenSSH snippets.
    pub fn openssh_snippet(&self) -> String {
        format!("{}\n{}", self.ssh_client_config(), self.sshd_config())
    }

    fn openssl_options(&self) -> &'static str {
        if self.server.prioritize_chacha {
            "ServerPreference,PrioritizeChaCha"
        } else {
            "ServerPreference"
        }
    }

    /// A self-contained OpenSSL (1.1.1+) configuration file: the system
    /// default TLS settings for every program that uses the library.
    pub fn openssl_conf(&self) -> String {
        format!(
            "# OpenSSL 1.1.1+ configuration: use with OPENSSL_CONF=/path/to/this.cnf, or merge\n\
             # it into openssl.cnf (add `ssl_conf = hwcrypt_ssl` to the section its\n\
             # `openssl_conf` line names, instead of the first line here). Programs that set\n\
             # their own ciphers (nginx, ...) override these defaults.\n\
             # Options only act in servers: {}\n\
             openssl_conf = hwcrypt_init\n\
             \n\
             [hwcrypt_init]\n\
             ssl_conf = hwcrypt_ssl\n\
             \n\
             [hwcrypt_ssl]\n\
             system_default = hwcrypt_tls\n\
             \n\
             [hwcrypt_tls]\n\
             MinProtocol = TLSv1.2\n\
             # TLS 1.2 (SSL_CTX_set_cipher_list)\n\
             CipherString = {}\n\
             # TLS 1.3 (SSL_CTX_set_ciphersuites)\n\
             Ciphersuites = {}\n\
             Options = {}\n",
            if self.server.prioritize_chacha {
                "PrioritizeChaCha serves ChaCha20 to clients that list it first."
            } else {
                "ChaCha20-Poly1305 already comes first; PrioritizeChaCha not needed."
            },
            self.openssl_cipher_string(),
            self.openssl_ciphersuites(),
            self.openssl_options()
        )
    }

    /// nginx directives (1.19.4+ for `ssl_conf_command`, OpenSSL 1.1.1+).
    pub fn nginx_conf(&self) -> String {
        let chacha = if self.server.prioritize_chacha {
            "# Serve ChaCha20-Poly1305 to clients that list it first (no AES hardware there).\n\
             ssl_conf_command Options PrioritizeChaCha;\n"
        } else {
            "# PrioritizeChaCha not needed: ChaCha20-Poly1305 already comes first.\n"
        };
        format!(
            "# nginx 1.19.4+ built with OpenSSL 1.1.1+; in http {{ }} so every server block\n\
             # inherits it. Check with `nginx -t`, then reload.\n\
             ssl_protocols TLSv1.2 TLSv1.3;\n\
             ssl_ciphers {};\n\
             ssl_conf_command Ciphersuites {};\n\
             ssl_prefer_server_ciphers on;\n\
             {chacha}",
            self.openssl_cipher_string(),
            self.openssl_ciphersuites()
        )
    }

    /// BoringSSL C calls for a server context.
    pub fn boringssl_snippet(&self) -> String {
        let groups = if self.server.prioritize_chacha {
            "// [a|b|c] is an equal-preference group: with server preference on, the\n\
             // client's order decides inside it, so a client that lists ChaCha20 first\n\
             // (no AES hardware) gets it and any other gets the AES-GCM it prefers.\n"
        } else {
            "// A strict order, no groups: ChaCha20-Poly1305 wins for every client that\n\
             // offers it, sparing this server software AES.\n"
        };
        format!(
            "// BoringSSL server, TLS 1.2 suites. TLS 1.3 suites are not configurable in\n\
             // BoringSSL: it follows the client's order when it has AES hardware and\n\
             // prefers ChaCha20-Poly1305 when it has none.\n\
             {groups}\
             if (!SSL_CTX_set_strict_cipher_list(ctx,\n        \"{}\")) {{\n    /* handle the error */\n}}\n\
             SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);\n",
            self.boringssl_cipher_string()
        )
    }

    /// A Go `tls.Config` with what Go honours.
    pub fn go_snippet(&self) -> String {
        let mut suites = String::new();
        for s in &self.go_cipher_suites {
            suites.push_str(&format!("\t\ttls.{s},\n"));
        }
        format!(
            "// Go crypto/tls (1.17+) orders cipher suites itself and ignores any order given:\n\
             // AES-GCM first only when this machine has AES-GCM hardware (AES-NI + PCLMULQDQ,\n\
             // or ARMv8 AES + PMULL) and, as a server, only when the client also lists\n\
             // AES-GCM first; ChaCha20-Poly1305 otherwise (ChaCha boosting built in).\n\
             // TLS 1.3 suites are not configurable; CipherSuites is an allow-list for\n\
             // TLS 1.0-1.2 whose order is ignored; PreferServerCipherSuites is ignored.\n\
             // Go reads the CPU itself: HWCRYPT_CPU does not affect it.\n\
             cfg := &tls.Config{{\n\
             \tMinVersion: tls.VersionTLS12,\n\
             \tCipherSuites: []uint16{{\n\
             {suites}\
             \t}},\n\
             }}\n"
        )
    }
}
