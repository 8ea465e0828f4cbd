//! Byte-level mutations for the text targets (parse_gir, parse_ll), in the style of
//! libFuzzer's: erase, duplicate, insert a dictionary token, change bytes, swap lines.

use gyre_ir::generate::RandomSource;

/// Apply 1 to 8 random mutations to `data`, inserting tokens from `dict`.
pub fn mutate(data: &mut Vec<u8>, rng: &mut impl RandomSource, dict: &[&str]) {
    let n = 1 + rng.below(8);
    for _ in 0..n {
        mutate_once(data, rng, dict);
    }
}

fn mutate_once(data: &mut Vec<u8>, rng: &mut impl RandomSource, dict: &[&str]) {
    let len = data.len() as u64;
    let pos = |rng: &mut dyn RandomSource| rng.below(len + 1) as usize;
    match rng.below(8) {
        0 if len > 0 => {
            // Erase a short range.
            let a = pos(rng).min(data.len() - 1);
            let b = (a + 1 + rng.below(16) as usize).min(data.len());
            data.drain(a..b);
        }
        1 if len > 0 => {
            // Duplicate a range in place.
            let a = pos(rng).min(data.len() - 1);
            let b = (a + 1 + rng.below(64) as usize).min(data.len());
            let chunk: Vec<u8> = data[a..b].to_vec();
            let at = pos(rng);
            data.splice(at..at, chunk);
        }
        2 | 3 if !dict.is_empty() => {
            let t = dict[rng.below(dict.len() as u64) as usize];
            let at = pos(rng);
            data.splice(at..at, t.bytes());
        }
        4 if len > 0 => {
            // An interesting byte.
            let at = pos(rng).min(data.len() - 1);
            data[at] = *[
                b'0', b'9', b'-', b'%', b'@', b'(', b')', b'{', b'}', b',', b' ', b'\n', b'"',
                b'\\', b'<', b'>', 0, 0xff,
            ]
            .get(rng.below(18) as usize)
            .unwrap_or(&b'x');
        }
        5 => {
            // An interesting number.
            let at = pos(rng);
            let k = [
                "0",
                "-1",
                "1",
                "2147483647",
                "-2147483648",
                "4294967296",
                "18446744073709551615",
                "99999999999999999999999",
                "0x",
                "1e400",
                "nan",
            ][rng.below(11) as usize];
            data.splice(at..at, k.bytes());
        }
        6 => {
            // Swap two lines.
            let text = String::from_utf8_lossy(data).into_owned();
            let mut lines: Vec<&str> = text.split('\n').collect();
            if lines.len() >= 2 {
                let a = rng.below(lines.len() as u64) as usize;
                let b = rng.below(lines.len() as u64) as usize;
                lines.swap(a, b);
                *data = lines.join("\n").into_bytes();
            }
        }
        _ if len > 0 => {
            // Truncate, or replace a byte by one copied from elsewhere in the input.
            if rng.below(4) == 0 {
                data.truncate(pos(rng));
            } else {
                let a = pos(rng).min(data.len() - 1);
                let b = pos(rng).min(data.len() - 1);
                data[a] = data[b];
            }
        }
        _ => data.extend_from_slice(b"\n"),
    }
}

/// Inputs of `target` from its directories `seeds/` and `corpus/` (the latter kept by
/// campaigns, not checked in), as mutation bases.
pub fn bases(target: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for what in ["seeds", "corpus"] {
        let dir = crate::target_dir(what, target);
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        out.extend(paths.iter().filter_map(|p| std::fs::read(p).ok()));
    }
    out
}
