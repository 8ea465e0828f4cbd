//! Replacing uses of values: in one batch through an alias map, or one value at a time
//! through a use-list index; and reading or replacing a memory access's address operand.
//!
//! [`Function::replace_all_uses`] scans the whole function per call, so replacing `k`
//! values costs O(k · insts). Here:
//!
//! - [`replace_uses_batch`] applies a whole [`ValueMap`] (chains such as `v1 -> v2 -> v3`
//!   resolved first) in one sweep over the laid-out instructions: O(insts + entries);
//! - [`UseLists`] indexes, for each value, the instructions that use it (built in one
//!   O(insts) sweep); [`UseLists::replace_all_uses`] then costs O(uses of `from`) (times
//!   the operand count of each user, which it rewrites) and keeps the index current.
//!
//! Neither changes the CFG, the dominator tree or the loop forest (operands and branch
//! arguments change, targets do not). Analyses that look at values (uniformity, anything
//! keyed by instruction data) are invalidated.

use super::clone::{AliasCycle, ValueMap};
use gyre_ir::{Function, Inst, InstructionData, SecondaryMap, Value};

/// The address operand of a memory access (`load`, `store`, `atomic_rmw`, `atomic_cas`),
/// if `d` is one: what passes that rewrite addresses (`loop-reduce`,
/// `separate-const-offset`) read and replace.
pub fn address_of(d: &InstructionData) -> Option<Value> {
    match *d {
        InstructionData::Load { ptr, .. } => Some(ptr),
        InstructionData::Store { args, .. } => Some(args[1]),
        InstructionData::AtomicRmw { args, .. } => Some(args[0]),
        InstructionData::AtomicCas { args, .. } => Some(args[0]),
        _ => None,
    }
}

/// Replace the address operand of the memory access `i` by `p`. Panics if `i` is not
/// one ([`address_of`] says which are).
pub fn set_address(func: &mut Function, i: Inst, p: Value) {
    match func.dfg.inst_mut(i) {
        InstructionData::Load { ptr, .. } => *ptr = p,
        InstructionData::Store { args, .. } => args[1] = p,
        InstructionData::AtomicRmw { args, .. } => args[0] = p,
        InstructionData::AtomicCas { args, .. } => args[0] = p,
        _ => unreachable!("only accesses are rewritten"),
    }
}

/// Replace every use of each mapped value (operands and branch arguments of the laid-out
/// instructions) by the end of its chain in `map`, in one sweep. Returns the number of
/// operand slots rewritten.
///
/// `map` is first resolved in place ([`ValueMap::resolve_chains`]); a cycle is an error
/// and nothing is rewritten. Requires the result to be well formed (replacements of the
/// same type, defined where the uses are: the caller's business). Definitions of replaced
/// values are left in place (dead, for a later cleanup). Instructions outside the layout
/// are not touched. O(laid-out instructions + map entries).
pub fn replace_uses_batch(func: &mut Function, map: &mut ValueMap) -> Result<usize, AliasCycle> {
    map.resolve_chains()?;
    if map.num_values() == 0 {
        return Ok(0);
    }
    let mut n = 0;
    let mut block = func.layout.entry_block();
    while let Some(b) = block {
        let mut cur = func.layout.first_inst(b);
        while let Some(i) = cur {
            func.dfg.map_inst_values(i, |v| match map.get(v) {
                Some(w) if w != v => {
                    n += 1;
                    w
                }
                _ => v,
            });
            cur = func.layout.next_inst(i);
        }
        block = func.layout.next_block(b);
    }
    Ok(n)
}

/// End of a use list.
const NIL: u32 = u32::MAX;

#[derive(Copy, Clone)]
struct UseNode {
    inst: Inst,
    next: u32,
}

/// For each value, the instructions that use it (as an operand or a branch argument),
/// each listed once however many times it uses the value. Singly linked lists in one
/// node array, heads in a `SecondaryMap`; freed nodes are reused.
///
/// **Kept current by**: [`UseLists::compute`], [`UseLists::replace_all_uses`] and
/// [`UseLists::add_inst`]. **Not kept in sync with** other edits: an instruction whose
/// operands are changed elsewhere, or that is removed from the layout, stays listed under
/// its old operands (replacing through a stale entry is a harmless no-op, and the entry is
/// dropped then); call `compute` again after such edits.
#[derive(Clone)]
pub struct UseLists {
    head: SecondaryMap<Value, u32>,
    nodes: Vec<UseNode>,
    free: u32,
}

impl Default for UseLists {
    fn default() -> Self {
        UseLists {
            head: SecondaryMap::with_default(NIL),
            nodes: Vec::new(),
            free: NIL,
        }
    }
}

impl UseLists {
    /// An empty index.
    pub fn new() -> UseLists {
        UseLists::default()
    }

    /// The index of `func`'s laid-out instructions.
    pub fn with_function(func: &Function) -> UseLists {
        let mut u = UseLists::new();
        u.compute(func);
        u
    }

    /// Forget everything, keeping the memory.
    pub fn clear(&mut self) {
        self.head.clear();
        self.nodes.clear();
        self.free = NIL;
    }

    /// Index every laid-out instruction of `func`: one sweep, O(insts + operands).
    pub fn compute(&mut self, func: &Function) {
        self.clear();
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                self.add_inst(func, i);
            }
        }
    }

    /// Record the uses of `inst` (a new instruction, or one whose operands were changed
    /// outside this index after its old entries were dropped). O(operands).
    pub fn add_inst(&mut self, func: &Function, inst: Inst) {
        func.dfg.for_each_inst_value(inst, |v| {
            // A repeat use by the same instruction is already at the head of the list.
            let h = self.head[v];
            if h != NIL && self.nodes[h as usize].inst == inst {
                return;
            }
            let node = UseNode { inst, next: h };
            let k = if self.free != NIL {
                let k = self.free;
                self.free = self.nodes[k as usize].next;
                self.nodes[k as usize] = node;
                k
            } else {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            };
            self.head[v] = k;
        });
    }

    /// The instructions recorded as using `v`, most recently added first.
    pub fn users(&self, v: Value) -> impl Iterator<Item = Inst> + '_ {
        let mut k = self.head.get(v).copied().unwrap_or(NIL);
        core::iter::from_fn(move || {
            if k == NIL {
                return None;
            }
            let n = self.nodes[k as usize];
            k = n.next;
            Some(n.inst)
        })
    }

    /// Does any recorded instruction use `v`?
    pub fn has_uses(&self, v: Value) -> bool {
        self.head.get(v).is_some_and(|&h| h != NIL)
    }

    /// Replace every use of `from` by `to` in the recorded users of `from` (laid out or
    /// not), and move them to `to`'s list (an instruction already using `to` is not
    /// listed twice). Returns the number of instructions rewritten.
    ///
    /// Requires `to` to be usable wherever `from` is (same type, dominating definition:
    /// the caller's business). O(uses of `from` · operands of each user), independent of
    /// the function's size.
    pub fn replace_all_uses(&mut self, func: &mut Function, from: Value, to: Value) -> usize {
        if from == to || !self.has_uses(from) {
            return 0;
        }
        let mut k = core::mem::replace(&mut self.head[from], NIL);
        let mut n = 0;
        while k != NIL {
            let UseNode { inst, next } = self.nodes[k as usize];
            let (mut had_from, mut had_to) = (false, false);
            func.dfg.map_inst_values(inst, |v| {
                had_to |= v == to;
                if v == from {
                    had_from = true;
                    to
                } else {
                    v
                }
            });
            n += usize::from(had_from);
            if had_from && !had_to {
                self.nodes[k as usize].next = self.head[to];
                self.head[to] = k;
            } else {
                // Stale, or already listed under `to`.
                self.nodes[k as usize].next = self.free;
                self.free = k;
            }
            k = next;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gyre_ir::{parse_function, write_function, EntityRef};

    const SRC: &str = "kernel @k(i32) {
block0(v0: i32):
    v1 = iadd v0, v0
    v2 = iadd v0, v0
    v3 = iadd v0, v0
    v4 = imul v1, v2
    v5 = icmp slt v4, v3
    brif v5, block1(v1, v3), block1(v3, v1)
block1(v6: i32, v7: i32):
    return
}
";

    fn text(f: &Function) -> String {
        let mut s = String::new();
        write_function(&mut s, f, None).expect("writes");
        s
    }

    #[test]
    fn batch_resolves_chains() {
        let mut f = parse_function(SRC).expect("parses");
        let v = |n| Value::new(n);
        let mut map = ValueMap::new();
        map.insert(v(1), v(2));
        map.insert(v(2), v(3));
        let n = replace_uses_batch(&mut f, &mut map).expect("acyclic");
        assert_eq!(n, 4);
        let out = text(&f);
        assert!(out.contains("v4 = imul v3, v3"), "{out}");
        assert!(
            out.contains("brif v5, block1(v3, v3), block1(v3, v3)"),
            "{out}"
        );
        map.insert(v(3), v(1));
        let before = text(&f);
        let err = replace_uses_batch(&mut f, &mut map);
        assert!(
            matches!(err, Err(AliasCycle(x)) if x == v(1) || x == v(3)),
            "{err:?}"
        );
        assert_eq!(text(&f), before);
    }

    #[test]
    fn use_lists_follow_replacements() {
        let mut f = parse_function(SRC).expect("parses");
        let v = |n| Value::new(n);
        let mut u = UseLists::with_function(&f);
        let users = |u: &UseLists, x| u.users(x).count();
        assert_eq!(users(&u, v(0)), 3);
        assert_eq!(users(&u, v(1)), 2);
        assert_eq!(users(&u, v(3)), 2);
        assert!(!u.has_uses(v(6)));
        // brif uses v1 and v3: after v1 -> v3 it is listed once under v3.
        assert_eq!(u.replace_all_uses(&mut f, v(1), v(3)), 2);
        assert!(!u.has_uses(v(1)));
        assert_eq!(users(&u, v(3)), 3);
        assert_eq!(u.replace_all_uses(&mut f, v(3), v(2)), 3);
        assert_eq!(users(&u, v(2)), 3);
        let out = text(&f);
        assert!(out.contains("v4 = imul v2, v2"), "{out}");
        assert!(out.contains("v5 = icmp slt v4, v2"), "{out}");
        assert!(
            out.contains("brif v5, block1(v2, v2), block1(v2, v2)"),
            "{out}"
        );
        assert_eq!(u.replace_all_uses(&mut f, v(2), v(2)), 0);
    }
}
