//! Shared helpers for the integration tests.
#![allow(dead_code)]

pub mod trace;

use gyre_analysis::cfggen::CfgShape;
use gyre_analysis::testutil::function_from_edges;
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree};
use gyre_ir::{Block, EntityRef, Function};

/// A function and all its analyses.
pub struct Analyzed {
    pub func: Function,
    pub cfg: Cfg,
    pub dt: DomTree,
    pub pdt: PostDomTree,
    pub li: LoopInfo,
}

pub fn analyze_func(func: Function) -> Analyzed {
    let cfg = Cfg::with_function(&func).expect("valid CFG");
    let dt = DomTree::with_function(&func, &cfg);
    let pdt = PostDomTree::with_function(&func, &cfg);
    let li = LoopInfo::with_function(&func, &cfg, &dt);
    Analyzed {
        func,
        cfg,
        dt,
        pdt,
        li,
    }
}

pub fn analyze(n: usize, edges: &[(u32, u32)]) -> Analyzed {
    analyze_func(function_from_edges(n, edges))
}

pub fn analyze_shape(s: &CfgShape) -> Analyzed {
    analyze_func(s.to_function())
}

pub fn b(i: u32) -> Block {
    Block::new(i as usize)
}
