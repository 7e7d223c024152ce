//! Where a failing build or test says its errors are: the files its output names with a line
//! number (`src/lib.rs:12:5: error`, ` --> src/main.rs:3:5`, `src/a.ts(3,5): error TS2322`,
//! `File "app/models.py", line 40`, `at run (src/job.test.ts:8:13)`). A cold reader needs
//! them as much as the files read: the work goes on there.

/// At most this many files are taken from one output (a build may list hundreds of errors).
pub const MAX_SITES: usize = 5;
/// Only the output's start is looked through (compilers list errors first; the rest is noise).
const MAX_SCAN_BYTES: usize = 64 * 1024;

/// The files `output` names as where errors are, in the order it names them, unique, at most
/// [`MAX_SITES`]. A dependency's file (`node_modules/`) is not the project's work, and a bare
/// file name is left out: `go test` names a test file from its package's folder, which the
/// output does not say (a wrong path is worse than none).
pub fn error_sites(output: &str) -> Vec<String> {
    let mut end = output.len().min(MAX_SCAN_BYTES);
    while !output.is_char_boundary(end) {
        end -= 1;
    }
    let mut out: Vec<String> = Vec::new();
    for line in output[..end].lines() {
        for path in sites_in_line(line) {
            let slashed = path.replace('\\', "/");
            let usable = slashed.contains('/') && !slashed.contains("node_modules/");
            if usable && !out.contains(&path) {
                out.push(path);
                if out.len() == MAX_SITES {
                    return out;
                }
            }
        }
    }
    out
}

/// The paths one line names with a line number.
fn sites_in_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Python: `File "app/models.py", line 40, in save`.
    if let Some(rest) = line.trim_start().strip_prefix("File \"") {
        if let Some((path, after)) = rest.split_once('"') {
            if after.trim_start().starts_with(", line ") && is_file_path(path) {
                out.push(path.to_string());
            }
        }
        return out;
    }
    for token in line.split(|c: char| c.is_whitespace() || matches!(c, '(' | '\'' | '"' | '`')) {
        if let Some(path) = located_path(token) {
            out.push(path.to_string());
        }
    }
    // TypeScript: `src/a.ts(3,5): error TS2322`: the path ends where the parenthesis opens.
    if let Some((path, rest)) = line.trim_start().split_once('(') {
        let digits = rest.split_once(')').map(|(inside, _)| inside);
        let numbers = digits
            .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit() || c == ','));
        if numbers && !path.contains(char::is_whitespace) && is_file_path(path) {
            out.push(path.to_string());
        }
    }
    out
}

/// `path:12`, `path:12:5`, `path:12:5:` or `path:12)`: the path, when what precedes the line
/// number is a file's path. A Windows drive's colon (`C:\x\a.rs:3`) stays in the path.
fn located_path(token: &str) -> Option<&str> {
    let token = token.trim_end_matches([')', ',', ';', '.']);
    let mut search = token;
    let mut base = 0;
    while let Some(i) = search.find(':') {
        let at = base + i;
        let after = &token[at + 1..];
        let number = after.chars().take_while(char::is_ascii_digit).count();
        let rest = &after[number..];
        let ends = rest.is_empty() || rest.starts_with(':');
        if number > 0 && ends && is_file_path(&token[..at]) {
            return Some(&token[..at]);
        }
        base = at + 1;
        search = &token[base..];
    }
    None
}

/// A file's path: a name with a short alphanumeric extension, not a URL, not a number.
fn is_file_path(path: &str) -> bool {
    if path.is_empty() || path.contains("://") || path.starts_with('<') {
        return false;
    }
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty()
        && (1..=6).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_go_build_failure_names_the_file_with_the_error_and_the_other_declaration() {
        let output = "Exit code 1\n[test] $ go test ./...\n# example.com/app/store\n\
            internal/store/attribution.go:47:38: cannot use text (variable of type string) as []byte value\n\
            internal/store/attribution.go:137:6: countLines redeclared in this block\n\
            \tinternal/store/common.go:762:6: other declaration of countLines\n\
            FAIL\texample.com/app/store [build failed]\nok  \texample.com/app/cli\t0.407s\n";
        assert_eq!(
            error_sites(output),
            ["internal/store/attribution.go", "internal/store/common.go"]
        );
    }

    #[test]
    fn each_toolchains_way_of_naming_the_place() {
        let rust = "error[E0308]: mismatched types\n  --> src/parse/table.rs:88:17\n   |";
        assert_eq!(error_sites(rust), ["src/parse/table.rs"]);
        let ts = "src/api/client.ts(14,7): error TS2322: Type 'string' is not assignable";
        assert_eq!(error_sites(ts), ["src/api/client.ts"]);
        let py = "Traceback (most recent call last):\n  File \"app/models.py\", line 40, in save\n    x = y\nKeyError: 'id'";
        assert_eq!(error_sites(py), ["app/models.py"]);
        let jest = "    at Object.<anonymous> (src/job.test.ts:8:13)\n    at run (node_modules/jest/build/x.js:1:2)";
        assert_eq!(error_sites(jest), ["src/job.test.ts"]);
        let swift = r"C:\work\App\Views\Login.swift:12:5: error: cannot find 'theme' in scope";
        assert_eq!(error_sites(swift), [r"C:\work\App\Views\Login.swift"]);
        // `go test` names the file from its package's folder: no path to record.
        let go_test = "--- FAIL: TestSplit (0.00s)\n    split_test.go:23: got 2 lines, want 3";
        assert!(error_sites(go_test).is_empty());
    }

    #[test]
    fn times_urls_versions_and_long_lists_are_not_sites() {
        let output = "started 12:30:05\nsee https://example.com/a.html:80\nnode v20.11:1\n";
        assert!(error_sites(output).is_empty());
        let many: String = (0..20)
            .map(|i| format!("src/m{i}.rs:1:1: error\n"))
            .collect();
        assert_eq!(error_sites(&many).len(), MAX_SITES);
    }
}
