//! The per-function analysis cache, re-exported from [`gyre_analysis::manager`] where it
//! lives so that the PTX back end shares it (one cache per function, filled by the
//! optimizer and read by the emitter).

pub use gyre_analysis::manager::{
    Analyses, Analysis, AnalysisCache, AnalysisError, ModuleAnalyses, NUM_ANALYSES,
};
