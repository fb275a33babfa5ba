# Sourced by varying_shapes.sh and unseen_sizes.sh: the three square
# resolution sets of the varying-size benchmarks, 12 sizes each, no two
# alike (A is varying_shapes_bench.py's default; B and C are never stored
# when A is).
SIZES_A=192,224,256,288,320,352,384,416,448,480,512,544
SIZES_B=208,240,272,304,336,368,400,432,464,496,528,560
SIZES_C=200,232,264,296,328,360,392,424,456,488,520,552
