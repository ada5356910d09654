//! Keeps the README and the pages under `docs/` honest against the tool:
//!
//! - every `$ hwcrypt ...` line (and `cargo run -p hwcrypt-cli -- ...`) in a
//!   code block parses: the binary runs it with `--help` appended, which clap
//!   answers only after every subcommand, flag and enumerated value before
//!   it was accepted (values the commands check themselves, such as sizes,
//!   are not checked here);
//! - a command with a page `docs/cli/NAME.md` has every flag of its `--help`
//!   on that page, and every flag in that page's tables exists;
//! - every page under `docs/` is linked from the README, and every relative
//!   link in the README and the pages points at a file that exists;
//! - the README stays a front door (at most 10 KiB), and its headline
//!   figures are the rows of `docs/performance.md` they are taken from.
//!
//! It reads the repository around the crate, so it is left out of the
//! published package.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The README's size limit: a front door, not a manual.
const README_MAX_BYTES: usize = 10 * 1024;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.md` file under `docs/`, sorted.
fn doc_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut pages = Vec::new();
    walk(&root().join("docs"), &mut pages);
    pages.sort();
    pages
}

/// The README and every docs page, with their paths relative to the root.
fn markdown_files() -> Vec<(String, String)> {
    let root = root();
    let mut files = vec![("README.md".to_string(), read(&root.join("README.md")))];
    for page in doc_pages() {
        let rel = page
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        files.push((rel, read(&page)));
    }
    files
}

/// The lines inside fenced code blocks, with their line numbers and whether
/// the block is a shell script (```sh, ```bash, ```console, ```shell).
fn code_lines(text: &str) -> Vec<(usize, &str, bool)> {
    let mut inside = None;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            inside = match inside {
                None => Some(matches!(fence.trim(), "sh" | "bash" | "console" | "shell")),
                Some(_) => None,
            };
        } else if let Some(shell) = inside {
            lines.push((i + 1, line, shell));
        }
    }
    lines
}

/// Splits a shell command line into words, the way `sh` would for the
/// simple lines the docs use: single and double quotes, backslash escapes;
/// stops at an unquoted `|`, `>`, `<`, `;`, `&` or a `#` comment.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '|' | '>' | '<' | ';' | '&' => break,
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// One documented invocation of the tool.
struct Example {
    place: String,
    env: Vec<(String, String)>,
    args: Vec<String>,
}

/// `$ [VAR=value ...] hwcrypt ARGS` lines in any code block, the same
/// without the prompt in shell blocks (also `target/release/hwcrypt`), and
/// `cargo run ... -p hwcrypt-cli ... -- ARGS` lines. Other lines of text
/// blocks (program output, configuration files) are not commands.
fn examples() -> Vec<Example> {
    let mut out = Vec::new();
    for (file, text) in markdown_files() {
        for (n, line, shell) in code_lines(&text) {
            let line = line.trim();
            let command = match line.strip_prefix("$ ") {
                Some(command) => command,
                None if shell => line,
                None => continue,
            };
            let words = shell_words(command);
            let mut env = Vec::new();
            let mut rest = words.as_slice();
            while let Some((first, tail)) = rest.split_first() {
                match first.split_once('=') {
                    Some((k, v))
                        if !k.is_empty()
                            && k.chars().all(|c| c.is_ascii_uppercase() || c == '_') =>
                    {
                        env.push((k.to_string(), v.to_string()));
                        rest = tail;
                    }
                    _ => break,
                }
            }
            let args: Vec<String> = match rest.split_first() {
                Some((cmd, args)) if cmd == "hwcrypt" || cmd.ends_with("/hwcrypt") => args.to_vec(),
                Some((cmd, args))
                    if cmd == "cargo"
                        && args.first().is_some_and(|a| a == "run")
                        && args
                            .windows(2)
                            .any(|w| w[0] == "-p" && w[1] == "hwcrypt-cli") =>
                {
                    match args.iter().position(|a| a == "--") {
                        Some(i) => args[i + 1..].to_vec(),
                        None => Vec::new(),
                    }
                }
                _ => continue,
            };
            out.push(Example {
                place: format!("{file}:{n}: {line}"),
                env,
                args,
            });
        }
    }
    out
}

fn hwcrypt_help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .args(args)
        .arg("--help")
        .env_remove("HWCRYPT_CPU")
        .output()
        .expect("run hwcrypt");
    assert!(out.status.success(), "hwcrypt {args:?} --help: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The long flags of a `--help` text (first `--name` of each option line).
fn help_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| {
            l.split([' ', ','])
                .find(|w| w.starts_with("--") && w.len() > 2)
        })
        .map(|w| w.trim_end_matches(['=', '.']).to_string())
        .collect()
}

/// Every `--flag` word in a text.
fn flags_in(text: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(off) = text[i..].find("--") {
        let start = i + off;
        let before_ok =
            start == 0 || (!bytes[start - 1].is_ascii_alphanumeric() && bytes[start - 1] != b'-');
        let mut end = start + 2;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'-') {
            end += 1;
        }
        if before_ok && end > start + 2 && bytes[start + 2].is_ascii_lowercase() {
            flags.insert(text[start..end].trim_end_matches('-').to_string());
        }
        i = end.max(start + 2);
    }
    flags
}

/// The subcommands `hwcrypt --help` lists.
fn subcommands() -> Vec<String> {
    let help = hwcrypt_help(&[]);
    let commands = help
        .split("Commands:")
        .nth(1)
        .expect("`hwcrypt --help` lists its commands");
    commands
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_documented_command_line_parses() {
    let examples = examples();
    assert!(
        examples.len() >= 10,
        "found only {} `$ hwcrypt` lines; is the extraction broken?",
        examples.len()
    );
    let mut failures = Vec::new();
    for ex in &examples {
        let out = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
            .args(&ex.args)
            .arg("--help")
            .env_remove("HWCRYPT_CPU")
            .envs(ex.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("run hwcrypt");
        if !out.status.success() {
            failures.push(format!(
                "{}\n    {}",
                ex.place,
                String::from_utf8_lossy(&out.stderr)
                    .trim()
                    .replace('\n', "\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "documented commands the CLI rejects:\n{}",
        failures.join("\n")
    );
    println!("{} documented command lines parse", examples.len());
}

#[test]
fn every_command_page_lists_every_flag_and_no_other() {
    let root = root();
    let mut checked = 0;
    for command in subcommands() {
        let page_path = root.join("docs/cli").join(format!("{command}.md"));
        if !page_path.exists() {
            continue;
        }
        let page = read(&page_path);
        let help = help_flags(&hwcrypt_help(&[&command]));
        let on_page = flags_in(&page);
        let missing: Vec<_> = help.difference(&on_page).collect();
        assert!(
            missing.is_empty(),
            "docs/cli/{command}.md does not mention {missing:?} (from `hwcrypt {command} --help`)"
        );
        // The flags named in the page's tables (rows that start with a flag).
        let table_flags: BTreeSet<String> = page
            .lines()
            .filter(|l| l.starts_with("| `-"))
            .flat_map(|l| flags_in(l.split(" | ").next().unwrap_or("")))
            .collect();
        let unknown: Vec<_> = table_flags.difference(&help).collect();
        assert!(
            unknown.is_empty(),
            "docs/cli/{command}.md documents flags `hwcrypt {command}` does not have: {unknown:?}"
        );
        checked += 1;
    }
    assert!(
        checked >= 4,
        "only {checked} command pages found in docs/cli/"
    );
}

#[test]
fn readme_links_every_docs_page_and_every_link_resolves() {
    let root = root();
    let readme = read(&root.join("README.md"));
    for page in doc_pages() {
        let rel = page
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            readme.contains(&format!("]({rel})")) || readme.contains(&format!("]({rel}#")),
            "{rel} is not linked from the README (add it to its Documentation list)"
        );
    }
    for (file, text) in markdown_files() {
        let dir = root.join(&file).parent().unwrap().to_path_buf();
        for (i, _) in text.match_indices("](") {
            let target: String = text[i + 2..].chars().take_while(|&c| c != ')').collect();
            let path = target.split('#').next().unwrap();
            if path.is_empty() || path.contains("://") || path.starts_with("mailto:") {
                continue;
            }
            assert!(
                dir.join(path).exists(),
                "{file}: link to {target} points at nothing"
            );
        }
    }
}

#[test]
fn readme_is_a_front_door() {
    let readme = read(&root().join("README.md"));
    assert!(
        readme.len() <= README_MAX_BYTES,
        "README.md is {} bytes, over {README_MAX_BYTES}: move the detail to a page under docs/",
        readme.len()
    );
}

/// The cells of a markdown table row, trimmed, without emphasis.
fn cells(row: &str) -> Vec<String> {
    row.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().replace("**", ""))
        .collect()
}

#[test]
fn readme_headline_figures_match_performance_page() {
    let root = root();
    let readme = read(&root.join("README.md"));
    let perf = read(&root.join("docs/performance.md"));
    let header = "| algorithm | size | hwcrypt (backend) | best peer | hwcrypt / peer |";
    let headline: Vec<Vec<String>> = readme
        .lines()
        .skip_while(|l| *l != header)
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(cells)
        .collect();
    assert!(
        !headline.is_empty(),
        "the README's headline table ({header}) is missing"
    );
    // The full table: | algorithm | size | hwcrypt best (backend) | aesni | soft
    // | OpenSSL | ring | aws-lc-rs | RustCrypto | ratio (peer) |
    let full_header = perf
        .lines()
        .find(|l| l.starts_with("| algorithm | size | hwcrypt best (backend) |"))
        .expect("docs/performance.md has the full `hwcrypt speed` table");
    let columns: Vec<String> = cells(full_header)
        .iter()
        .map(|c| c.to_lowercase())
        .collect();
    for row in &headline {
        let [alg, size, ours, peer, ratio] = row.as_slice() else {
            panic!("README headline row {row:?} does not have 5 cells");
        };
        let full = perf
            .lines()
            .map(cells)
            .find(|c| c.len() == columns.len() && c[0] == *alg && c[1] == *size)
            .unwrap_or_else(|| panic!("docs/performance.md has no row for {alg} {size}"));
        assert_eq!(&full[2], ours, "{alg} {size}: hwcrypt figure");
        let (peer_gbps, peer_name) = peer
            .split_once(" (")
            .map(|(g, n)| (g, n.trim_end_matches(')')))
            .expect("best peer as `GB/s (name)`");
        let column = columns
            .iter()
            .position(|c| c == peer_name)
            .unwrap_or_else(|| panic!("{alg} {size}: no column for peer {peer_name}"));
        assert_eq!(full[column], peer_gbps, "{alg} {size}: {peer_name} figure");
        let last = &full[columns.len() - 1];
        assert_eq!(
            last,
            &format!("{ratio} ({peer_name})"),
            "{alg} {size}: ratio to the best peer"
        );
    }
}
