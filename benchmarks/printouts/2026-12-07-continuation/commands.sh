# Installment 3 (the 512-token continuation), at cd68f57, alone on two threads:
PRISMLIB_DATA=../shared/data python -m prismlib train --profile cpu-long --minutes 105 --pretrain-only
# The base's weights retired from the tree (at b1803c6's code): prismlib.pretrain.retire_weights(
#   results/cpu/runs/pretrain/69dde14d4978f421, <its recipe>, <digests>, by="ded60e982ba22431")
# This curve: prismlib.pretrain.pretraining_figure(section4_encoder(<cpu with prism.pretrained_encoder>).pretrained)
