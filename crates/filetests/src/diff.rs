//! A line diff for precise-output failures.

/// Lines kept from each side before the diff falls back to the first difference (the
/// table is quadratic).
const MAX_LINES: usize = 2000;

/// `expected` against `actual` as `-`/`+`/` ` lines (longest common subsequence), so a
/// precise-output failure shows what moved rather than two walls of text.
pub fn line_diff(expected: &[&str], actual: &[&str]) -> String {
    let mut out = String::new();
    if expected.len() > MAX_LINES || actual.len() > MAX_LINES {
        let k = expected
            .iter()
            .zip(actual)
            .position(|(e, a)| e != a)
            .unwrap_or(expected.len().min(actual.len()));
        out.push_str(&format!("first difference at output line {}:\n", k + 1));
        if let Some(e) = expected.get(k) {
            out.push_str(&format!("-{e}\n"));
        }
        if let Some(a) = actual.get(k) {
            out.push_str(&format!("+{a}\n"));
        }
        return out;
    }
    let (n, m) = (expected.len(), actual.len());
    // lcs[i][j]: the common subsequence length of expected[i..] and actual[j..].
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if expected[i] == actual[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            out.push_str(&format!(" {}\n", expected[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            // Removals first, as unified diffs show them.
            out.push_str(&format!("-{}\n", expected[i]));
            i += 1;
        } else {
            out.push_str(&format!("+{}\n", actual[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    #[test]
    fn diff_marks_changes() {
        assert_eq!(line_diff(&["a", "b", "c"], &["a", "c"]), " a\n-b\n c\n");
        assert_eq!(line_diff(&["a"], &["a", "x"]), " a\n+x\n");
        assert_eq!(line_diff(&[], &["x"]), "+x\n");
        assert_eq!(line_diff(&["a", "b"], &["a", "c"]), " a\n-b\n+c\n");
        assert_eq!(line_diff(&["x", "a"], &["a", "y"]), "-x\n a\n+y\n");
        let big: Vec<String> = (0..2001).map(|i| i.to_string()).collect();
        let mut big2 = big.clone();
        big2[5] = "five".into();
        let e: Vec<&str> = big.iter().map(String::as_str).collect();
        let a: Vec<&str> = big2.iter().map(String::as_str).collect();
        assert_eq!(
            line_diff(&e, &a),
            "first difference at output line 6:\n-5\n+five\n"
        );
    }
}
