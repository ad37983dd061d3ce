#!/usr/bin/env python3
"""Measure the numbers trainclock's cost model is calibrated with, on your own GPUs.

    # one GPU: GEMM per dtype over transformer shapes, HBM bandwidth, fused attention
    python3 tools/measure_gpu.py --gpu h100-sxm --out measurements.json
    # collectives intra and inter node as well (NCCL all-reduce, all-gather, all-to-all bus bandwidth)
    torchrun --nnodes 2 --nproc-per-node 8 ... tools/measure_gpu.py --gpu h100-sxm --node dgx-h100 --out measurements.json
    # then
    trainclock calibrate --measurements measurements.json --out calib.json
    trainclock predict ... --calibration calib.json

Writes
  --out              the raw measurements (schema trainclock/measurements/v1): every GEMM shape and
                     dtype, the copy bandwidth, attention throughput, collective bus bandwidths;
                     `trainclock calibrate --measurements` reads it;
  --calibration-out  also runs that calibrate (--trainclock CLI): a calibration ({"gpus": {"<preset>":
                     {...}}}) that predict, compare, search, validate and the web page accept, each
                     efficiency the measured figure over the preset's datasheet peak (GPU: peak_tflops,
                     memory_bw_gbps; node: intra_bw_gbps, inter_bw_gbps), as the presets' "measured" block.

--cpu runs a reduced mode on the CPU (tiny shapes, gloo, one rank) so the code path is testable
without a GPU (python/tests/test_measure_gpu.py); its numbers describe the CPU, not a GPU.

Method (what each number means):
  GEMM       C = A @ B for M x K by K x N in the transformer's shapes (QKV, attention output, MLP up
             and down of a hidden size, M = tokens); 2 M N K FLOPs over the median of timed
             repetitions after warm-up (CUDA events). fp32 runs with TF32 off, tf32 with it on; fp8
             uses torch._scaled_mm (e4m3, per-tensor scales) where the GPU and torch have it. The
             calibration's gemm_efficiency is the best large-shape figure (the presets' MAMF-like
             definition: Bekman, "Maximum Achievable Matmul FLOPS").
  memory     a device-to-device copy of a large buffer: 2 x bytes (read + write) per second.
  attention  torch.nn.functional.scaled_dot_product_attention (the fused/flash kernel for 16-bit
             dtypes), non-causal: 4 b h s^2 d FLOPs forward, 2.5 x that backward (FlashAttention-2's
             count); timed forward, and forward+backward (the figure calibrate uses).
  collective NCCL bus bandwidth as nccl-tests defines it (docs/PERFORMANCE.md): all-reduce
             algbw x 2(n-1)/n, all-gather and all-to-all algbw x (n-1)/n; "intra" over the ranks of
             one node, "inter" over one rank per node (the NICs' share).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


# ---- timing ---------------------------------------------------------------------------------------

def timed(fn, device, warmup, iters):
    """Median seconds of one call of fn() over iters timed calls after warmup calls."""
    for _ in range(warmup):
        fn()
    samples = []
    if device.type == "cuda":
        for _ in range(iters):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) / 1e3)
    else:
        for _ in range(iters):
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


# ---- GEMM -----------------------------------------------------------------------------------------

def gemm_shapes(hiddens, tokens):
    """(M, N, K) of a transformer layer's GEMMs: QKV, output projection, MLP up and down (4h)."""
    shapes = []
    for h in hiddens:
        for n, k in ((3 * h, h), (h, h), (4 * h, h), (h, 4 * h)):
            shapes.append((tokens, n, k))
    return shapes


def fp8_supported(device):
    if device.type != "cuda" or not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return False
    major, minor = torch.cuda.get_device_capability(device)
    return (major, minor) >= (8, 9)


def measure_gemm(device, dtypes, shapes, warmup, iters):
    rows = []
    for name in dtypes:
        if name == "fp8" and not fp8_supported(device):
            print("measure_gpu: fp8 skipped (needs an sm_89+ GPU and torch._scaled_mm)", file=sys.stderr)
            continue
        if name in ("fp16", "bf16") and device.type == "cpu" and name == "fp16":
            continue  # CPU fp16 matmul is an emulation, not a unit of interest
        if device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        for m, n, k in shapes:
            if name == "fp8":
                a = torch.randn(m, k, device=device).to(torch.float8_e4m3fn)
                b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm needs
                one = torch.tensor(1.0, device=device)
                fn = lambda a=a, b=b, one=one: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            else:
                a = torch.randn(m, k, device=device, dtype=DTYPES[name])
                b = torch.randn(k, n, device=device, dtype=DTYPES[name])
                fn = lambda a=a, b=b: torch.matmul(a, b)
            seconds = timed(fn, device, warmup, iters)
            rows.append({"dtype": name, "m": m, "n": n, "k": k, "seconds": seconds, "tflops": 2.0 * m * n * k / seconds / 1e12})
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    return rows


# ---- memory and attention -------------------------------------------------------------------------

def measure_memory(device, megabytes, warmup, iters):
    elements = megabytes * 2**20 // 4
    src = torch.empty(elements, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    seconds = timed(lambda: dst.copy_(src), device, warmup, iters)
    nbytes = 2 * src.numel() * src.element_size()  # read + write
    return {"op": "copy", "bytes": nbytes, "seconds": seconds, "bandwidth_gbps": nbytes / seconds / 1e9}


def measure_attention(device, dtypes, batch, heads, seq, head_dim, warmup, iters):
    """Forward, and forward+backward (what training runs), of the fused attention kernel."""
    rows = []
    for name in dtypes:
        if name in ("tf32", "fp8") or (device.type == "cpu" and name == "fp16"):
            continue
        q, k, v = (torch.randn(batch, heads, seq, head_dim, device=device, dtype=DTYPES[name], requires_grad=True) for _ in range(3))
        fused = hasattr(torch.nn.functional, "scaled_dot_product_attention")  # torch >= 2.0
        if fused:
            attend = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v)
        else:  # materialised scores: measured, but not a fused-attention efficiency
            scale = head_dim ** -0.5
            attend = lambda: torch.softmax(q @ k.transpose(-1, -2) * scale, dim=-1) @ v
        grad = torch.randn(batch, heads, seq, head_dim, device=device, dtype=DTYPES[name])
        forward = 4.0 * batch * heads * seq * seq * head_dim
        # Backward = 2.5 x forward FLOPs (FlashAttention-2, Dao 2023, arXiv 2307.08691, its benchmark's count).
        for label, flops, fn in (("forward", forward, lambda: attend().detach()),
                                 ("forward+backward", 3.5 * forward, lambda: attend().backward(grad))):
            with torch.set_grad_enabled(label != "forward"):
                seconds = timed(fn, device, warmup, iters)
            rows.append({"dtype": name, "batch": batch, "heads": heads, "seq": seq, "head_dim": head_dim, "pass": label,
                         "kernel": "sdpa" if fused else "unfused (torch < 2.0)", "seconds": seconds, "tflops": flops / seconds / 1e12})
    return rows


# ---- collectives ----------------------------------------------------------------------------------

BUS_FACTOR = {"all_reduce": lambda n: 2.0 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n}


def run_collective(op, group, n, nbytes, device, warmup, iters):
    import torch.distributed as dist
    elements = max(nbytes // 4 // n * n, n)
    x = torch.ones(elements, dtype=torch.float32, device=device)
    if op == "all_reduce":
        fn = lambda: dist.all_reduce(x, group=group)
    elif op == "all_gather":
        outs = [torch.empty_like(x) for _ in range(n)]  # the list form: gloo has no all_gather_into_tensor
        fn = lambda: dist.all_gather(outs, x, group=group)
    else:
        out = torch.empty_like(x)
        fn = lambda: dist.all_to_all_single(out, x, group=group)

    def synced():
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    seconds = timed(synced, torch.device("cpu"), warmup, iters)  # wall time across ranks
    size = x.numel() * x.element_size()
    algbw = size / seconds / 1e9
    return {"op": op, "ranks": n, "bytes": size, "seconds": seconds, "algbw_gbps": algbw,
            "busbw_gbps": algbw * BUS_FACTOR[op](n) if n > 1 else None}


def measure_collectives(device, nbytes, warmup, iters, cpu):
    import torch.distributed as dist
    if not dist.is_available():
        return []
    if "WORLD_SIZE" not in os.environ:
        if not cpu:
            return []  # a single process: no collectives to measure (run under torchrun)
        os.environ.update({"WORLD_SIZE": "1", "RANK": "0", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
                           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": os.environ.get("MASTER_PORT", "29571")})
    dist.init_process_group("gloo" if cpu else "nccl")
    world, rank = dist.get_world_size(), dist.get_rank()
    local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    nodes = max(world // local, 1)
    rows = []
    # Intra: the ranks of each node; inter: one rank per node (local rank r of every node).
    intra_groups = [dist.new_group(list(range(node * local, (node + 1) * local))) for node in range(nodes)]
    inter_groups = [dist.new_group(list(range(r, world, local))) for r in range(local)] if nodes > 1 else []
    my_intra = intra_groups[rank // local]
    for op in ("all_reduce", "all_gather", "all_to_all"):
        for group, ranks, name in ((my_intra, local, "intra"), (inter_groups[rank % local] if inter_groups else None, nodes, "inter")):
            if group is None:
                continue
            try:
                rows.append(dict(run_collective(op, group, ranks, nbytes, device, warmup, iters), group=name))
            except RuntimeError as error:  # e.g. a backend without all-to-all (gloo in older torch)
                print(f"measure_gpu: {op} ({name}) skipped: {str(error).splitlines()[0]}", file=sys.stderr)
    dist.barrier()
    dist.destroy_process_group()
    return rows if rank == 0 else None


# ---- calibration ----------------------------------------------------------------------------------

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_calibration(measurements_path, calibration_path, trainclock_cli):
    """`trainclock calibrate --measurements` turns the file into a calibration (the rule lives there:
    each efficiency over the GPU/node preset's peak); the CLI is --trainclock, else this checkout's."""
    for cli in (trainclock_cli, os.path.join(REPO, "build", "bin", "trainclock")):
        try:
            run = subprocess.run([cli, "calibrate", "--measurements", measurements_path, "--out", calibration_path],
                                 capture_output=True, text=True, check=False)
        except OSError:
            continue
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            raise SystemExit(f"measure_gpu: trainclock calibrate failed (exit {run.returncode})")
        return
    raise SystemExit("measure_gpu: trainclock not found: build it (make build) or pass --trainclock PATH; "
                     f"then run trainclock calibrate --measurements {measurements_path} --out {calibration_path}")


# ---- main -----------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", help="trainclock GPU preset id of this GPU (recorded; calibrate divides by its peaks)")
    parser.add_argument("--node", help="trainclock node preset id (default: the GPU's default_node)")
    parser.add_argument("--out", required=True, help="measurements JSON to write")
    parser.add_argument("--calibration-out", help="also run trainclock calibrate --measurements OUT --out THIS")
    parser.add_argument("--dtypes", default="fp32,tf32,fp16,bf16,fp8", help="GEMM/attention dtypes (comma-separated)")
    parser.add_argument("--hidden", default="4096,8192", help="hidden sizes of the GEMM shapes")
    parser.add_argument("--tokens", type=int, default=8192, help="M of the GEMMs (tokens per micro-batch)")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--collective-mb", type=int, default=256, help="collective message size, MiB")
    parser.add_argument("--cpu", action="store_true", help="reduced mode on the CPU (tests): tiny shapes, gloo, 1 rank")
    parser.add_argument("--trainclock", default=os.environ.get("TRAINCLOCK_CLI", "trainclock"), help="trainclock CLI (--calibration-out)")
    args = parser.parse_args(argv)

    if args.cpu:
        device = torch.device("cpu")
        dtypes = [d for d in args.dtypes.split(",") if d in ("fp32", "bf16")]
        shapes = gemm_shapes([64], 128)
        warmup, iters = 1, 2
        memory_mb, attention_shape, collective_bytes = 8, (1, 2, 128, 32), 1 << 16
    else:
        if not torch.cuda.is_available():
            parser.error("no CUDA GPU visible (use --cpu for the reduced test mode)")
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(device)
        dtypes = args.dtypes.split(",")
        shapes = gemm_shapes([int(h) for h in args.hidden.split(",")], args.tokens)
        warmup, iters = args.warmup, args.iters
        memory_mb, attention_shape, collective_bytes = 2048, (4, 32, 4096, 128), args.collective_mb << 20
    unknown = [d for d in dtypes if d not in DTYPES and d != "fp8"]
    if unknown:
        parser.error("unknown dtype(s) " + ", ".join(unknown) + " (fp32, tf32, fp16, bf16, fp8)")

    rank0 = int(os.environ.get("RANK", 0)) == 0
    measurements = {
        "schema": "trainclock/measurements/v1",
        "gpu": args.gpu,
        "node": args.node,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu (reduced test mode)",
        "torch": torch.__version__,
        "gemm": measure_gemm(device, dtypes, shapes, warmup, iters),
        "memory": measure_memory(device, memory_mb, warmup, iters),
        "attention": measure_attention(device, dtypes, *attention_shape, warmup, iters),
    }
    collectives = measure_collectives(device, collective_bytes, warmup, iters, args.cpu)
    if collectives is None:  # not rank 0 of a torchrun job: rank 0 writes the files
        return 0
    measurements["collectives"] = collectives
    if not rank0:
        return 0
    with open(args.out, "w", encoding="utf-8") as file:
        json.dump(measurements, file, indent=2)
        file.write("\n")
    if args.calibration_out:
        if not args.gpu:
            parser.error("--calibration-out needs --gpu (the preset whose peaks the efficiencies divide by)")
        write_calibration(args.out, args.calibration_out, args.trainclock)
    print(f"measure_gpu: {len(measurements['gemm'])} GEMMs, {len(measurements['attention'])} attention runs, "
          f"{len(collectives)} collectives -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
