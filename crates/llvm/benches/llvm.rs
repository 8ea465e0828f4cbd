//! Import and export throughput in bytes of LLVM text per second, on a generated
//! function (a 20,000-block chain with a phi loop) and on the lit corpus files.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gyre_llvm::{export_module, import_module_with, ExportOptions, ExternalCalls, ImportOptions};
use std::fmt::Write;

fn chain(n: usize) -> String {
    let mut s = String::from("define i32 @chain(i32 %a, ptr %p) {\nentry:\n  br label %b0\n");
    for i in 0..n {
        let prev = if i == 0 {
            "%a".to_string()
        } else {
            format!("%s{}", i - 1)
        };
        let _ = write!(
            s,
            "b{i}:\n  %g{i} = getelementptr inbounds [4 x i32], ptr %p, i64 {i}, i64 2\n  %l{i} = load i32, ptr %g{i}, align 4\n  %s{i} = add nsw i32 {prev}, %l{i}\n  br label %b{}\n",
            i + 1
        );
    }
    let _ = write!(s, "b{n}:\n  ret i32 %s{}\n}}\n", n - 1);
    s
}

fn corpus() -> Vec<String> {
    let Some(dir) = gyre_test_tools::corpus("llvm-lit", "llvm bench") else {
        return Vec::new();
    };
    let dir = dir.display();
    let Ok(m) = std::fs::read_to_string(format!("{dir}/MANIFEST.tsv")) else {
        return Vec::new();
    };
    m.lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            std::fs::read_to_string(format!("{dir}/{}/{}", c.first()?, c.get(1)?)).ok()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let opts = ImportOptions {
        external_calls: ExternalCalls::Stub,
    };
    let src = chain(20_000);
    let mut g = c.benchmark_group("llvm");
    g.throughput(Throughput::Bytes(src.len() as u64));
    g.bench_function("import_chain", |b| {
        b.iter(|| import_module_with(&src, &opts).expect("imports"))
    });
    let m = import_module_with(&src, &opts).expect("imports");
    let out = export_module(&m, &ExportOptions::default());
    g.throughput(Throughput::Bytes(out.len() as u64));
    g.bench_function("export_chain", |b| {
        b.iter(|| export_module(&m, &ExportOptions::default()))
    });
    let files = corpus();
    if !files.is_empty() {
        g.throughput(Throughput::Bytes(
            files.iter().map(|f| f.len() as u64).sum(),
        ));
        g.bench_function("import_corpus", |b| {
            b.iter(|| {
                files
                    .iter()
                    .filter(|f| import_module_with(f, &opts).is_ok())
                    .count()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
