//! The value and block names of one function body.
//!
//! Almost every name in real IR is a prefix and a number: clang's `%0`..`%N` and `%12:`
//! labels, `%arrayidx12`, Gyre's own export `%v123`, `block45:`. Those live in vectors
//! indexed by the number, one per prefix (a few prefixes per body), so a lookup is a
//! short prefix comparison and an index instead of hashing the text into a table of
//! millions of entries (whose cache misses dominated large imports). Every other name
//! (no number, a leading zero, too many prefixes, a number far beyond the body's size)
//! goes to a hash map. Which of the two holds a name depends only on the name and on the
//! prefixes seen before it, and the prefix list only grows, so a name is always looked
//! up where it was stored.

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::fmt;

/// Most prefixes with a vector of their own; later prefixes use the hash map.
const MAX_PREFIXES: usize = 8;

/// Names of one body mapped to `V`.
pub(crate) struct NameTable<'a, V> {
    /// Per prefix (its [`key`]), the entries by number.
    dense: Vec<(u64, Vec<Option<V>>)>,
    /// The other names (`None`: looked up by [`NameTable::slot`] but never set).
    other: FxHashMap<Cow<'a, str>, Option<V>>,
    /// Largest number kept in a vector: bounds the vectors by the body's size whatever
    /// numbers the input uses.
    limit: u32,
    /// How many more entries all the vectors together may grow by. When a name would
    /// need more, it goes to the map and no vector grows again: a name is then in a
    /// vector exactly when its number is below that vector's length, before and after.
    room: usize,
}

/// A name as [`NameTable::iter`] gives it back.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Name<'s> {
    /// Stored as written.
    Text(&'s str),
    /// A prefix (its [`key`]) and a number.
    Numbered(u64, u32),
}

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Name::Text(s) => f.write_str(s),
            Name::Numbered(p, n) => write!(f, "{}{n}", unkey(*p)),
        }
    }
}

/// A prefix of at most 7 bytes as one word (its bytes and its length), so that finding
/// it among the table's prefixes compares integers, not strings.
#[cfg(test)]
fn key(p: &str) -> Option<u64> {
    let b = p.as_bytes();
    if b.len() > 7 {
        return None;
    }
    // Byte by byte: a slice copy of a variable length was a `memcpy` call per lookup.
    let mut w = (b.len() as u64) << 56;
    for (i, &c) in b.iter().enumerate() {
        w |= u64::from(c) << (8 * i);
    }
    Some(w)
}

/// The prefix a [`key`] was made from.
fn unkey(k: u64) -> String {
    let w = k.to_le_bytes();
    String::from_utf8_lossy(&w[..usize::from(w[7])]).into_owned()
}

/// `name` as a prefix and a number in canonical decimal (no leading zero, at most nine
/// digits), if it ends in one.
#[cfg(test)]
fn split(name: &str) -> Option<(&str, u32)> {
    let b = name.as_bytes();
    // One backward pass reads the digits and their value (every name is split).
    let mut k = b.len();
    let mut n = 0u32;
    let mut scale = 1u32;
    while k > 0 && b[k - 1].is_ascii_digit() {
        if b.len() - k == 9 {
            return None;
        }
        n += u32::from(b[k - 1] - b'0') * scale;
        scale = scale.wrapping_mul(10);
        k -= 1;
    }
    let digits = b.len() - k;
    if digits == 0 || (digits > 1 && b[k] == b'0') {
        return None;
    }
    // `k` is just before an ASCII digit: a character boundary.
    Some((&name[..k], n))
}

/// `split` and then `key` in one pass over the bytes: the [`key`] of the prefix and the
/// number, if `name` is a prefix of at most 7 bytes and a number in canonical decimal.
/// Every name a body defines or uses goes through this: no string slicing (and its
/// character-boundary checks), one read of each byte.
#[inline]
fn split_key(name: &str) -> Option<(u64, u32)> {
    let b = name.as_bytes();
    let mut n = 0u32;
    let mut scale = 1u32;
    let mut digits = 0usize;
    for &c in b.iter().rev() {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if digits == 9 {
            return None;
        }
        n += u32::from(d) * scale;
        scale = scale.wrapping_mul(10);
        digits += 1;
    }
    let k = b.len() - digits;
    if digits == 0 || k > 7 || (digits > 1 && b[k] == b'0') {
        return None;
    }
    let mut w = (k as u64) << 56;
    for (i, &c) in b[..k].iter().enumerate() {
        w |= u64::from(c) << (8 * i);
    }
    Some((w, n))
}

impl<'a, V> NameTable<'a, V> {
    /// A table for a body of about `size` names (numbers up to a few times that are
    /// kept in vectors).
    pub fn new(size: usize) -> Self {
        let limit = size.saturating_mul(2).saturating_add(64).min(1 << 30) as u32;
        NameTable {
            dense: Vec::new(),
            other: FxHashMap::default(),
            limit,
            room: limit as usize * 2,
        }
    }

    /// The vector for `name`'s prefix and its index there, if the name is numbered, its
    /// prefix has a vector and the vector reaches the number.
    #[inline]
    fn slot_of(&self, name: &str) -> Option<(usize, usize)> {
        let (pk, n) = split_key(name)?;
        if n > self.limit {
            return None;
        }
        let k = self.dense.iter().position(|&(q, _)| q == pk)?;
        ((n as usize) < self.dense[k].1.len()).then_some((k, n as usize))
    }

    /// The entry of `name`.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&V> {
        match self.slot_of(name) {
            Some((k, n)) => self.dense[k].1[n].as_ref(),
            None => self.other.get(name).and_then(Option::as_ref),
        }
    }

    /// The entry of `name`, mutably.
    #[cfg(test)]
    pub fn get_mut(&mut self, name: &str) -> Option<&mut V> {
        match self.slot_of(name) {
            Some((k, n)) => self.dense[k].1[n].as_mut(),
            None => self.other.get_mut(name).and_then(Option::as_mut),
        }
    }

    /// Set the entry of `name` (replacing any).
    pub fn insert(&mut self, name: Cow<'a, str>, v: V) {
        *self.slot(name) = Some(v);
    }

    /// The place of `name`'s entry (`None` if it has none), made if needed: one lookup
    /// to read and then set an entry.
    pub fn slot(&mut self, name: Cow<'a, str>) -> &mut Option<V> {
        if let Some((pk, n)) = split_key(&name).filter(|&(_, n)| n <= self.limit) {
            let k = match self.dense.iter().position(|&(q, _)| q == pk) {
                Some(k) => Some(k),
                None if self.dense.len() < MAX_PREFIXES => {
                    self.dense.push((pk, Vec::new()));
                    Some(self.dense.len() - 1)
                }
                None => None,
            };
            if let Some(k) = k {
                let (n, vec) = (n as usize, &mut self.dense[k].1);
                if n < vec.len() {
                    return &mut vec[n];
                }
                let grow = n + 1 - vec.len();
                if grow <= self.room {
                    self.room -= grow;
                    vec.resize_with(n + 1, || None);
                    return &mut vec[n];
                }
                // Out of room: from now on only the map takes new names.
                self.room = 0;
            }
        }
        self.other.entry(name).or_insert(None)
    }

    /// Every entry with its name, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Name<'_>, &V)> {
        let dense = self.dense.iter().flat_map(|&(p, ref vec)| {
            vec.iter()
                .enumerate()
                .filter_map(move |(n, v)| Some((Name::Numbered(p, n as u32), v.as_ref()?)))
        });
        let other = self.other.iter();
        dense.chain(other.filter_map(|(k, v)| Some((Name::Text(k), v.as_ref()?))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_names() {
        assert_eq!(key("v").map(unkey).as_deref(), Some("v"));
        assert_eq!(key("").map(unkey).as_deref(), Some(""));
        assert_eq!(key("block.i").map(unkey).as_deref(), Some("block.i"));
        assert_ne!(key("a"), key("a\0"));
        assert_eq!(key("arrayidx"), None);
        assert_eq!(split("v12"), Some(("v", 12)));
        assert_eq!(split("0"), Some(("", 0)));
        assert_eq!(split("123"), Some(("", 123)));
        assert_eq!(split("x.1"), Some(("x.", 1)));
        assert_eq!(split("v01"), None);
        assert_eq!(split("v"), None);
        assert_eq!(split(""), None);
        assert_eq!(split("a1234567890"), None);
        assert_eq!(split("é7"), Some(("é", 7)));
        assert_eq!(split("a123456789"), Some(("a", 123_456_789)));
        assert_eq!(split("999999999"), Some(("", 999_999_999)));
        assert_eq!(split("1234567890"), None);
        assert_eq!(split("00"), None);
        assert_eq!(split("x10"), Some(("x", 10)));
        // The one-pass form agrees with the two steps.
        for name in [
            "v12",
            "0",
            "123",
            "x.1",
            "v01",
            "v",
            "",
            "a1234567890",
            "é7",
            "a123456789",
            "999999999",
            "1234567890",
            "00",
            "x10",
            "block.i7",
            "arrayidx3",
            "abcdefg0",
            "abcdefgh0",
            "é",
            "7é",
            "v0",
            "v00",
            "-1",
            ".5",
            "a/9",
        ] {
            let two = split(name).and_then(|(p, n)| Some((key(p)?, n)));
            assert_eq!(split_key(name), two, "{name}");
        }
    }

    #[test]
    fn vectors_are_bounded() {
        // Size 10: numbers up to 84 are kept in vectors, 168 entries in all; then the map.
        let mut t: NameTable<'_, u32> = NameTable::new(10);
        assert_eq!((t.limit, t.room), (84, 168));
        let names: Vec<String> = ["a", "b", "c", "d"]
            .iter()
            .flat_map(|p| [format!("{p}84"), format!("{p}3")])
            .collect();
        for (i, n) in names.iter().enumerate() {
            t.insert(Cow::Borrowed(n.as_str()), i as u32);
        }
        // `a84` takes 85 entries; `b84` would need 85 of the 83 left, so it and every
        // later name beyond its vector's end go to the map.
        let in_vectors: usize = t.dense.iter().map(|(_, v)| v.len()).sum();
        assert!(in_vectors <= 168, "{in_vectors}");
        assert_eq!(t.room, 0);
        assert!(!t.other.is_empty());
        for (i, n) in names.iter().enumerate() {
            assert_eq!(t.get(n), Some(&(i as u32)), "{n}");
        }
        assert_eq!(t.get("a5"), None);
        assert_eq!(t.get("c84"), Some(&4));
    }

    #[test]
    fn table_agrees_with_a_map() {
        // Names that go to vectors and to the map, with prefixes beyond the limit and
        // numbers beyond the size: every lookup must agree with a plain map.
        let mut names: Vec<String> = Vec::new();
        for p in [
            "", "v", "t", "block", "a", "b", "c", "d", "arrayidx", "é", "e", "f", "g",
        ] {
            for n in [0u32, 1, 2, 7, 30, 31, 99, 5000] {
                names.push(format!("{p}{n}"));
            }
            names.push(format!("{p}07"));
            names.push(format!("{p}x"));
        }
        let mut t: NameTable<'_, usize> = NameTable::new(10);
        let mut m: FxHashMap<String, usize> = FxHashMap::default();
        for (i, n) in names.iter().enumerate() {
            if i % 3 == 0 {
                continue;
            }
            assert_eq!(t.get(n), m.get(n.as_str()), "{n}");
            // A slot looked at but not set is no entry.
            assert_eq!(
                *t.slot(Cow::Borrowed(n.as_str())),
                m.get(n.as_str()).copied()
            );
            // Owned and borrowed names are the same name.
            let key = if i % 2 == 0 {
                Cow::Owned(n.clone())
            } else {
                Cow::Borrowed(n.as_str())
            };
            t.insert(key, i);
            m.insert(n.clone(), i);
            if let Some(v) = t.get_mut(n) {
                *v += 1000;
            }
            *m.get_mut(n).unwrap() += 1000;
        }
        for n in &names {
            assert_eq!(t.get(n), m.get(n.as_str()), "{n}");
        }
        let mut all: Vec<(String, usize)> = t.iter().map(|(k, &v)| (k.to_string(), v)).collect();
        all.sort();
        let mut want: Vec<(String, usize)> = m.into_iter().collect();
        want.sort();
        assert_eq!(all, want);
        assert_eq!(t.dense.len(), MAX_PREFIXES);
        assert!(!t.other.is_empty());
    }
}
