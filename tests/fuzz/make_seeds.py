#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/).

The key-text seeds are written by hand; the others come from here: shape
files in each format, export lines, requests of each kind the service takes
(serialized with Debian's python3-protobuf after protoc --python_out) and
worker protocol frames. Run it again after changing a format, then commit
what changed. Usage: /usr/bin/python3 make_seeds.py [REPO_ROOT] (Debian's
python3, which python3-protobuf belongs to)
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")

DEVICE = "gpu=NVIDIA%20H200 cc=9.0 sms=132 cudnn=9.19.0 cuda=13.0"
PROBLEM = ("op=fwd n=64 c=3 k=64 in=224x224 filt=7x7 pad=3x3 stride=2x2 "
           "dil=1x1 groups=1 mode=xcorr in_type=f32 out_type=f32 compute=f32 "
           "layout=nchw tc=1 tf32=1")
PROBLEM_3D = ("op=bwd_filter n=8 c=64 k=64 in=16x56x56 filt=3x3x3 pad=1x1x1 "
              "stride=1x1x1 dil=1x1x1 groups=1 mode=conv in_type=bf16 "
              "out_type=bf16 compute=f32 layout=ndhwc tc=1 tf32=0")
KEY = "kv=1 " + DEVICE + " " + PROBLEM


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def shape_files():
    jsonl = "\n".join([
        '{"c": 64, "k": 64, "in": [56, 56], "filt": 3, "pad": 1}',
        '{"n": 8, "c": 256, "k": 256, "in": 14, "filt": 3, "pad": 1, '
        '"stride": 2, "ops": ["fwd", "bwd_filter"], "dtype": "fp16", '
        '"layout": "nhwc"}',
        '{"name": "depthwise", "c": 96, "k": 96, "groups": 96, '
        '"in": "112x112", "filt": 3, "pad": 1, "stride": 2}',
        '{"c": 32, "k": 64, "in": [16, 64, 64], "filt": [3, 3, 3], '
        '"pad": 1, "layout": "ndhwc"}'])
    csv = "\n".join([
        "n,c,k,in,filt,pad,stride,groups,ops",
        "32,64,64,56x56,3,1,1,1,fwd;bwd_data;bwd_filter",
        "32,96,96,112x112,3,1,2,96,fwd",
        '32,3,64,224,7,3,2,,"fwd,bwd_filter"'])
    keys = "\n".join(["# a comment", PROBLEM, "", KEY, PROBLEM_3D])
    bad = "\n".join(["n,c,k,in,filt", "1,2,3,4x4,0", "x,1,1,1,1",
                     "1,1,1,8x8x8,3"])
    # First byte: format (0 auto, 1 JSON lines, 2 CSV, 3 key text) and
    # defaults (4 channels last, 8 forward only, 16 fp16).
    write("shape_file", "jsonl", b"\x01" + jsonl.encode())
    write("shape_file", "jsonl_auto_nhwc", b"\x04" + jsonl.encode())
    write("shape_file", "csv", b"\x02" + csv.encode())
    write("shape_file", "csv_auto_fwd_fp16", b"\x18" + csv.encode())
    write("shape_file", "keys", b"\x03" + keys.encode())
    write("shape_file", "keys_auto", b"\x00" + keys.encode())
    write("shape_file", "csv_errors", b"\x02" + bad.encode())
    write("shape_file", "jsonl_errors", b"\x01" + b'{"c": 1}\n[1]\n{"in": '
          b'[1, 2, 3, 4], "c": 1, "k": 1, "filt": 1}\n{"strde": 1}\nnot json')


def record(version=2, results=2, **extra):
    timing = {"median_ms": 0.126, "spread_ms": 0.015625, "samples": 5}
    zero = {"median_ms": 0, "spread_ms": 0, "samples": 0}
    out = []
    for i in range(results):
        r = {"algo": 1 + 4 * i, "math_type": ["tensor_op", "fma"][i % 2],
             "status": ["ok", "not_supported"][i % 2]}
        if version == 1:
            r.update(timing if i == 0 else zero)
        else:
            r["launch"] = timing if i == 0 else zero
            r["gpu"] = timing if i == 0 else zero
            r["host"] = timing if i == 0 else zero
        r.update({"workspace_bytes": 1048576 * (i == 0),
                  "deterministic": False, "retimed": i == 0, "error": ""})
        out.append(r)
    line = {"format": "tunedb-record", "version": version, "key": KEY,
            "measured_at_us": 1700000000000000, "host": "node-7",
            "gpu_uuid": "GPU-0123abcd", "driver_version": "580.65.06",
            "finder": "cudnn", "repeats": 5,
            "workspace_cap_bytes": 4294967296, "search_ms": 123.25,
            "verified": True, "served_count": 17}
    if version != 1:
        line["timing_version"] = 2
    line["results"] = out
    line.update(extra)
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False)


def import_lines():
    write("import_line", "v2", record())
    write("import_line", "v1", record(version=1, results=1))
    write("import_line", "v2_no_results", record(results=0))
    write("import_line", "v2_unicode_host", record(host="nœud-7 \u00e9"))
    write("import_line", "v2_unknown_member", record(extra_member=1))
    write("import_line", "v3", record(version=3))
    write("import_line", "v2_float_count", record(served_count=1e30))
    write("import_line", "not_object", "[1,2,3]")


def compile_protos(out):
    subprocess.run(
        ["protoc", "--proto_path=" + os.path.join(ROOT, "proto"),
         "--proto_path=" + ROOT, "--python_out=" + out,
         os.path.join(ROOT, "proto", "tunedb", "v1", "tunedb.proto"),
         os.path.join(ROOT, "server", "worker", "worker.proto")], check=True)
    sys.path.insert(0, out)
    from tunedb.v1 import tunedb_pb2  # noqa: E402
    from server.worker import worker_pb2  # noqa: E402
    return tunedb_pb2, worker_pb2


def fill_problem(p, pb, three_d=False):
    p.op = 1  # forward
    p.n, p.c, p.k = 64, 3, 64
    dims = 3 if three_d else 2
    p.input_spatial.extend([16, 56, 56] if three_d else [224, 224])
    p.filter_spatial.extend([3] * dims if three_d else [7, 7])
    p.padding.extend([1] * dims if three_d else [3, 3])
    p.stride.extend([1] * dims if three_d else [2, 2])
    p.dilation.extend([1] * dims)
    p.groups = 1
    p.mode = 1
    p.input_type = p.output_type = p.compute_type = 1
    p.layout = 3 if three_d else 1
    p.allow_tensor_cores = True
    p.allow_tf32 = True


def fill_device(d):
    d.gpu_model = "NVIDIA H200"
    d.cc_major, d.cc_minor, d.sm_count = 9, 0, 132
    d.cudnn_version, d.cuda_runtime_version = 91900, 13000


def requests(pb):
    # First byte: 0 Lookup, 1 Tune, 2 TuneBatch, 3 Query, 4 Invalidate,
    # 5 Export, 6 ImportLine.
    def put(name, kind, message):
        write("request", name, bytes([kind]) + message.SerializeToString())

    lookup = pb.LookupRequest()
    fill_problem(lookup.problem, pb)
    fill_device(lookup.device)
    lookup.constraints.max_workspace_bytes = 1 << 30
    lookup.constraints.deterministic_only = True
    lookup.constraints.launch_mode = 2
    lookup.choice_only = True
    put("lookup", 0, lookup)
    no_device = pb.LookupRequest()
    fill_problem(no_device.problem, pb)
    put("lookup_no_device", 0, no_device)
    # A Warm's bytes go to the same first byte as a Lookup's.
    warm = pb.WarmRequest()
    warm.program = "train-3f9a"
    fill_device(warm.device)
    warm.predict = True
    warm.max_keys = 276
    put("warm", 0, warm)
    tune = pb.TuneRequest()
    fill_problem(tune.problem, pb, three_d=True)
    tune.force = True
    put("tune_3d", 1, tune)
    tune_device = pb.TuneRequest()
    fill_problem(tune_device.problem, pb)
    fill_device(tune_device.device)
    put("tune_device", 1, tune_device)
    batch = pb.TuneBatchRequest()
    batch.request.CopyFrom(tune_device)
    batch.expected_total = 3
    put("tune_batch", 2, batch)
    query = pb.QueryRequest()
    query.filter.fields["gpu"] = "NVIDIA H200"
    query.filter.fields["op"] = "fwd"
    query.filter.since_us = 1
    query.page_size = 10
    query.after_id = 5
    put("query", 3, query)
    query_hash = pb.QueryRequest()
    query_hash.filter.fields["hash"] = "0123456789abcdef"
    put("query_hash", 3, query_hash)
    invalidate = pb.InvalidateRequest()
    invalidate.all = True
    put("invalidate_all", 4, invalidate)
    invalidate_filter = pb.InvalidateRequest()
    invalidate_filter.filter.fields["layout"] = "nhwc"
    put("invalidate_filter", 4, invalidate_filter)
    export = pb.ExportRequest()
    export.filter.until_us = 1700000000000000
    put("export", 5, export)
    line = pb.ImportLine()
    line.json = record().encode()
    line.expected_lines = 1
    put("import_line", 6, line)


def request_streams(pb):
    # First byte: even, an Import; odd, a TuneBatch. Then each message as a
    # 2-byte little-endian length and its bytes.
    def stream(kind, messages):
        body = b"".join(struct.pack("<H", len(m)) + m for m in messages)
        return bytes([kind]) + body

    def line(version, expected=0, import_id=""):
        m = pb.ImportLine()
        m.json = record(version=version).encode()
        m.expected_lines = expected
        m.import_id = import_id
        return m.SerializeToString()

    garbage = b"\x0a\x64\x01\x02"  # field 1 of length 100, 2 bytes long
    not_utf8 = pb.ImportLine()
    not_utf8.json = record().encode()[:20] + b"\xff\xfe" + record().encode()[20:]
    write("request_stream", "import_whole",
          stream(0, [line(1, expected=3), line(2), line(3)]))
    write("request_stream", "import_named",
          stream(0, [line(3, expected=2, import_id="import-seed"), line(2)]))
    write("request_stream", "import_bad_third",
          stream(0, [line(1), line(2), garbage, line(3)]))
    write("request_stream", "import_not_utf8",
          stream(0, [line(1), not_utf8.SerializeToString()]))
    write("request_stream", "import_short",
          stream(0, [line(1, expected=5), line(2)]))
    item = pb.TuneBatchRequest()
    fill_problem(item.request.problem, pb)
    fill_device(item.request.device)
    tb = item.SerializeToString()
    write("request_stream", "batch", stream(1, [tb, tb, garbage, tb]))


def frame(message):
    body = message.SerializeToString()
    return struct.pack("<I", len(body)) + body


def worker_frames(pb, wpb):
    # First byte: even, the daemon reads Responses; odd, a worker reads
    # Requests.
    hello = wpb.Response()
    hello.pid = 1234
    d = hello.devices.add()
    fill_device(d.key)
    d.ordinal, d.uuid, d.driver_version = 0, "GPU-0123abcd", "580.65.06"
    d.total_memory_bytes, d.mig = 150 << 30, False
    answer = wpb.Response()
    answer.id = 7
    for i in range(2):
        r = answer.results.add()
        r.algo, r.math_type, r.status = 1 + i, 1 + i, 1 + i
        for t in (r.launch, r.gpu, r.host):
            t.median_ms, t.spread_ms, t.samples = 0.5, 0.01, 5
        r.workspace_bytes = 4096 * i
        r.deterministic = True
    answer.repeats, answer.workspace_cap_bytes, answer.verified = 5, 1 << 30, True
    failure = wpb.Response()
    failure.id = 8
    failure.code = 13
    failure.message = "cuDNN: CUDNN_STATUS_EXECUTION_FAILED"
    failure.fatal = True
    write("worker_frame", "hello", b"\x00" + frame(hello))
    write("worker_frame", "hello_answer_failure",
          b"\x00" + frame(hello) + frame(answer) + frame(failure))
    write("worker_frame", "answer_cut_short", b"\x00" + frame(answer)[:-3])
    write("worker_frame", "frame_too_large", b"\x00" + struct.pack("<I", 17 << 20))
    request = wpb.Request()
    request.id = 7
    request.problem = PROBLEM
    request.workspace_cap_bytes = 1 << 30
    request.timeout_ms = 60000
    bad = wpb.Request()
    bad.id = 8
    bad.problem = "op=fwd n=0"
    write("worker_frame", "request", b"\x01" + frame(request))
    write("worker_frame", "requests_good_and_bad",
          b"\x01" + frame(request) + frame(bad) + b"\x05\x00\x00\x00\xff")
    write("worker_frame", "empty_frames", b"\x01" + b"\x00\x00\x00\x00" * 3)


def main():
    shape_files()
    import_lines()
    with tempfile.TemporaryDirectory() as out:
        pb, wpb = compile_protos(out)
        requests(pb)
        request_streams(pb)
        worker_frames(pb, wpb)
    for target in sorted(os.listdir(CORPUS)):
        print(target, len(os.listdir(os.path.join(CORPUS, target))), "seeds")


if __name__ == "__main__":
    main()
