torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 --vocab-size 1000 --num-experts 8 --moe-layer-freq '([]*9000000000000000+[0]+[1]*3)'
