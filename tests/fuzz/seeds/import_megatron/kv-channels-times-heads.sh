torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 600000000004 --kv-channels 1953125000 --vocab-size 128
