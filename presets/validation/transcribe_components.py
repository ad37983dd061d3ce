#!/usr/bin/env python3
"""Developer tool: transcribe the published component microbenchmarks into
presets/validation/components/*.json (issue 21 item 1).

Reads the team's table ../shared/validation/components/components.csv (806 rows; its README.md
explains every column and source caveat; pass the folder as the first argument) and writes one JSON
file per source prefix into components/ next to this script. It is never run by the build: the JSON
files it writes are committed, and nothing reads ../shared at run time. Conventions: README.md here
("Component microbenchmarks").

Every row keeps its measured `metric` and `value`, its `source` citation, `software` and `notes`
verbatim; the published `gpu`, `dtype` and `algorithm` strings are kept beside the normalised
fields they were read into. Shapes are parsed from `shape_or_size` into integer fields. A row the
cost model cannot predict (a shape or a system property the source does not state, a GPU without a
preset) goes into the file's `unrepresentable` list with a `reason`.

Usage: python3 presets/validation/transcribe_components.py /work/shared/validation/components
"""
import csv
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "components")
GPUS_DIR = os.path.join(HERE, "..", "gpus")
NODES_DIR = os.path.join(HERE, "..", "nodes")

# ---------------------------------------------------------------------------------------------
# Files: one per source prefix (components.csv README "Sources")
# ---------------------------------------------------------------------------------------------
FILES = {
    "MLE": ("ml-engineering",
            "stas00/ml-engineering@744d01e18b79512572f64a6bbd8b5f4a725203a7 network/README.md and "
            "compute/accelerator/README.md (components.csv rows MLE-001..194)",
            "nccl-tests all_reduce on one A100 node (time/algbw/busbw, 32 KiB to 16 GiB; whether the "
            "out-of-place or in-place columns were kept is not stated); all_reduce_bench.py on 8x H200 "
            "(NCCL 2.27.7); busbw on 1 vs 4 nodes of AWS p6-b200 (B200, 8x 400G EFA v4): the 4-node "
            "busbw is not a wire speed (hierarchical algorithm); NVLS-vs-Ring GPU-count sweeps at "
            "8 GiB on H200 and B200; H200 all_reduce/all_gather/reduce_scatter at 16 GiB; 4-node p5en "
            "(H200) at 4 GiB (NIC layout not stated in the row: inter_bw_gbps assumed from the "
            "instance type, flagged); MI300X 2 vs 8 GPUs (RCCL); nvbandwidth on H200; MAMF best "
            "BF16/FP8 matmul TFLOP/s: the maximum over a shape search, optimistic for arbitrary "
            "shapes (best_of_shape_search), software differs per row. GH200 has no GPU preset "
            "(its rows are unrepresentable)."),
    "AZ": ("azure-ai-benchmarking",
           "Azure/AI-benchmarking-guide results files: ND A100 v4, H100 v5, H200 v5 @8fd0c6e; ND "
           "GB200 v6 @2a370be; ND MI300X v5 from the fork yosoyjay/AI-benchmarking-guide @a8263ef "
           "(components.csv rows AZ-001..216)",
           "One VM per system (8 GPUs; 4 on GB200, whose NCCL GPU count is not stated: "
           "num_gpus_assumed). all_reduce in-place busbw, 1 KiB to 8 GiB; the results files label "
           "the A100 and MI300X curves 'NVLS algorithm', which neither has: read as the library's "
           "default (algorithm default). cuBLASLt/hipBLASLt GEMM TFLOP/s for 9 shapes (FP16 on A100, "
           "FP8 on the others with the scaling mode not stated, FP4 on GB200 with format not stated: "
           "read as nvfp4, dtype_assumed). STREAM-like HBM kernels and nvbandwidth/TransferBench host "
           "and peer copies at the tool's default buffer (size not stated; bandwidth metrics). The "
           "A100 D2H 6.27 GB/s looks anomalous (kept as published). The FlashAttention-2 rows state "
           "neither the pass nor the causal flag (heads from the script default): unrepresentable, "
           "a sanity band only."),
    "AWS": ("aws-nccl-tests",
            "aws-samples/awsome-distributed-training@0162aac micro-benchmarks/nccl-tests/README.md "
            "(components.csv rows AWS-001..159)",
            "Full nccl-tests all_reduce output (out-of-place time/algbw/busbw) on 2x p4de.24xlarge "
            "(A100, 4x 100G EFA per node: 6.25 GB/s per GPU; the EFA figure comes from general "
            "knowledge and the ml-engineering EFA section, not this file), 1 KiB to 2 GiB, and on "
            "2x p5.48xlarge (H100, 32 EFA adapters, 3.2 Tb/s per node: 50 GB/s per GPU), 1 KiB to "
            "16 GiB, plus an EKS excerpt on 2x p5 with NCCL 2.18.5 that is much slower at 0.5-1 GiB "
            "(software matters). NCCL versions of the Slurm blocks not stated; num_gpus assumes 8 "
            "per node."),
    "A3M": ("gcp-a3-mega",
            "lessizzmore/create-a3mega-ztan-fork@02dd8f4 ztan-NCCL-test-result (components.csv rows "
            "A3M-001..072)",
            "Full nccl-tests all_reduce, 16x H100 on 2 nodes, 1 KiB to 8 GiB, out-of-place columns. "
            "GCP A3 Mega per the repo name: 8x 200 Gb/s GPUDirect-TCPXO NICs per node (25 GB/s per "
            "GPU; the network is not stated in the file, the figure is the ml-engineering network "
            "table's). Peak busbw 339 GB/s at 8 GiB, below IB/EFA H100 systems. A personal fork, "
            "not a vendor publication."),
    "DSEP": ("deepep",
             "deepseek-ai/DeepEP README: V1 tables @567632d, V2 table @dd758ca (components.csv rows "
             "DSEP-001..042)",
             "MoE dispatch/combine kernels on H800 (NVLink ~160 GB/s, CX7 400 Gb/s IB per GPU), EP 8 "
             "to 256 (1 to 32 nodes of 8 GPUs). Values are DeepEP's 'bottleneck' bandwidth "
             "(metric bottleneck_GBps: NVLink for intranode EP 8, RDMA for internode; V2's 'logical' "
             "bottleneck bandwidth includes local-rank traffic) or the low-latency kernels' latency "
             "(time_us) and RDMA bandwidth (rdma_GBps), not nccl-tests busbw. Dispatch is FP8, "
             "combine BF16. The README notes later speed-ups (up to 30 %) that the V1 table may "
             "predate. V2's GPU models are not named (SM90/SM100) and its NIC rate is not stated: "
             "the multi-node V2 rows are unrepresentable; the EP 8 NVLink-only SM100 rows are read as "
             "B200 (gpu_assumed)."),
    "P3DN": ("p3dn-efa-2019",
             "Three 2019 gists by jacobkahn, nccl-tests all_reduce on p3dn.24xlarge + EFA "
             "(components.csv rows P3DN-001..018)",
             "V100 (p3dn: 8x V100 32GB, NVLink hybrid cube mesh, 100 Gb/s EFA per node: 1.5625 GB/s "
             "per GPU), 2, 4 and 8 nodes; only the 1 to 32 KiB out-of-place times were readable "
             "(the latency floor). GPUs per node not stated in the output: num_gpus = 8 x nodes "
             "(num_gpus_assumed). NCCL of 2019 (likely ring)."),
    "DGEMM": ("deepgemm",
              "deepseek-ai/DeepGEMM README tables: 2025-04-09 version @327ec92 and the initial "
              "release @a6d97a1 (components.csv rows DGEMM-001..038)",
              "H800 SXM5, NVCC 12.8. FP8 e4m3 with fine-grained block scaling (1x128 activations, "
              "128x128 weights; fp8_recipe blockwise), BF16 output, NT layout: not a plain "
              "tensorwise FP8 GEMM. DeepSeek-V3 inference shapes. DGEMM-019..024 are the initial "
              "release's values for the M=4096 rows that later changed (both kept). Grouped rows: "
              "all groups equal size; contiguous layout (training/prefill) and masked layout "
              "(decoding). The README's memory-bandwidth column was not transcribed."),
    "TAO": ("torchao-grouped-gemm",
            "pytorch/ao@0b1bb11 torchao/prototype/moe_training/README.md (components.csv rows "
            "TAO-001..023)",
            "B200. Forward+backward time of one grouped GEMM (out = A @ B^T per group), BF16 "
            "torch._grouped_mm vs MXFP8 torchao _scaled_grouped_mm, Llama 4 and DeepSeek-V3 "
            "shapes, G = 1 to 8 local experts; the MXFP8 fwd_bwd times include the dynamic "
            "quantization kernels; group sizes come from the script's jagged offsets (not restated: "
            "m is the total over the groups). Per-pass MXFP8 kernel times (quantization excluded). "
            "The whole-MoE-layer rows (router + grouped GEMMs) do not restate top_k or the expert "
            "activation: unrepresentable."),
    "VEO": ("veomni-moe",
            "ByteDance-Seed/VeOmni PR #460 description (components.csv rows VEO-001..008)",
            "H100, fused-MoE forward, Triton vs torch._grouped_mm, 128 experts (ffn 768, top-8) and "
            "512 experts (ffn 512, top-10), 32k tokens, hidden 2048. dtype not stated (bf16 "
            "presumed: dtype_assumed). PR-branch numbers. Each configuration gives a TFLOP/s and a "
            "latency row; their ratio implies 3 expert matrices (gated activation), recorded as "
            "expert_matrices 3."),
    "FAISS": ("flash-attention",
              "Dao-AILab/flash-attention issue #1589, PR #2280 and issue #1310 (components.csv rows "
              "FAISS-001..036)",
              "#1589: FA2 fwd/bwd/fwd+bwd on B200, hdim 64, non-causal, seq 512 to 16k at 16k tokens, "
              "fp16; heads = 2048/hdim from the benchmark script's default (heads_from_script_default); "
              "FA2 is untuned on Blackwell (the issue reports it as low). #2280: FA4 (CuTe DSL) "
              "fwd/bwd on SM100 (read as B200, gpu_assumed), hdim 128, seq 8k, causal and not. #1310: "
              "FA2/cuDNN/FA3 forward on H20 (148 dense FP16 TFLOP/s), seq 2k, hdim 64/128, heads "
              "not stated: unrepresentable."),
}

HEADER_NOTES = (
    "Transcribed by presets/validation/transcribe_components.py from components.csv (README.md "
    "there). Caveats of the whole set: busbw is a wire speed only for ring algorithms (NVLS, tree "
    "and hierarchical multi-node algorithms exceed the link rate): predict time_us, or algbw = "
    "size/time, and keep the algorithm; the same hardware gives different results with different "
    "software (match software when calibrating); sizes are bytes (powers of 2), GB/s = 1e9 B/s; "
    "small-size bandwidth rows are printed to 0.01 GB/s (use the time_us row of the same size where "
    "there is one); the GEMM rows mix different maxima (MAMF shape-search maxima, fixed cuBLASLt "
    "shapes, DeepGEMM block-scaled FP8); several sources are single runs by one person.")

# ---------------------------------------------------------------------------------------------
# Hardware: published GPU strings -> presets/gpus ids, NVLink domains -> presets/nodes ids
# ---------------------------------------------------------------------------------------------
GPU_RULES = [  # (regex on the published gpu string, preset id or None, assumed?, note)
    (r"^GH200|NVIDIA GH200", None, False, "no GPU preset for GH200 (Grace Hopper, 900 W)"),
    (r"A100 PCIe", "a100-pcie-80gb", True, "A100 PCIe memory size not stated: 80GB preset (the "
                                          "time model differs from 40GB only in HBM bandwidth)"),
    (r"A100-SXM4-80GB|NVIDIA A100 SXM", "a100-sxm4-80gb", False, ""),
    (r"^A100 \(node labelled", "a100-sxm4-80gb", True, "A100 memory size not stated: SXM4 80GB "
                                                      "preset (collectives do not depend on it)"),
    (r"H100", "h100-sxm", False, ""),
    (r"H200", "h200-sxm", False, ""),
    (r"H800", "h800-sxm", False, ""),
    (r"^H20 ", "h20", False, ""),
    (r"GB200", "gb200", False, ""),
    (r"B300", "b300", False, ""),
    (r"^SM100", "b200", True, "SM100 model not stated: read as B200"),
    (r"B200", "b200", False, ""),
    (r"^SM90", None, False, "Hopper model not stated (H100 and H800 differ in NVLink, 450 vs "
                            "200 GB/s)"),
    (r"MI300X", "mi300x", False, ""),
    (r"MI325X", "mi325x", False, ""),
    (r"MI355X", "mi355x", False, ""),
    (r"Gaudi 2", "gaudi2", False, ""),
    (r"Gaudi 3", "gaudi3", False, ""),
    (r"^V100 \(AWS p3dn", "v100-sxm2-32gb", False, ""),
]
NODE_OF_GPU = {"a100-sxm4-80gb": "dgx-a100", "h100-sxm": "dgx-h100", "h200-sxm": "dgx-h200",
               "h800-sxm": "hgx-h800", "b200": "dgx-b200", "gb200": "gb200-nvl72",
               "mi300x": "mi300x-8", "v100-sxm2-32gb": "dgx-1-v100"}
# Inter-node NIC bandwidth per GPU, one direction, GB/s (line rate), from the row's inter_link.
INTER_RULES = [  # (regex on inter_link, GB/s per GPU or None, assumed?, note)
    (r"EFA v1, 4x100 Gbps per node", 4 * 100 / 8 / 8, False, ""),
    (r"EFA v2, 32 EFA adapters per node", 3200 / 8 / 8, False, "3.2 Tb/s per node"),
    (r"GCP A3 Mega: 8x 200 Gbps", 8 * 200 / 8 / 8, False, ""),
    (r"EFA v4, 8x 400 Gbps", 400 / 8, False, ""),
    (r"EFA \(p5en", 16 * 200 / 8 / 8, True, "p5en.48xlarge NIC layout not stated in the row: "
                                           "16x 200 Gb/s EFA (3.2 Tb/s per node) assumed from the "
                                           "instance type"),
    (r"EFA, 100 Gbps per node \(p3dn\)", 100 / 8 / 8, False, ""),
    (r"InfiniBand CX7 400 Gb/s per GPU", 400 / 8, False, ""),
    (r"CX7 \(rate not stated\)", None, False, "NIC rate not stated"),
]


def load_ids(folder):
    return {os.path.splitext(f)[0] for f in os.listdir(folder) if f.endswith(".json")}


GPU_IDS = load_ids(GPUS_DIR)
NODE_IDS = load_ids(NODES_DIR)


def gpu_of(text):
    for pattern, gpu, assumed, note in GPU_RULES:
        if re.search(pattern, text):
            assert gpu is None or gpu in GPU_IDS, gpu
            return gpu, assumed, note
    raise ValueError("no GPU rule for %r" % text)


def inter_of(text):
    for pattern, bw, assumed, note in INTER_RULES:
        if re.search(pattern, text):
            return bw, assumed, note
    raise ValueError("no inter_link rule for %r" % text)


# The node key "network" of the measured system, from the row's inter_link (its instance type): EFA
# through aws-ofi-nccl's send/recv protocol on p3dn and p4d/p4de, its RDMA protocol on p5 and later
# (aws/aws-ofi-nccl@01666ece684caf1ce4c216d6c64396fd91e3cca4 src/platform-aws.cpp platform_data_map,
# default_protocol), GCP A3 Mega's GPUDirect-TCPXO; InfiniBand (the node presets' default) otherwise.
NETWORK_RULES = [(r"EFA v1|p3dn", "efa-sendrecv"), (r"EFA", "efa"), (r"TCPXO", "tcpxo")]


def network_of(text):
    for pattern, network in NETWORK_RULES:
        if re.search(pattern, text):
            return network
    return None


# ---------------------------------------------------------------------------------------------
# Field readers
# ---------------------------------------------------------------------------------------------
def dtype_of(text):
    """(dtype, fp8_recipe, assumed) from the published dtype string."""
    t = text.lower()
    if t in ("bytes", "not stated"):
        return None, None, False
    if t.startswith("float32"):
        return "fp32", None, False
    if t.startswith("mxfp8"):
        return "mxfp8", None, False
    if t.startswith("fp8"):
        recipe = "blockwise" if "blockwise" in t else "tensorwise" if "tensorwise" in t else None
        return "fp8", recipe, False
    if t.startswith("fp4"):
        return "nvfp4", None, True
    if t.startswith("bf16"):
        return "bf16", None, "not stated" in t
    if t.startswith("fp16"):
        return "fp16", None, "not stated" in t
    if t.startswith("not stated (bf16"):
        return "bf16", None, True
    raise ValueError("dtype %r" % text)


def int_of(text):
    return int(re.match(r"\d+", text).group(0))


def num(text):
    v = float(text)
    return int(v) if v.is_integer() and "." not in text else v


def kv(shape):
    """'a=1,b=2 (x),c=not stated' -> {'a': '1', 'b': '2 (x)', 'c': 'not stated'}"""
    out = {}
    for part in re.split(r",(?=[A-Za-z_]+=)", shape):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def algorithm_of(text, gpu):
    """(algorithm, forced, nvls_enabled) of a collective row."""
    t = text.lower()
    forced = "forced" in t or "nccl_algo=" in t
    nvls_enabled = False if "nvls_enable=0" in t else None
    if t.startswith("nvlstree"):
        algo = "nvls_tree"
    elif t.startswith("nvls"):
        algo = "nvls"
    elif t.startswith("ring"):
        algo = "ring"
    elif t.startswith("deepep low-latency"):
        algo = "deepep_low_latency"
    elif t.startswith("deepep v2"):
        algo = "deepep_v2"
    elif t.startswith("deepep"):
        algo = "deepep_normal"
    else:  # "NCCL default ...", "RCCL default", "reported as NVLS" on A100/MI300X (neither has it)
        algo = "default"
    return algo, forced, nvls_enabled


def gemm_library(algorithm):
    a = algorithm.lower()
    if "cublaslt" in a:
        return "cublaslt"
    if "hipblaslt" in a:
        return "hipblaslt"
    if "mamf" in a:
        return "torch-mamf"
    if "deepgemm" in a:
        return "deepgemm"
    raise ValueError(algorithm)


def attention_kernel(algorithm):
    a = algorithm.lower()
    if "flashattention-4" in a or "fa4" in a:
        return "flash4"
    if "flashattention-3" in a or "fav3" in a:
        return "flash3"
    if "flashattention-2" in a or "fav2" in a or "flashattention 2" in a:
        return "flash2"
    if "cudnn" in a:
        return "cudnn"
    if "standard attention" in a:
        return "materialized"
    raise ValueError(algorithm)


MEMORY_KIND = {"stream_copy": "hbm_copy", "stream_mul": "hbm_scale", "stream_add": "hbm_add",
               "stream_triad": "hbm_triad", "stream_dot": "hbm_dot", "copy_h2d": "h2d",
               "copy_d2h": "d2h", "copy_d2d_read": "d2d_read",
               "copy_d2d_unidirectional": "d2d_write", "copy_d2d_bidirectional": "d2d_bidirectional"}
# The tool's test case of a host or peer copy row. Azure's Benchmarks/NVBandwidth.py (the results files'
# 'NV Bandwidth' table) runs the SM variants: device_to_device_bidirectional_memcpy_read_sm,
# device_to_host_memcpy_sm, host_to_device_memcpy_sm; ml-engineering names its copy-engine tests.
AZURE_NVBANDWIDTH_TEST = {"h2d": "host_to_device_memcpy_sm", "d2h": "device_to_host_memcpy_sm",
                          "d2d_read": "device_to_device_bidirectional_memcpy_read_sm"}
CE_TEST = {"h2d": "host_to_device_memcpy_ce", "d2h": "device_to_host_memcpy_ce"}
# Host CPU of each Azure results file ('System Specifications' table), by the row's published GPU.
AZURE_HOST_CPU = {"A100-SXM4-80GB (Azure ND A100 v4)": "AMD EPYC 7V12 64-Core Processor",
                  "H200 141GB (Azure ND H200 v5)": "Intel(R) Xeon(R) Platinum 8480C",
                  "GB200 185GB (Azure ND GB200 v6)": "ARM Neoverse-V2"}


def copy_fields(r, kind):
    """copy_test and host_cpu of a host or peer copy row (empty where the source does not say)."""
    out = {}
    if r["id"].startswith("AZ-") and r["software"] == "nvbandwidth" and kind in AZURE_NVBANDWIDTH_TEST:
        out["copy_test"] = AZURE_NVBANDWIDTH_TEST[kind]
    else:
        m = re.search(r"\((\w+_ce)\)", r["algorithm"])
        if m:
            out["copy_test"] = m.group(1)
        elif r["algorithm"] == "copy engine" and kind in CE_TEST:
            out["copy_test"] = CE_TEST[kind]
    if r["gpu"] in AZURE_HOST_CPU and r["software"] == "nvbandwidth":
        out["host_cpu"] = AZURE_HOST_CPU[r["gpu"]]
    return out


METRIC = {"busbw_GBps": "busbw_GBps", "algbw_GBps": "algbw_GBps", "time_us": "time_us",
          "tflops": "tflops", "GBps": "GBps"}


# ---------------------------------------------------------------------------------------------
# One row
# ---------------------------------------------------------------------------------------------
def transcribe(r):
    """(row object, reason or None): reason set = unrepresentable."""
    reasons = []
    gpu, gpu_assumed, gpu_note = gpu_of(r["gpu"])
    if gpu is None:
        reasons.append(gpu_note)
    nodes = int(r["nodes"])
    ng = r["num_gpus"]
    ng_assumed = not ng.strip().isdigit()
    if ng.startswith("not stated (p3dn has 8"):
        num_gpus = 8 * nodes
    else:
        num_gpus = int_of(ng)
    dtype, recipe, dtype_assumed = dtype_of(r["dtype"])
    comp, op_pub, shape = r["component"], r["op"], r["shape_or_size"]
    metric = METRIC[r["metric"]]
    row = {"id": r["id"], "component": comp}
    fields = {}

    if comp == "collective" and op_pub in ("all_reduce", "all_gather", "reduce_scatter"):
        algo, forced, nvls_enabled = algorithm_of(r["algorithm"], gpu)
        fields = {"op": op_pub, "size_bytes": int(shape), "algorithm": algo}
        if forced:
            fields["algorithm_forced"] = True
        if nvls_enabled is not None:
            fields["nvls_enabled"] = nvls_enabled
        fields["library"] = "rccl" if gpu in ("mi300x",) else "nccl"
    elif comp == "collective":  # DeepEP dispatch / combine
        algo, _, _ = algorithm_of(r["algorithm"], gpu)
        s = kv(shape)
        fields = {"op": "alltoall_dispatch" if "dispatch" in op_pub else "alltoall_combine",
                  "tokens": int_of(s["tokens_per_batch"]), "hidden": int_of(s["hidden"]),
                  "top_k": int_of(s["topk"])}
        if "topk_groups" in s:
            fields["topk_groups"] = int_of(s["topk_groups"])
        fields["algorithm"] = algo
        fields["library"] = "deepep"
        m = re.search(r"#SMs=(\d+)", r["algorithm"])
        if m:
            fields["sms"] = int(m.group(1))
        if metric == "GBps":
            metric = "rdma_GBps" if algo == "deepep_low_latency" else "bottleneck_GBps"
    elif comp == "gemm":
        s = kv(shape)
        fields = {"op": "gemm", "m": int(s["M"]), "n": int(s["N"]), "k": int(s["K"]),
                  "library": gemm_library(r["algorithm"])}
        if fields["library"] == "torch-mamf":
            fields["best_of_shape_search"] = True
    elif comp == "grouped_gemm":
        fields = grouped_fields(r, shape, op_pub, reasons)
    elif comp == "attention":
        s = kv(shape)
        passes = {"flash_fwd": "fwd", "flash_bwd": "bwd", "flash_fwd_bwd": "fwd_bwd"}
        fields = {"op": "attention", "pass": passes.get(op_pub)}
        if fields["pass"] is None:
            reasons.append("pass (fwd, bwd or fwd+bwd) not stated")
        fields["batch"] = int_of(s["batch"])
        fields["seq"] = int_of(s["seq"])
        if s["heads"].startswith("not stated"):
            fields["heads"] = None
            reasons.append("heads not stated")
        else:
            fields["heads"] = int_of(s["heads"])
            if "script" in s["heads"]:
                fields["heads_from_script_default"] = True
        fields["kv_heads"] = int_of(s["kv_heads"]) if "kv_heads" in s else fields["heads"]
        fields["head_dim"] = int_of(s["head_dim"])
        causal = s["causal"]
        if causal.startswith("not stated"):
            fields["causal"] = None
            reasons.append("causal flag not stated")
        else:
            fields["causal"] = causal == "True"
        fields["kernel"] = attention_kernel(r["algorithm"])
    elif comp == "memory":
        fields = {"op": "memory", "kind": MEMORY_KIND[op_pub], "size_bytes": None}
        fields.update(copy_fields(r, fields["kind"]))
    else:
        raise ValueError(comp)

    row.update({"op": fields.pop("op")})
    row["gpu"] = gpu
    if gpu_assumed:
        row["gpu_assumed"] = True
    row["gpu_published"] = r["gpu"]
    row["num_gpus"] = num_gpus
    if ng_assumed:
        row["num_gpus_assumed"] = True
    row["nodes"] = nodes
    if num_gpus % nodes == 0:
        row["gpus_per_node"] = num_gpus // nodes
    if comp == "collective" or (comp == "memory" and num_gpus > 1):
        node = NODE_OF_GPU.get(gpu)
        assert node is None or node in NODE_IDS, node
        row["node"] = node
        if r["intra_link"]:
            row["intra_link"] = r["intra_link"]
        if nodes > 1 or r["inter_link"]:  # DeepEP's low-latency kernels use RDMA on one node too
            bw, bw_assumed, bw_note = inter_of(r["inter_link"])
            row["inter_bw_gbps"] = bw
            if network_of(r["inter_link"]):
                row["network"] = network_of(r["inter_link"])
            if bw_assumed:
                row["inter_bw_assumed"] = True
            if bw is None:
                reasons.append(bw_note)
        if r["inter_link"]:
            row["inter_link"] = r["inter_link"]
    row.update(fields)
    row["dtype"] = dtype
    if recipe:
        row["fp8_recipe"] = recipe
    if dtype_assumed:
        row["dtype_assumed"] = True
    if r["dtype"] != (dtype or ""):
        row["dtype_published"] = r["dtype"]
    if r["algorithm"]:
        row["algorithm_published"] = r["algorithm"]
    if r["id"].startswith("DGEMM-"):
        # DeepGEMM's tests time with bench_kineto: the profiler's kernel duration (tests/test_core.py).
        row["timing"] = "kernel_profiler"
    row["metric"] = metric
    row["value"] = num(r["value"])
    row["software"] = r["software"]
    # The NCCL release the row states (not RCCL's): NCCL before 2.19.1 chooses and flushes differently across nodes
    # (core/src/perf/communication.cpp nccl_time_s).
    release = re.search(r"(?<![A-Za-z])NCCL[ v]*(\d+\.\d+\.\d+)", r["software"])
    if comp == "collective" and release:
        row["nccl_version"] = release.group(1)
    # ml-engineering's all_reduce_bench.py (at the cited commit) times one torch.distributed call per
    # trial, issued after dist.barrier() on an idle device: the call's host overhead and the ranks'
    # skew leaving the barrier are in the time (stas00/ml-engineering@744d01e18b79512572f64a6bbd8b5f4a725203a7
    # network/benchmarks/all_reduce_bench.py timed_allreduce).
    if comp == "collective" and "all_reduce_bench.py" in r["software"]:
        row["harness"] = "torch-dist-call"
    # nccl-tests and rccl-tests time `iters` calls issued back-to-back on one stream over the elapsed time
    # (NVIDIA/nccl-tests@a0b82b2260cf5152b9f8c061bbf7eaf0ba096432 src/common.cu BenchTime): the launch is hidden.
    elif comp == "collective" and ("nccl-tests" in r["software"] or "rccl-tests" in r["software"]):
        row["harness"] = "nccl-tests"
    # torchao's benchmark_scaled_grouped_mm_dq.py times fwd_bwd with benchmarks/utils.py
    # bench_fwd_bwd_microseconds: the op, an MSE loss against ones and loss.backward(), repeated by
    # triton's do_bench without grad_to_none, so each run also accumulates A.grad and B.grad
    # (pytorch/ao@36027d82 benchmarks/utils.py).
    if comp == "grouped_gemm" and "benchmark_scaled_grouped_mm_dq.py" in r["software"]:
        row["harness"] = "torchao-fwd-bwd"
    row["source"] = r["source"]
    if r["notes"]:
        row["notes"] = r["notes"]
    if gpu_note and gpu is not None:
        row["notes"] = (row.get("notes", "") + "; " if row.get("notes") else "") + gpu_note
    return row, "; ".join(reasons) if reasons else None


def grouped_fields(r, shape, op_pub, reasons):
    """Grouped GEMMs: `groups` GEMMs whose `grouped_dim` (m or k) is the total over the groups, so
    FLOPs = 2 m n k for the forward pass in every layout."""
    s = kv(shape)
    if op_pub in ("grouped_mm_contiguous", "grouped_mm_masked"):  # DeepGEMM
        g, mpg = int(s["groups"]), int(s["M_per_group"])
        return {"op": "grouped_gemm", "pass": "fwd", "groups": g, "grouped_dim": "m",
                "m": g * mpg, "m_per_group": mpg, "n": int(s["N"]), "k": int(s["K"]),
                "layout": op_pub.split("_")[-1], "library": "deepgemm"}
    if op_pub == "grouped_mm_fwd_bwd":  # torchao: out = A @ B^T per group, jagged offsets
        return {"op": "grouped_gemm", "pass": "fwd_bwd", "groups": int(s["groups"]),
                "grouped_dim": "m", "m": int(s["M_total"]), "n": int(s["N"]), "k": int(s["K"]),
                "layout": "jagged",
                "library": "torchao-mxfp8" if "mxfp8" in r["dtype"] else "torch-grouped-mm"}
    if op_pub in ("grouped_mm_fwd", "grouped_mm_bwd_dgrad", "grouped_mm_bwd_wgrad"):
        m = re.match(r"\((\d+),(\d+)\)@\((\d+),(\d+)(?:,(\d+))?\),groups=(\d+)", shape)
        a0, a1, b0, b1, b2, g = m.groups()
        g = int(g)
        if op_pub == "grouped_mm_bwd_wgrad":  # (N_out x T) @ (T x K): the token dim is split
            fields = {"pass": "bwd_wgrad", "grouped_dim": "k", "m": int(a0), "n": int(b1),
                      "k": int(a1)}
        else:  # (T x K) @ (G x K x N)
            fields = {"pass": "fwd" if op_pub.endswith("fwd") else "bwd_dgrad",
                      "grouped_dim": "m", "m": int(a0), "n": int(b2), "k": int(a1)}
        return dict({"op": "grouped_gemm", "groups": g}, **fields, layout="jagged",
                    library="torchao-mxfp8")
    if op_pub == "moe_ffn_fwd":  # VeOmni fused MoE forward
        return {"op": "moe_ffn", "pass": "fwd", "tokens": int_of(s["tokens"]),
                "hidden": int(s["hidden"]), "expert_ffn_hidden": int(s["ffn"]),
                "experts": int(s["experts"]), "top_k": int(s["topk"]), "expert_matrices": 3,
                "library": "triton-fused-moe" if "Triton" in r["algorithm"] else "torch-grouped-mm"}
    if op_pub == "moe_layer_fwd_bwd":  # torchtitan MoE layer: router + grouped GEMMs
        reasons.append("whole MoE layer (router, permute and grouped GEMMs) whose top_k, expert "
                       "count and expert activation the table does not restate")
        return {"op": "moe_layer", "pass": "fwd_bwd", "m": int(s["total_M"]), "n": int(s["N"]),
                "k": int(s["K"]), "local_experts": int(s["local_experts"]),
                "library": "torchtitan-moe"}
    raise ValueError(op_pub)


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------
def write(name, prefix, source, notes, rows, unrep):
    """One file: header keys on their own lines, one row per line (compact, diff-friendly)."""
    path = os.path.join(OUT_DIR, name + ".json")
    dump = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=True)
    lines = ['{"schema_version":1,', '"name":%s,' % dump(name), '"prefix":%s,' % dump(prefix),
             '"source":%s,' % dump(source), '"notes":%s,' % dump(notes + " " + HEADER_NOTES),
             '"rows":[']
    lines += [dump(c) + ("," if i + 1 < len(rows) else "") for i, c in enumerate(rows)]
    lines += ['],', '"unrepresentable":[']
    lines += [dump(c) + ("," if i + 1 < len(unrep) else "") for i, c in enumerate(unrep)]
    lines += ["]}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%-24s %4d rows %4d unrepresentable" % (name, len(rows), len(unrep)))


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/validation/components"
    with open(os.path.join(folder, "components.csv"), encoding="utf-8-sig") as f:
        table = list(csv.DictReader(f))
    os.makedirs(OUT_DIR, exist_ok=True)
    per = {p: ([], []) for p in FILES}
    for r in table:
        row, reason = transcribe(r)
        prefix = r["id"].split("-")[0]
        if reason:
            per[prefix][1].append(dict(row, reason=reason))
        else:
            per[prefix][0].append(row)
    total = 0
    for prefix, (name, source, notes) in FILES.items():
        rows, unrep = per[prefix]
        write(name, prefix, source, notes, rows, unrep)
        total += len(rows) + len(unrep)
    assert total == len(table), (total, len(table))


if __name__ == "__main__":
    main()
