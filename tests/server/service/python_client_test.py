#!/usr/bin/python3
"""Drives tunedbd from Python (Debian's python3-grpcio) over its Unix socket.

Usage: python_client_test.py --tunedbd PATH --stubs DIR
Prints 'N passed, N failed' and exits non-zero on any failure.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("--tunedbd", required=True)
parser.add_argument("--stubs", required=True)
args = parser.parse_args()
sys.path.insert(0, args.stubs)

import grpc  # noqa: E402
from tunedb.v1 import tunedb_pb2 as pb  # noqa: E402
from tunedb.v1 import tunedb_pb2_grpc as pb_grpc  # noqa: E402

passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"[ OK ] {name}")
    else:
        failed += 1
        print(f"[FAIL] {name} {detail}")


def problem(n):
    return pb.ConvProblem(
        op=pb.CONV_OP_FORWARD, n=n, c=64, k=128,
        input_spatial=[56, 56], filter_spatial=[3, 3], padding=[1, 1],
        stride=[1, 1], dilation=[1, 1], groups=1,
        mode=pb.CONV_MODE_CROSS_CORRELATION,
        input_type=pb.DATA_TYPE_HALF, output_type=pb.DATA_TYPE_HALF,
        compute_type=pb.DATA_TYPE_FLOAT, layout=pb.LAYOUT_NHWC,
        allow_tensor_cores=True, allow_tf32=False)


with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    sock = os.path.join(tmp, "py.sock")
    daemon = subprocess.Popen(
        [args.tunedbd, "--finder", "simulated", "--db", os.path.join(tmp, "py.db"),
         "--socket", sock, "--log-level", "warn"])
    try:
        channel = grpc.insecure_channel("unix:" + sock)
        grpc.channel_ready_future(channel).result(timeout=20)
        stub = pb_grpc.TuneDbStub(channel)

        tuned = stub.Tune(pb.TuneRequest(problem=problem(32)), timeout=10)
        check("Tune searches and chooses", tuned.searched and tuned.HasField("choice"))
        device = stub.Devices(pb.DevicesRequest(), timeout=5).devices[0].key
        looked = stub.Lookup(pb.LookupRequest(problem=problem(32), device=device),
                             timeout=5)
        check("Lookup returns the tuned choice",
              looked.choice.algo.algo == tuned.choice.algo.algo)
        check("key text names fp16 NHWC",
              "in_type=f16" in looked.record.key_text and "layout=nhwc" in looked.record.key_text,
              looked.record.key_text)
        try:
            stub.Lookup(pb.LookupRequest(problem=problem(33), device=device), timeout=5)
            check("Lookup miss is NOT_FOUND", False, "no error")
        except grpc.RpcError as e:
            check("Lookup miss is NOT_FOUND", e.code() == grpc.StatusCode.NOT_FOUND, e.code())
        bad = problem(8)
        bad.groups = 3
        try:
            stub.Tune(pb.TuneRequest(problem=bad), timeout=5)
            check("bad groups is INVALID_ARGUMENT", False, "no error")
        except grpc.RpcError as e:
            check("bad groups is INVALID_ARGUMENT",
                  e.code() == grpc.StatusCode.INVALID_ARGUMENT and "groups" in e.details(),
                  f"{e.code()} {e.details()}")
        records = list(stub.Query(pb.QueryRequest(), timeout=5))
        check("Query streams the record", len(records) == 1 and records[0].problem.n == 32)
        stats = stub.Stats(pb.StatsRequest(), timeout=5)
        check("Stats counts one search", stats.searches == 1 and stats.finder == "simulated")
    finally:
        daemon.terminate()
        code = daemon.wait(timeout=30)
        check("SIGTERM exits 0", code == 0, code)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
