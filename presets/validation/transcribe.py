#!/usr/bin/env python3
"""Developer tool: transcribe the published measurements into presets/validation/*.json.

Reads the team's source tables (../shared/validation/{llm_public,precision_public}.csv and
vtrain/ground_truth_{single,multi}.csv; pass their folder as the first argument) and writes one
JSON file per source family next to this script. It is never run by the build: the JSON files it
writes are committed and embedded into every binary. Conventions and skipped rows: README.md here.

Usage: python3 presets/validation/transcribe.py /work/shared/validation
"""
import csv
import glob
import json
import os
import re
import sys

# The config key "framework" (issue 9 item 1): written into every case once the core reads it.
FRAMEWORK_KEY = True
# Framework presets name a stack's defaults; a run that departs from them says so inline.
# torchtitan's runs here enable torch.compile, whose Inductor fuses nn.RMSNorm (the preset's eager
# default is composite kernels: fused_norms false).
TORCHTITAN_COMPILED = {"preset": "torchtitan", "fused_norms": True}
# The TE Llama tutorial swaps in TE's TransformerLayer (fused RMSNorm) and builds
# torch.optim.AdamW(fused=True) itself (docs/examples/te_llama/utils.py wrap_with_accelerator):
# not the Trainer's foreach AdamW or Hugging Face's composite LlamaRMSNorm.
TE_TUTORIAL = {"preset": "hf-transformers", "fused_optimizer": True, "fused_norms": True}
# SimuMax's Megatron-LM launcher (simu_tools/megatron_scripts/scripts/run_pretrain_llama3.sh)
# passes --disable-tp-comm-overlap-ag/-rs and --disable-tp-comm-bulk-dgrad/-wgrad, and neither
# --overlap-grad-reduce nor --overlap-param-gather (Megatron-LM arguments.py: both default off):
# the Megatron-Bridge recipe defaults of the megatron-core preset do not apply.
SIMUMAX_LAUNCHER = {"preset": "megatron-core", "overlap_tp_comm": False, "overlap_dp_comm": False}
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_DIR = os.path.join(HERE, "..", "models")
SCHEMA = "trainclock/config/v1"
MODEL_KEYS = ["architecture", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
              "activation", "norm", "tied_embeddings"]


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def load_model_presets():
    """Model presets already in presets/models (H-presets), to refer to by id when identical."""
    presets = {}
    for path in sorted(glob.glob(os.path.join(MODELS_DIR, "*.json"))):
        with open(path) as f:
            presets[os.path.splitext(os.path.basename(path))[0]] = json.load(f)
    return presets


MODEL_PRESETS = load_model_presets()


def model_ref(inline):
    """A preset id when one preset has exactly these architecture figures, else the inline object."""
    if "moe" in inline or "head_dim" in inline:
        return inline
    for name, p in MODEL_PRESETS.items():
        if "moe" in p or p.get("head_dim", 0) not in (0, inline["hidden"] // inline["heads"]):
            continue
        if all(p.get(k) == inline[k] for k in MODEL_KEYS):
            return name
    return inline


def dense(layers, hidden, heads, ffn, vocab, *, arch="decoder", kv=None, act="gelu",
          norm="layernorm", tied=True):
    return {"architecture": arch, "layers": layers, "hidden": hidden, "heads": heads,
            "kv_heads": kv or heads, "ffn_hidden": ffn, "vocab": vocab, "activation": act,
            "norm": norm, "tied_embeddings": tied}


def config(model, gpu, node, num_gpus, precision, *, tp=1, pp=1, dp=None, cp=1, sp=False, zero=0,
           vstages=1, schedule="1f1b", seq, gbs, mbs, recompute="none", flash=True,
           optimizer="adamw", attention_kernel=None, ep=1, framework=None, finetune=None,
           overlap_dp=None):
    dp = dp if dp is not None else num_gpus // (tp * pp * cp)
    assert tp * pp * cp * dp == num_gpus, (tp, pp, cp, dp, num_gpus)
    assert gbs % (mbs * dp) == 0, (gbs, mbs, dp)
    if vstages > 1:
        schedule = "interleaved"
    head = {"schema": SCHEMA, "model": model_ref(model), "gpu": gpu}
    if node:
        head["node"] = node
    if FRAMEWORK_KEY:
        # Always named: a config without it runs megatron-core since issue 25 item 9; "none" is the
        # knobs' own defaults (Megatron-LM 2020-23's).
        head["framework"] = framework or "none"
    return dict(head, **{
            "num_gpus": num_gpus, "precision": precision,
            "parallel": dict({"tp": tp, "pp": pp, "dp": dp, "cp": cp, "ep": ep, "sequence_parallel": sp,
                              "zero": zero, "virtual_stages": vstages, "schedule": schedule},
                             **({"overlap_dp_comm": overlap_dp} if overlap_dp is not None else {})),
            "training": dict({"seq_len": seq, "global_batch": gbs, "micro_batch": mbs,
                              "recompute": recompute, "flash_attention": flash,
                              "optimizer": optimizer},
                             **({"attention_kernel": attention_kernel} if attention_kernel else {}),
                             **({"finetune": finetune} if finetune else {}))})


def case(cid, cfg, metric, value, citation, notes=""):
    c = {"id": cid, "config": cfg, "measured": {"metric": metric, "value": value},
         "citation": citation}
    if notes:
        c["notes"] = notes
    return c


def write(name, set_name, source, notes, cases):
    """One file: header keys on their own lines, one case per line (compact, diff-friendly)."""
    path = os.path.join(HERE, name + ".json")
    dump = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=True)
    lines = ['{"schema_version":1,', '"name":%s,' % dump(name), '"set":%s,' % dump(set_name),
             '"source":%s,' % dump(source), '"notes":%s,' % dump(notes), '"cases":[']
    lines += [dump(c) + ("," if i + 1 < len(cases) else "") for i, c in enumerate(cases)]
    lines += ["]}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%-28s %5d cases" % (name, len(cases)))


def num(s):
    v = float(s)
    return int(v) if v.is_integer() else v


def read(path):
    with open(path, encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------------------------------
# llm_public.csv
# ---------------------------------------------------------------------------------------------
def megatron_sc21(rows):
    """MEG21-T1: achieved TFLOP/s per GPU -> iteration time with the paper's own FLOP formula."""
    cases = []
    for r in rows:
        if not r["id"].startswith("MEG21-T1"):
            continue
        L, h, a, V, s = (int(r[k]) for k in ("layers", "hidden", "heads", "vocab", "seq_len"))
        N, B, X = int(r["num_gpus"]), int(r["global_batch"]), float(r["value"])
        # Narayanan et al. SC'21 eq. (3): F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), counting
        # the recompute forward; achieved FLOP/s per GPU X = F / (N * t)  =>  t = F / (N * X).
        F = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))
        t = F / (N * X * 1e12)
        m = re.search(r"num-layers-per-virtual-pipeline-stage (\d+)", r["notes"])
        pp = int(r["pp"])
        vst = (L // pp) // int(m.group(1)) if m else 1
        cfg = config(dense(L, h, a, int(r["ffn_hidden"]), V), "a100-sxm4-80gb", "dgx-a100", N,
                     "fp16-mixed", tp=int(r["tp"]), pp=pp, dp=int(r["dp"]), vstages=vst, seq=s,
                     gbs=B, mbs=int(r["micro_batch"]), recompute="full", flash=False, framework="megatron-lm")
        note = ("%s TFLOP/s/GPU -> t = 96*B*s*l*h^2*(1+s/(6h)+V/(16lh)) / (N*X) = %.4g FLOP / "
                "(%d * %s TFLOP/s) = %.4f s" % (r["value"], F, N, r["value"], t))
        if vst > 1:
            note += "; interleaved, %s layers per virtual stage -> %d virtual stages" % (m.group(1), vst)
        cases.append(case(r["id"], cfg, "iteration_time_s", round(t, 4),
                          "Narayanan et al. SC'21 Table 1 (llm_public.csv %s)" % r["id"], note))
    write("megatron-sc21", "public",
          "Narayanan et al. 2021, 'Efficient Large-Scale Language Model Training on GPU Clusters "
          "Using Megatron-LM' (SC21) Table 1, values from NVIDIA/Megatron-LM "
          "images/cases_april2021.png; configs from examples/academic_paper_scripts/sc21/"
          "run_table_1.sh + CONFIG.sh @f2e72c8a",
          "Selene DGX A100 80GB, Megatron fp16 (fp16-mixed), full recompute (uniform), no flash "
          "attention (2021), Adam; interleaved schedule where run_table_1.sh sets "
          "--num-layers-per-virtual-pipeline-stage", cases)


def korthikanti22(rows):
    cases = []
    for r in rows:
        if not r["id"].startswith("KORTH22-T5"):
            continue
        L, h, a, V, s = (int(r[k]) for k in ("layers", "hidden", "heads", "vocab", "seq_len"))
        pp = int(r["pp"])
        vst = 3 if "interleaved schedule with 3 stages" in r["notes"] else 1
        if r["id"] == "KORTH22-T5-009":  # Sec 6.3: the 530B setup of T5-005/006 scaled to DP=8
            vst = 3
        sp = r["seq_parallel"] == "yes"
        cfg = config(dense(L, h, a, int(r["ffn_hidden"]), V), "a100-sxm4-80gb", "dgx-a100",
                     int(r["num_gpus"]), "fp16-mixed", tp=int(r["tp"]), pp=pp, dp=int(r["dp"]),
                     sp=sp, vstages=vst, seq=s, gbs=int(r["global_batch"]),
                     mbs=int(r["micro_batch"]), recompute=r["recompute"], flash=False, framework="megatron-lm")
        cases.append(case(r["id"], cfg, "iteration_time_s", num(r["value"]),
                          "Korthikanti et al. 2022 (arXiv 2205.05198) %s (llm_public.csv %s)" %
                          ("Sec. 6.3" if r["id"].endswith("009") else "Table 5", r["id"]),
                          r["notes"]))
    write("korthikanti22", "public",
          "Korthikanti et al. 2022, 'Reducing Activation Recomputation in Large Transformer "
          "Models' (arXiv 2205.05198) Table 5 and Sec. 6.3",
          "Selene DGX A100 80GB, Megatron mixed 16-bit (paper does not say fp16 or bf16: taken as "
          "fp16-mixed like the SC'21 runs on the same cluster), no flash attention (2022), Adam; "
          "'interleaved schedule with 3 stages' -> virtual_stages 3", cases)


def mosaic(rows):
    cases = []
    for r in rows:
        if not r["id"].startswith("MOSAIC"):
            continue
        gpu = {"A100-40GB": "a100-sxm4-40gb", "A100-80GB": "a100-sxm4-80gb",
               "H100-80GB": "h100-sxm"}[r["gpu"]]
        node = "dgx-h100" if gpu == "h100-sxm" else "dgx-a100"
        prec = "fp8-mixed" if "fp8" in r["precision"] else "bf16-mixed"
        zero = int(r["zero_stage"][0])
        ga = int(re.search(r"grad accum (\d+)", r["notes"]).group(1))
        mode = re.search(r"FSDP mixed-precision mode (\w+)", r["notes"]).group(1)
        if mode == "PURE":  # Composer get_mixed_precision PURE: reduce_dtype = param_dtype (DEFAULT: fp32)
            prec = {"preset": prec, "name": prec + "-pure", "grad_reduce": "bf16"}
        model = dense(int(r["layers"]), int(r["hidden"]), int(r["heads"]), int(r["ffn_hidden"]),
                      int(r["vocab"]))
        cfg = config(model, gpu, node, int(r["num_gpus"]), prec, zero=zero,
                     seq=int(r["seq_len"]), gbs=int(r["global_batch"]),
                     mbs=int(r["micro_batch"]), recompute=r["recompute"], flash=True, framework="llm-foundry")
        sec = re.search(r"section '([^']+)'", r["source"]).group(1)
        cases.append(case(r["id"], cfg, "tokens_per_s_per_gpu", num(r["value"]),
                          "llm-foundry benchmarking README @49521837, %s, %s (llm_public.csv %s)"
                          % (sec, r["model"], r["id"]),
                          "precision %s, FSDP %s %s, grad accum %d" %
                          (r["precision"], r["zero_stage"][3:-1], mode, ga)))
    write("mosaic-llm-foundry", "public",
          "mosaicml/llm-foundry scripts/train/benchmarking/README.md @49521837 (A100 40GB, A100 "
          "80GB, H100 80GB BF16, H100 BF16 large scale, H100 FP8 sections); architectures from "
          "scripts/train/yamls/pretrain/mpt-*.yaml",
          "MPT as benchmarked: llm-foundry v0.3.0 llmfoundry/models/mpt/configuration_mpt.py "
          "defaults, which the pretrain yamls leave alone: learned position embeddings "
          "(learned_pos_emb True, alibi False) and Linear biases (no_bias False, 9 x d_model a "
          "layer), both in the README's NumParams (1b: 1,315,950,592 = 1,311,313,920 without "
          "them + 2048 x 2048 wpe + 24 x 9 x 2048 biases); the configs keep the bias-free, "
          "wpe-free architectures (the bias-gradient reductions and the wpe add: ~1 % of the "
          "step); GELU MLP 4h, LayerNorm (low_precision_layernorm), tied embeddings, vocab "
          "50368. Attention: the Oct 2023 sweep (b2a43a147 sweep.sh: the H100 BF16 and FP8 "
          "sections and the A100 80GB amp_bf16 DEFAULT rows, one image "
          "mosaicml/pytorch:2.1.0_cu121, llm-foundry v0.3.0 [gpu]) ran attn_impl 'triton' "
          "(submit_benchmarks.py default; llmfoundry flash_attn_triton); the H100 large-scale "
          "section (Jan 2024, 5e85bd62d sweep.py, [gpu-flash2]) ran 'flash' (FlashAttention 2) "
          "for 1b/3b/7b/70b and 'triton' for 13b/30b; FSDP (zero 3 = FULL_SHARD, zero 2 = "
          "SHARD_GRAD_OP), TP=PP=1; amp_bf16 and 'bf16' -> bf16-mixed, FSDP PURE with grad_reduce "
          "bf16 (Composer mosaic_fsdp_utils.py get_mixed_precision: PURE reduces in the param "
          "dtype, DEFAULT in float32) (FSDP keeps "
          "sharded fp32 master params and gathers bf16 working params), amp_fp8 -> fp8-mixed "
          "(Transformer Engine); "
          "activation checkpointing -> recompute full; metric tokens/s/GPU as printed", cases)


def mlm_llama(rows):
    cases = []
    ids = {"LLAMA3-8B": "llama3-8b", "LLAMA3-70B": "llama3-70b", "LLAMA3-405B": "llama3.1-405b"}
    for r in rows:
        if not r["id"].startswith("MLM-LLAMA"):
            continue
        vp = int(re.search(r"VP=(\d+)", r["notes"]).group(1))
        tp = int(r["tp"])
        if int(r["layers"]) % (int(r["pp"]) * vp):
            continue  # uneven pipeline split (405B: 126 layers over PP 8 x VP 8): see README
        model = dense(int(r["layers"]), int(r["hidden"]), int(r["heads"]), int(r["ffn_hidden"]),
                      int(r["vocab"]), kv=int(r["kv_heads"]), act="swiglu", norm="rmsnorm",
                      tied=False)
        cfg = config(model, "h100-sxm", "dgx-h100", int(r["num_gpus"]), "fp8-mixed", tp=tp,
                     pp=int(r["pp"]), dp=int(r["dp"]), cp=int(r["cp"]), sp=tp > 1, zero=1,
                     vstages=vp, seq=int(r["seq_len"]), gbs=int(r["global_batch"]),
                     mbs=int(r["micro_batch"]), recompute="none", flash=True,
                     attention_kernel="flash3", framework="megatron-core")
        cases.append(case(r["id"], cfg, "tokens_per_s_per_gpu", num(r["value"]),
                          "NVIDIA/Megatron-LM examples/llama/README.md 'FP8 Performance' @bd32927e "
                          "(llm_public.csv %s)" % r["id"],
                          "%s (%s); assumed per NeMo performance recipes: H100 SXM, "
                          "sequence parallel when TP>1, distributed optimizer (zero 1), no "
                          "recompute; Transformer Engine attention on H100 (its default backends there: "
                          "cuDNN fused attention or FlashAttention-3) -> attention_kernel flash3"
                          % (r["model"], r["notes"])))
    write("megatron-llama3-fp8", "public",
          "NVIDIA/Megatron-LM examples/llama/README.md 'FP8 Performance' @bd32927e (configs follow "
          "the NeMo performance scripts, e.g. train_llama3_8b_h100_fp8.sh)",
          "GPU implied by the script names (H100); TE fp8 hybrid -> fp8-mixed", cases)


def te_tutorial(rows_llm, rows_prec):
    """TE Llama tutorial: only the TE TransformerLayer rows (BF16 and FP8); see README."""
    cases = []
    models = {"Llama 2 7B": "llama2-7b", "Llama 3 8B": "llama3-8b"}
    arch = {"llama2-7b": dense(32, 4096, 32, 11008, 32000, act="swiglu", norm="rmsnorm", tied=False),
            "llama3-8b": dense(32, 4096, 32, 14336, 128256, kv=8, act="swiglu", norm="rmsnorm",
                               tied=False)}
    def add(cid, model_name, prec, value_s, citation, note):
        m = arch[models[model_name]]
        # fp8_autocast on the bf16-loaded model: FP8 GEMMs, everything else as the bf16 run (bf16
        # weights, grads and AdamW states, no fp32 master copy): the bf16 preset with gemm fp8.
        fp8 = {"preset": "bf16", "name": "fp8-bf16-weights", "gemm": "fp8",
               "description": "TE fp8_autocast on a bf16 model: FP8 linear GEMMs, bf16 weights/grads/states"}
        cfg = config(m, "h100-sxm", "dgx-h100", 1, fp8 if prec == "fp8" else "bf16",
                     seq=256, gbs=8, mbs=8, flash=True, framework=TE_TUTORIAL)
        cases.append(case(cid, cfg, "iteration_time_s", value_s, citation, note))
    for r in rows_llm:
        if r["id"].startswith("TE-TUTORIAL") and not r["notes"].startswith("HF baseline"):
            add(r["id"], r["model"], r["precision"], num(r["value"]),
                "NVIDIA/TransformerEngine docs/examples/te_llama tutorial @2dbfbc74 (llm_public.csv %s)"
                % r["id"], r["notes"])
    for r in rows_prec:
        if r["id"].startswith("TE-LLAMA") and "HF LlamaDecoderLayer (baseline)" not in r["model_details"]:
            add(r["id"], "Llama 2 7B", r["precision"], round(float(r["value"]) / 1000, 4),
                "NVIDIA/TransformerEngine@0010ade7 docs/examples/te_llama tutorial notebook "
                "(precision_public.csv %s)" % r["id"], "%s ms/step -> s" % r["value"])
    write("te-llama", "public",
          "NVIDIA/TransformerEngine docs/examples/te_llama/tutorial_accelerate_hf_llama_with_te."
          "ipynb (two commits: 2dbfbc74 via llm_public.csv, 0010ade7 via precision_public.csv)",
          "Full fine-tuning on one GPU, batch 8, max_seq_length 256 (samples padded to a multiple "
          "of 16, so 256 is an upper bound), GA 1, fused AdamW, flash attention. GPU not stated: "
          "assumed H100 SXM (FP8 needs Hopper; 80 GB needed for bf16 weights+grads+AdamW states). "
          "Model loaded in bf16 with Accelerate bf16 -> precision bf16 (pure); TE fp8_autocast -> "
          "the bf16 preset with FP8 GEMMs (inline precision fp8-bf16-weights: no fp32 master copy, as in "
          "the tutorial)", cases)


# ---------------------------------------------------------------------------------------------
# precision_public.csv (NVIDIA DeepLearningExamples)
# ---------------------------------------------------------------------------------------------
BERT_LARGE = dense(24, 1024, 16, 4096, 30522, arch="encoder")


def dle_gpu(r):
    gb = int(r["gpu_memory_gb"])
    if r["gpu"].startswith("A100"):
        return ("a100-sxm4-80gb" if gb == 80 else "a100-sxm4-40gb"), "dgx-a100"
    node = "dgx-2" if "DGX-2" in r["gpu"] else "dgx-1-v100"
    return ("v100-sxm2-32gb" if gb == 32 else "v100-sxm2-16gb"), node


def nvidia_bert(rows):
    cases, unrepresentable = [], []
    for r in rows:
        if not r["id"].startswith("PT-BERT"):
            continue
        hist = r["id"].startswith("PT-BERT-hist")
        gpu, node = dle_gpu(r)
        n = int(r["num_gpus"])
        seq = int(r["seq_len_or_image_size"].split()[0])
        b = int(r["batch_per_gpu"])
        acc_m = re.search(r"grad accumulation steps=(\d+)", r["notes"])
        acc = int(acc_m.group(1)) if acc_m else None
        squad = "SQuAD" in r["model"]
        if squad:
            mbs, gbs, how = b, b * n, "fine-tuning: batch/GPU is the micro-batch, no accumulation"
        elif "holds the accumulated batch" in r["notes"] or (hist and "holds accumulated" in r["notes"]):
            mbs, gbs = b // acc, b * n
            how = "batch/GPU column %d is the accumulated batch: micro-batch = %d/%d = %d, " \
                  "global = %d x %d GPUs" % (b, b, acc, mbs, b, n)
            assert mbs * acc == b, r["id"]
        elif acc:
            mbs, gbs = b, b * acc * n
            how = "batch/GPU %d is the micro-batch, %d accumulation steps (table column): " \
                  "global = %d x %d x %d GPUs" % (b, acc, b, acc, n)
        else:
            mbs, gbs = b, b * n
            how = "batch/GPU %d is the micro-batch; accumulation not printed: taken as 1 " \
                  "(global = micro-batch x GPUs)" % b
        if r["precision"] == "amp_fp16":
            # @729963dd neither script runs autocast as launched: run_squad.py calls
            # amp.initialize(model, optimizer, opt_level="O2") (Apex O2: fp16 model, fp32 master
            # weights); run_pretraining.py autocasts only without --allreduce_post_accumulation_fp16,
            # which scripts/run_pretraining.sh passes by default (its launch via
            # torch.distributed.launch sets local_rank), and then calls model.half() under
            # FusedLAMBAMP's fp32 master weights. Both are fp16-mixed.
            prec = "fp16-mixed"
        else:
            prec = r["precision"]
        # run_squad.py builds apex FusedAdam under --fp16 and BertAdam (optimization.py: a Python
        # loop of eager in-place ops per tensor) otherwise; pretraining uses the fused (multi-tensor) LAMB.
        squad_optimizer = "adamw" if prec.startswith("fp16") else "adamw-per-tensor"
        cfg = config(BERT_LARGE, gpu, node, n, prec, seq=seq, gbs=gbs, mbs=mbs, flash=False,
                     optimizer=squad_optimizer if squad else "lamb", framework="pytorch")
        line = re.search(r"line (\d+)", r["source"])
        sect = r["source"].split("|")[1].strip()
        # Current README (21.11) pretraining at seq 512: the printed sequences/s exceed what the
        # stated config allows (V100 FP32: ~19 TFLOP/s > 15.7 peak); its phase-2 data come from
        # LDDL with sequence binning (samples padded only to their length bin), so the mean tokens
        # per sequence is below 512 and not stated: kept apart as not representable.
        binned = not hist and not squad and seq == 512
        (unrepresentable if binned else cases).append(case(r["id"], cfg, "samples_per_s", num(r["value"]),
                          "NVIDIA/DeepLearningExamples@%s PyTorch BERT README, %s, line %s "
                          "(precision_public.csv %s)" % ("78ec6802" if hist else "729963dd",
                                                         sect.split(" [")[0].replace(" | table row", ""),
                                                         line.group(1) if line else "?", r["id"]),
                          how + "; " + r["notes"][:r["notes"].find(";")]))
    write("nvidia-dle-bert", "public",
          "NVIDIA/DeepLearningExamples PyTorch/LanguageModeling/BERT/README.md, training "
          "performance tables: current README @729963dd (PT-BERT-*) and the 2021 README @78ec6802 "
          "(PT-BERT-hist-*)",
          "BERT-Large (24 layers, hidden 1024, 16 heads, FFN 4096, vocab 30522) pretraining with "
          "LAMB and SQuAD v1.1 fine-tuning (seq 384, AdamW); 'AMP' = an fp16 model under fp32 "
          "master weights (fp16-mixed): in the current README's pretraining model.half() with "
          "FusedLAMBAMP (run_pretraining.sh passes --allreduce_post_accumulation_fp16, which turns "
          "autocast off), in its SQuAD fine-tuning Apex amp O2 (run_squad.py), and Apex amp O2 in "
          "the 2021 README's 20.06 containers; FP32 on V100 -> fp32, TF32 on A100 -> tf32; no flash attention; DGX-2/"
          "DGX-2H V100-SXM3 32GB -> v100-sxm2-32gb on dgx-2; metric sequences/s over all GPUs",
          cases)
    write("nvidia-dle-bert-binned", "unrepresentable",
          "NVIDIA/DeepLearningExamples@729963dd PyTorch/LanguageModeling/BERT/README.md, training "
          "performance tables, pre-training at sequence length 512 (current README, 21.11 containers)",
          "Same conventions as nvidia-dle-bert. Not representable: these runs read LDDL phase-2 data "
          "with sequence binning, so a 'sequence' is padded only to its length bin and carries fewer "
          "than 512 tokens on average (mean not published); the printed sequences/s are ~2x what "
          "512-token sequences allow (V100 FP32 would need ~19 TFLOP/s of its 15.7 peak). Predicted "
          "and reported as their own set, outside the public MAPE.", unrepresentable)


def nvidia_txl(rows):
    cases = []
    for r in rows:
        if not r["id"].startswith("PT-TXL"):
            continue
        gpu, node = dle_gpu(r)
        base = "base" in r["model"]
        # Adaptive embedding/softmax (cutoffs 19997/39997/199997, word vocab 267735): the head
        # cluster computes 19997 + 3 cluster logits for every token (softmax_head 20000). Embedding
        # parameters: base div_val 1 = one 267735 x 512 table (tied to the softmax weights, dense
        # gradients): vocab 267735; large div_val 4 = 19997 x 1024 + 20000 x 256 + 160000 x 64 +
        # 67738 x 16 + projections (256 + 64 + 16) x 1024 = 37.26 M = 36391 rows of d_model 1024.
        model = dense(16, 512, 8, 2048, 267735, act="relu") if base else \
            dense(18, 1024, 16, 4096, 36391, act="relu")
        # Segment recurrence: mem_len = tgt_len (wt103_base/large.yaml); relative positional attention.
        model.update({"memory_len": int(r["seq_len_or_image_size"].split()[0]),
                      "relative_position": True, "softmax_head": 20000})
        n = int(r["num_gpus"])
        seq = int(r["seq_len_or_image_size"].split()[0])
        b = int(r["batch_per_gpu"])
        prec = "fp16-mixed" if r["precision"] == "amp_fp16" else r["precision"]
        # No gradient all-reduce overlaps the backward: train.py wraps the model in
        # DistributedDataParallel(find_unused_parameters=True), so DDP never rebuilds its buckets
        # in gradient-ready order (torch reducer.hpp should_rebuild_buckets) and reduces them in
        # reverse registration order, one after another (reducer.cpp mark_bucket_ready); the
        # first of them holds r_w_bias / r_r_bias, registered last (mem_transformer.py
        # _create_params) but shared by every layer, so ready only when layer 0's backward ends.
        cfg = config(model, gpu, node, n, prec, seq=seq, gbs=b * n, mbs=b, flash=False,
                     optimizer="lamb-per-tensor", framework="pytorch", overlap_dp=False)
        line = re.search(r"line (\d+)", r["source"])
        cases.append(case(r["id"], cfg, "tokens_per_s", num(r["value"]),
                          "NVIDIA/DeepLearningExamples@729963dd PyTorch Transformer-XL README line "
                          "%s (precision_public.csv %s)" % (line.group(1) if line else "?", r["id"]),
                          r["notes"][:r["notes"].find(";")]))
    write("nvidia-dle-transformer-xl", "public",
          "NVIDIA/DeepLearningExamples@729963dd PyTorch/LanguageModeling/Transformer-XL/README.md, "
          "training performance tables (DGX A100 40GB, DGX-1 V100 16GB, DGX-2H)",
          "Transformer-XL base (16 layers, d 512, 8 heads, inner 2048, tgt_len 192) and large (18 "
          "layers, d 1024, 16 heads, inner 4096, tgt_len 384), ReLU FFN, LayerNorm, tied "
          "embeddings, LAMB; AMP = Apex O2 -> fp16-mixed. Segment recurrence: memory_len = mem_len "
          "= tgt_len (queries attend over tgt_len + mem_len keys; Q/K/V projected over both); "
          "relative_position: the position projection, BD score matmul and rel-shift copies; "
          "adaptive softmax: softmax_head 20000 logits per token (cutoff 19997 + 3 cluster logits), "
          "tail clusters (evaluated only for the few tokens in them) omitted; vocab = embedding rows "
          "at d_model (base div_val 1: the full 267735-word table; large div_val 4: 37.26 M "
          "parameters = 36391 rows of 1024); batch/GPU read as the "
          "micro-batch with no accumulation (global = batch x GPUs); seq_len = tgt_len; "
          "parallel.overlap_dp_comm false: train.py's DistributedDataParallel(find_unused_parameters="
          "True) keeps its buckets in reverse registration order and the first one reduced holds "
          "r_w_bias/r_r_bias, whose gradient is complete only at the end of the backward, so the "
          "whole gradient all-reduce follows the backward", cases)


# ---------------------------------------------------------------------------------------------
# vTrain ground truth
# ---------------------------------------------------------------------------------------------
def vtrain(folder):
    for kind in ("single", "multi"):
        fname = "ground_truth_%s.csv" % kind
        rows = read(os.path.join(folder, "vtrain", fname))
        cases = []
        for i, d in enumerate(rows):
            h, a, L = int(d["hidden size"]), int(d["attention heads"]), int(d["# layers"])
            cfg = config(dense(L, h, a, 4 * h, 51200), "a100-sxm4-80gb", "dgx-a100",
                         int(d["# GPUs"]), "fp16-mixed", tp=int(d["tensor parallelism"]),
                         pp=int(d["pipeline parallelism"]), dp=int(d["data parallelism"]),
                         seq=int(d["sequence length"]), gbs=int(d["global batch"]),
                         mbs=int(d["micro batch"]), recompute="full", flash=False, framework="megatron-lm")
            cases.append(case("VTRAIN-%s-%04d" % (kind[0].upper(), i + 1), cfg,
                              "iteration_time_s", round(float(d["iteration time (ms)"]) / 1000, 7),
                              "%s line %d" % (fname, i + 2)))
        write("vtrain-" + kind, "vtrain",
              "VIA-Research/vTrain @f8dda847 data/%s (arXiv 2312.12391, MICRO'24), MIT license, "
              "Copyright (c) 2024 VIA Research Group at KAIST" % fname,
              "Megatron-DeepSpeed GPT on A100 (memory size not stated: assumed SXM4 80GB; the "
              "repo's configs give inter-node 800 (Gb/s per node) and intra-node 150, taken as "
              "DGX A100), 8 GPUs/node, fp16 -> fp16-mixed, full activation checkpointing, 1F1B, "
              "no flash attention, Adam, ZeRO not stated (0); vocab not stated: GPT-2's 50257 "
              "padded to 51200 as Megatron does; FFN 4h, GELU, LayerNorm, tied embeddings; "
              "iteration time ms -> s", cases)


# ---------------------------------------------------------------------------------------------
# llm_public_2.csv and precision_public_2.csv (second batch: framework column, peak memory)
# ---------------------------------------------------------------------------------------------
# Set of the second batch: its own headline next to "public" (the issue-3 set, whose gates stay).
PUBLIC_2 = "public-2"
LLAMA3_ARCH = dict(act="swiglu", norm="rmsnorm", tied=False)


def cite2(r, table="llm_public_2.csv"):
    return "%s (%s %s)" % (r["source"], table, r["id"])


def metric2(r):
    """The row's metric in the case format, and its value (README: units as printed)."""
    return {"iteration_time_s": "iteration_time_s", "peak_memory_gib": "peak_memory_gib",
            "tokens_per_sec_per_gpu": "tokens_per_s_per_gpu",
            "samples_per_sec_total": "samples_per_s"}[r["metric"]], num(r["value"])


def simumax(rows, unrep):
    """SIMUMAX-B200: measured Megatron-LM + TE step time and peak memory on 8x B200."""
    cases = []
    for r in rows:
        if not r["id"].startswith("SIMUMAX-B200"):
            continue
        metric, value = metric2(r)
        L, h, a, kv = (int(r[k]) for k in ("layers", "hidden", "heads", "kv_heads"))
        tp, pp, dp, cp = (int(r[k]) for k in ("tp", "pp", "dp", "cp"))
        gbs, mbs, seq = int(r["global_batch"]), int(r["micro_batch"]), int(r["seq_len"])
        mbc = gbs // (mbs * dp)
        if metric == "peak_memory_gib" and mbc != 4:
            continue  # the source reuses the mbc-4 memory of the same topology (README)
        vst = 2 if "vp2" in (r["source"] + r["notes"]).lower() and pp == 4 else 1
        model = dense(L, h, a, int(r["ffn_hidden"]), int(r["vocab"]), kv=kv, **LLAMA3_ARCH)
        ep, reason = 1, None
        if r["model"].startswith("DeepSeek"):
            # Multi-head latent attention as both models' config.json give it (q_lora_rank 1536,
            # kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128).
            v3 = "V3" in r["model"]
            model["mla"] = {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
                            "qk_rope_head_dim": 64, "v_head_dim": 128}
            model["moe"] = {"experts": 256 if v3 else 160, "top_k": 8 if v3 else 6,
                            "expert_ffn_hidden": 2048 if v3 else 1536,
                            "shared_experts": 1 if v3 else 2, "dense_layers": 1,
                            # Drop-and-pad routing: the DeepSeek launcher passes
                            # --moe-expert-capacity-factor 1 --moe-pad-expert-input-to-capacity
                            # (MooreThreads/SimuMax@1b8ca90bec07db48005ff04c69c002dc0626484f
                            # simu_tools/megatron_scripts/scripts/run_pretrain_deepseekv2.sh)
                            "capacity_factor": 1.0}
            ep = int(r["ep"])
        elif cp > 1:
            reason = ("context parallelism with cp_comm_type a2a (all-to-all over heads, Ulysses "
                      "style): the model's CP is Megatron's ring exchange of K/V")
        cfg = config(model, "b200", "dgx-b200", int(r["num_gpus"]), "bf16-mixed", tp=tp, pp=pp,
                     dp=dp, cp=cp, ep=ep, sp=tp > 1, zero=1, vstages=vst, seq=seq, gbs=gbs,
                     mbs=mbs, recompute="none", flash=True, attention_kernel="flash3",
                     framework=SIMUMAX_LAUNCHER)
        if ep > 1:  # the row's notes: "MoE alltoall dispatcher" (Megatron-Core's default is allgather)
            cfg["training"]["moe_dispatcher"] = "alltoall"
        if reason:
            unrep.append((r, reason, cfg))
            continue
        cases.append(case(r["id"], cfg, metric, value, cite2(r),
                          "%s; %d micro-batches per step%s; %s" % (
                              r["model"], mbc, ", interleaved VP 2" if vst > 1 else "",
                              "max over ranks of max_memory_allocated (GiB)"
                              if metric == "peak_memory_gib" else
                              "fastest of iterations 2-3 on the last rank (s)")))
    write("simumax-b200", PUBLIC_2,
          "MooreThreads/SimuMax@4dcaae51 docs/b200/b200_release_v1.2_summary.md (+ .json): "
          "MEASURED ('real') Megatron-LM step times and peak memory on 8x B200 (never SimuMax's "
          "predicted perf_ms)",
          "Megatron-LM @23e00ed + Transformer Engine 2.11 (NGC PyTorch 26.01) -> framework "
          "megatron-core; --bf16 (fp32 grad accumulation and reduce, distributed optimizer) -> "
          "bf16-mixed, zero 1; --sequence-parallel (no effect at TP 1); no recompute "
          "(--recompute-num-layers 0); TE attention (cuDNN fused attention on Blackwell) -> "
          "attention_kernel flash3; TP comm overlap disabled and no --overlap-grad-reduce / "
          "--overlap-param-gather (framework megatron-core with overlap_tp_comm and "
          "overlap_dp_comm false); micro-batch 1; layer-reduced "
          "Llama3-70B (12 or 8 of 80 layers) and Llama3-405B (4 of 126 layers, 16 KV heads as "
          "run) inline; DGX B200 node. Step time = fastest of iterations 2-3 (slightly "
          "optimistic). Peak memory = max_memory_allocated (no allocator reserve, no CUDA "
          "context), transcribed only for the 4-micro-batch runs: the 8/32-micro-batch rows reuse "
          "that run's memory (not independent measurements). DeepSeek rows: "
          "--moe-expert-capacity-factor 1 with --moe-pad-expert-input-to-capacity -> "
          "moe.capacity_factor 1 (drop-and-pad)", cases)


def torchtitan_rows(rows, unrep):
    """TORCHAO-F8 and TT-MXFP8: torchtitan Llama3-8B, FSDP2, bf16 vs float8 / MX recipes."""
    groups = {"TORCHAO-F8": [], "TT-MXFP8": []}
    for r in rows:
        prefix = r["id"].rsplit("-", 1)[0]
        if prefix not in groups:
            continue
        metric, value = metric2(r)
        gpu = {"H100 (variant not stated)": "h100-sxm", "MI300X": "mi300x",
               "B200 (power limited)": "b200", "GB200": "gb200"}[r["gpu"]]
        label = r["precision"]
        if gpu == "gb200":
            model = dict(dense(48, 5120, 40, 8192, 202048, kv=8, **LLAMA3_ARCH),
                         moe={"experts": 16, "top_k": 1, "expert_ffn_hidden": 8192,
                              "shared_experts": 1})
            node = {"preset": "gb200-nvl72", "name": "gb200-nvl72-as-64", "gpus_per_node": 64}
            cfg = config(model, gpu, node, 256, "bf16-mixed" if label == "bf16" else
                         "mxfp8-mixed", dp=256, ep=16, zero=3, seq=8192, gbs=2560, mbs=10,
                         recompute="none", flash=True, framework=TORCHTITAN_COMPILED)
            unrep.append((r, "Llama4-Scout on a GB200 cluster: GPU count ambiguous (table 512, "
                             "config 256 chips; local batch 10 or 1), NVL72 NVLink domains, "
                             "routed experts sharded over FSDP 64, partial MXFP8 coverage "
                             "(all linears except output, router.gate, wk, wv)", cfg))
            continue
        if label.startswith("bf16"):
            prec = "bf16-mixed"
        elif label.startswith("mxfp8"):
            prec = "mxfp8-mixed"
        elif "tensorwise" in label:
            prec = "fp8-mixed"
        else:  # rowwise, and rowwise_with_gw_hp (unrepresentable below)
            prec = {"preset": "fp8-mixed", "name": "fp8-mixed-rowwise", "fp8_recipe": "rowwise"}
        model = dense(32, 4096, 32, 14336, 128256, kv=8, **LLAMA3_ARCH)
        # The benchmark scripts run selective_ac_option "op" (per-op SAC), not torchtitan's default "2".
        cfg = config(model, gpu, None, 8, prec, zero=3, seq=8192, gbs=8, mbs=1,
                     recompute="selective", flash=True, framework=dict(TORCHTITAN_COMPILED, op_level_sac=True))
        if "gw_hp" in label:
            unrep.append((r, "float8 rowwise_with_gw_hp keeps the weight-gradient GEMMs in bf16: one "
                             "GEMM dtype per config (predicted as float8 rowwise throughout)", cfg))
            continue
        groups[prefix].append(case(r["id"], cfg, metric, value, cite2(r),
                                   "%s; %s; %s" % (label, r["unit"], r["framework"])))
    common = ("torchtitan Llama3-8B (32 layers, dim 4096, 32 heads, 8 KV heads, FFN 14336 SwiGLU, "
              "vocab 128256, untied), 8 GPUs, FSDP2 full sharding (zero 3), local batch 1, seq "
              "8192, per-op selective activation checkpointing (recompute selective, framework op_level_sac), "
              "torch.compile, SDPA flash attention (flash2 class), AdamW -> framework torchtitan. "
              "FSDP2 MixedPrecisionPolicy(param bf16, reduce fp32) keeps sharded fp32 parameters "
              "-> bf16-mixed; float8 tensorwise -> fp8-mixed (its float8 all-gather of weights is "
              "not expressible: gathered as bf16); float8 rowwise (bf16 all-gather) -> fp8-mixed with "
              "fp8_recipe rowwise; MX recipes (mxfp8_cublas, _rceil: same GEMMs, "
              "other scale rounding) -> mxfp8-mixed; the LM head stays bf16 in every recipe. "
              "Throughput = median tokens/s per GPU on rank 0; memory = torchtitan max_reserved "
              "GiB on rank 0 (allocator reserve included)")
    write("torchao-float8", PUBLIC_2,
          "pytorch/ao@49cb18a6 torchao/float8/README.md H100 and MI300X tables (benchmarks/float8/"
          "training/float8_training_benchmark.sh)",
          common + ". H100 variant not stated: h100-sxm. MI300X on its default 8-GPU node",
          groups["TORCHAO-F8"])
    write("torchtitan-mxfp8", PUBLIC_2,
          "pytorch/torchtitan@341b1551 docs/mxfp8.md 'Performance > Dense Models' (same numbers in "
          "pytorch/ao@36027d82 docs/source/workflows/training.md)",
          common + ". 8x power-limited B200 (limit not stated; the b200 preset runs at its TDP)",
          groups["TT-MXFP8"])


def torchao_moe(rows, unrep):
    """TORCHAO-MOE: Llama4-Scout cut to 2 layers on 4x B200, BF16 vs MXFP8."""
    cases = []
    for r in rows:
        if not r["id"].startswith("TORCHAO-MOE"):
            continue
        label = r["precision"]
        metric, value = metric2(r)
        prec = "bf16-mixed" if label == "bf16" else "mxfp8-mixed"
        model = dict(dense(2, 5120, 40, 8192, 202048, kv=8, **LLAMA3_ARCH),
                     moe={"experts": 16, "top_k": 1, "expert_ffn_hidden": 8192,
                          "shared_experts": 1})
        cfg = config(model, "b200", None, 4, prec, dp=4, ep=4, zero=3, seq=8192, gbs=32, mbs=8,
                     recompute="none", flash=True, framework=TORCHTITAN_COMPILED)
        if "only" in label:
            unrep.append((r, "MXFP8 on one class of GEMMs only (%s): a precision applies to every "
                             "GEMM (predicted as mxfp8-mixed)" % label, cfg))
            continue
        cases.append(case(r["id"], cfg, metric, value, cite2(r), "%s; %s" % (label, r["unit"])))
    write("torchao-moe", PUBLIC_2,
          "pytorch/ao@b7959dd6 torchao/prototype/moe_training/README.md 'End-to-end training "
          "benchmark with TorchTitan: Llama4 Scout vs bfloat16 baseline'",
          "torchtitan Llama4-Scout with 2 of 48 layers (all MoE: 16 routed experts top-1 + 1 "
          "shared expert, expert FFN 8192 SwiGLU; dim 5120, 40 heads, 8 KV heads, vocab 202048), "
          "4x B200, FSDP 4 (zero 3) x EP 4, local batch 8, seq 8192, no activation checkpointing, "
          "torch.compile -> framework torchtitan; bf16 -> bf16-mixed (FSDP2 fp32 shards), MXFP8 "
          "linears + grouped GEMMs -> mxfp8-mixed. Throughput = median tokens/s per GPU; memory = "
          "max reserved GiB", cases)


def pax_remat(model):
    """Paxml's remat at google/paxml@4b1899e4 (2024-06-05, the 24.04-paxml container's era): only
    StackedTransformerRepeated applies CHECKPOINT_POLICY (tasks/lm/model_params.py); GPT126MBase and
    run_llama_boolq.sh run USE_REPEATED_LAYER=False, a StackedTransformer whose remat defaults to
    False (praxis/layers/transformers.py) -> none. GPT5BBase: SAVE_DOT_WITH_NO_BATCH_DIM ->
    jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims, every weight matmul saved -> selective
    (framework jax: selective_saves_matmuls). GPT175BBase inherits TransformerLmSpmdAdafactor's
    SAVE_NOTHING -> full."""
    if model.startswith("GPT-5B"):
        return "selective"
    if model.startswith("GPT-175B"):
        return "full"
    return "none"


def pax(rows, unrep):
    """PAX-GPT and PAX-LLAMA (NVIDIA JAX-Toolbox Paxml): TE rows; XLA-native and LoRA apart."""
    cases = []
    for r in rows:
        if not r["id"].startswith("PAX-"):
            continue
        label = r["precision"]
        metric, value = metric2(r)
        L, h, a = int(r["layers"]), int(r["hidden"]), int(r["heads"])
        if r["model"].startswith("Llama"):
            model = dense(L, h, a, int(r["ffn_hidden"]), int(r["vocab"]), **LLAMA3_ARCH)
        else:
            model = dense(L, h, a, int(r["ffn_hidden"]), int(r["vocab"]))
        gpu = "a100-sxm4-80gb" if r["gpu"].startswith("A100") else "h100-sxm"
        n = int(r["num_gpus"])
        zero = 3 if r["zero_stage"].startswith("3") else 0
        prec = "fp8-mixed" if "FP8" in label else "bf16-mixed"
        flash = not r["model"].startswith("GPT-126M")
        # LoRA rank 32 on every layer (LORA_TARGET_LAYERS=all, the row's notes).
        lora = {"method": "lora", "lora_rank": 32, "lora_targets": "all-linear"} if "LoRA" in r["model"] else None
        cfg = config(model, gpu, None, n, prec, zero=zero, seq=int(r["seq_len"]),
                     gbs=int(r["global_batch"]), mbs=int(r["micro_batch"]), recompute=pax_remat(r["model"]),
                     flash=flash, attention_kernel="flash3" if gpu == "h100-sxm" and flash else None,
                     framework="jax", finetune=lora)
        reason = None
        if "XLA native" in label:
            reason = ("XLA-native BF16 (ENABLE_TE=0): the config of the TE BF16 row with another "
                      "implementation (XLA's own fusions and attention), which it cannot name")
        if reason:
            unrep.append((r, reason, cfg))
            continue
        cases.append(case(r["id"], cfg, metric, value, cite2(r),
                          "%s, %s; remat %s -> recompute %s" % (
                              r["model"], label, r["recompute"] or "not set in configs.py",
                              cfg["training"]["recompute"])))
    write("pax", PUBLIC_2,
          "NVIDIA/JAX-Toolbox@28603900 rosetta/rosetta/projects/pax/README.md (A100 and H100 "
          "results, Llama-2 7B fine-tuning); model configs google/paxml@04516ac8 paxml/contrib/gpu/"
          "scripts_gpu/configs.py",
          "Paxml/Praxis on JAX/XLA with Transformer Engine (ENABLE_TE=1), container jax:24.04-"
          "paxml -> framework jax. FPROP bf16 over fp32 parameters and Adam states, FSDP (zero 3) "
          "or pure DP -> bf16-mixed (the fp32 copy is the master; XLA casts before the gather); "
          "TE FP8 -> fp8-mixed. Remat (google/paxml@4b1899e4, praxis): GPT-126M and Llama-2 run "
          "without repeated layers, whose StackedTransformer does not remat -> recompute none; "
          "GPT-5B SAVE_DOT_WITH_NO_BATCH_DIM saves every weight matmul (dot_general without batch "
          "dimensions) -> recompute selective; GPT-175B inherits SAVE_NOTHING -> recompute full. Flash attention on (TE fused attention: flash3 on "
          "H100) except GPT-126M (run without). GPT: GELU MLP 4h, LayerNorm, learned positions, "
          "tied embeddings. Llama-2 7B SFT: full fine-tuning (every weight trained), same step "
          "as pre-training; Llama-2 7B LoRA: training.finetune lora, rank 32 on all linears. Throughput = sequences/s over all GPUs (averaging not stated)", cases)


def mlperf_lora(rows):
    """MLPERF40-LORA: Llama-2 70B LoRA fine-tuning (MLPerf Training v4.0, NVIDIA NeMo)."""
    cases = []
    gpus = {"H100-SXM5-80GB": "h100-sxm", "H200-SXM5-141GB": "h200-sxm", "L40S": "l40s"}
    for r in rows:
        if not r["id"].startswith("MLPERF40-LORA"):
            continue
        model = dense(80, 8192, 64, 28672, 32000, kv=8, **LLAMA3_ARCH)
        tp, cp, n = int(r["tp"]), int(r["cp"]), int(r["num_gpus"])
        cfg = config(model, gpus[r["gpu"]], None, n, "fp8-mixed", tp=tp, cp=cp,
                     dp=n // (tp * cp), sp=True, seq=8192, gbs=int(r["global_batch"]), mbs=1,
                     recompute="none", flash=True, framework="megatron-core",
                     finetune={"method": "lora", "lora_rank": 16, "lora_targets": "attention"})
        metric, value = metric2(r)
        cases.append(case(r["id"], cfg, metric, value, cite2(r), r["model"]))
    write("mlperf-lora", PUBLIC_2,
          "MLCommons training_results_v4.0 NVIDIA closed division, llama2_70b_lora (NeMo 24.04 + "
          "Transformer Engine)",
          "Llama-2 70B (80 layers, hidden 8192, 64 heads, 8 KV heads, FFN 28672 SwiGLU, vocab "
          "32000) LoRA fine-tuning on GovReport packed to 8192 tokens: adapters rank 16 on the "
          "attention projections, base weights frozen -> training.finetune lora, lora_targets "
          "attention. TE FP8 GEMMs over bf16-mixed (fp8_params) -> fp8-mixed; NeMo -> framework "
          "megatron-core; SP on; micro-batch 1. Throughput = sequences/s over all GPUs between "
          "validations (the last block of result_0)", cases)


def t5x(rows, unrep):
    """precision_public_2 T5X: encoder 512 / decoder 128 tokens: unrepresentable, nearest config."""
    dims = {"small": (8, 512, 6, 1024), "large": (24, 1024, 16, 2816), "xl": (24, 2048, 32, 5120),
            "xxl": (24, 4096, 64, 10240)}
    for r in rows:
        size = re.search(r"T5-v1.1-(\w+)", r["model"]).group(1)
        L, h, a, ffn = dims[size]
        model = {"architecture": "encoder-decoder", "layers": L, "decoder_layers": L,
                 "hidden": h, "heads": a, "kv_heads": a, "head_dim": 64, "ffn_hidden": ffn,
                 "vocab": 32128, "activation": "geglu", "norm": "rmsnorm",
                 "tied_embeddings": False}
        gpu = "a100-sxm4-80gb" if r["gpu"].startswith("A100") else "h100-sxm"
        n, b = int(r["num_gpus"]), int(r["batch_per_gpu"])
        tp = 8 if size == "xxl" else 1
        cfg = config(model, gpu, None, n, "fp8-mixed" if "fp8" in r["precision"] else
                     "bf16-mixed", tp=tp, seq=512, gbs=n * b // tp, mbs=b, recompute="none",
                     flash=True, framework="jax")
        r = dict(r, metric="samples_per_sec_total")
        unrep.append((r, "encoder-decoder with inputs 512 / targets 128 tokens: one seq_len per "
                         "config (predicted at 512 for both stacks, an upper bound)", cfg,
                      "precision_public_2.csv"))


def write_unrepresentable2(entries):
    cases = []
    for entry in entries:
        r, reason, cfg = entry[:3]
        table = entry[3] if len(entry) > 3 else "llm_public_2.csv"
        metric, value = metric2(r)
        cases.append(case(r["id"], cfg, metric, value, cite2(r, table), "NOT REPRESENTABLE: " +
                          reason))
    write("public-2-unrepresentable", "unrepresentable",
          "llm_public_2.csv and precision_public_2.csv rows whose run the config cannot describe "
          "(each case's notes say why; the config is the nearest expressible one)",
          "Promote a case to its source file once the config expresses it; conventions of the "
          "source files (simumax-b200, torchao-float8, torchtitan-mxfp8, torchao-moe, pax) apply",
          cases)


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/validation"
    llm = read(os.path.join(folder, "llm_public.csv"))
    prec = read(os.path.join(folder, "precision_public.csv"))
    megatron_sc21(llm)
    korthikanti22(llm)
    mosaic(llm)
    mlm_llama(llm)
    te_tutorial(llm, prec)
    nvidia_bert(prec)
    nvidia_txl(prec)
    vtrain(folder)
    llm2 = read(os.path.join(folder, "llm_public_2.csv"))
    prec2 = read(os.path.join(folder, "precision_public_2.csv"))
    unrep = []
    simumax(llm2, unrep)
    torchtitan_rows(llm2, unrep)
    torchao_moe(llm2, unrep)
    pax(llm2, unrep)
    mlperf_lora(llm2)
    t5x(prec2, unrep)
    write_unrepresentable2(unrep)


if __name__ == "__main__":
    main()
