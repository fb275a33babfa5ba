"""The installed tunedb package against a live tunedbd (simulated finder):
problems from keyword arguments and PyTorch-style descriptions, tune,
lookup, query, devices, stats, errors, and TLS with certificates made by
openssl. Run by install_and_test.py with $TUNEDBD and $TUNEDB_VENV set.
"""
import os
import socket
import subprocess
import tempfile
import time
import unittest

import tunedb
from tunedb.v1 import tunedb_pb2 as pb

DAEMON = None
TMP = None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_daemon(directory, *flags):
    return subprocess.Popen(
        [os.environ["TUNEDBD"], "--finder", "simulated",
         "--db", os.path.join(directory, "d.db"),
         "--socket", os.path.join(directory, "d.sock"),
         "--log-level", "warn", *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_until_listening(address, timeout=20):
    """Waits until the daemon accepts connections on `address` ("unix:PATH"
    or "HOST:PORT"). A gRPC channel whose first connection is refused backs
    off before it tries again (about 20 s for TCP, a few seconds for a Unix
    socket), so a client's first call waits for the listener, not for the
    channel's next attempt."""
    if address.startswith("unix:"):
        family, target = socket.AF_UNIX, address[len("unix:"):]
    else:
        host, port = address.rsplit(":", 1)
        family, target = socket.AF_INET, (socket.gethostbyname(host), int(port))
    deadline = time.monotonic() + timeout
    while True:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            try:
                s.connect(target)
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
        time.sleep(0.02)


def wait_until_serving(client):
    wait_until_listening(client.address)
    deadline = time.monotonic() + 20
    while True:
        try:
            return client.devices()
        except tunedb.Error:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def stop_daemon(daemon):
    daemon.terminate()
    return daemon.wait(timeout=30)


def setUpModule():
    global DAEMON, TMP
    TMP = tempfile.TemporaryDirectory(dir="/tmp")
    DAEMON = start_daemon(TMP.name)
    wait_until_serving(tunedb.Client("unix:" + os.path.join(TMP.name, "d.sock")))


def tearDownModule():
    code = stop_daemon(DAEMON)
    TMP.cleanup()
    assert code == 0, f"tunedbd exited {code}"


class FakeTorch:
    """Stands in for torch.float16 / torch.channels_last: str() is all the
    package reads."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class InstalledPackageTest(unittest.TestCase):
    def test_comes_from_the_environment_with_stubs_generated_at_build(self):
        venv = os.path.realpath(os.environ["TUNEDB_VENV"])
        self.assertTrue(os.path.realpath(tunedb.__file__).startswith(venv),
                        tunedb.__file__)
        self.assertTrue(os.path.realpath(pb.__file__).startswith(venv))


class ProblemTest(unittest.TestCase):
    def test_keyword_and_pytorch_descriptions_give_the_same_problem(self):
        a = tunedb.problem(n=32, c=64, k=128, input=(56, 56), filter=(3, 3),
                           padding=1, dtype="float16", layout="nhwc")
        b = tunedb.conv(N=32, C=64, H=56, W=56, K=128, R=3, S=3, padding=1,
                        dtype=FakeTorch("float16"),
                        memory_format=FakeTorch("channels_last"))
        self.assertEqual(a, b)
        self.assertEqual(a.layout, pb.LAYOUT_NHWC)
        self.assertEqual(a.input_type, pb.DATA_TYPE_HALF)
        self.assertEqual(a.compute_type, pb.DATA_TYPE_FLOAT)
        self.assertEqual(list(a.stride), [1, 1])
        self.assertEqual(a.mode, pb.CONV_MODE_CROSS_CORRELATION)

    def test_contiguous_format_is_nchw_and_3d_is_ndhwc(self):
        p = tunedb.conv(N=1, C=8, H=9, W=9, K=8, R=3, S=3, dtype="float32",
                        memory_format="contiguous_format", stride=(2, 1))
        self.assertEqual(p.layout, pb.LAYOUT_NCHW)
        self.assertEqual(list(p.stride), [2, 1])
        self.assertFalse(p.allow_tf32)
        q = tunedb.conv(N=1, C=8, D=4, H=9, W=9, K=8, T=1, R=3, S=3,
                        dtype="bfloat16")
        self.assertEqual(q.layout, pb.LAYOUT_NDHWC)
        self.assertEqual(list(q.filter_spatial), [1, 3, 3])

    def test_bad_arguments_name_what_is_wrong(self):
        for kwargs, word in (
                (dict(dtype="int8"), "dtype"),
                (dict(dtype="float16", tf32=True), "tf32"),
                (dict(stride=(1, 1, 1)), "stride"),
                (dict(padding=-1), "padding"),
                (dict(layout="ncdhw"), "layout"),
                (dict(op="sideways"), "op")):
            args = dict(n=1, c=8, k=8, input=(9, 9), filter=(3, 3))
            args.update(kwargs)
            with self.assertRaises(ValueError) as e:
                tunedb.problem(**args)
            self.assertIn(word, str(e.exception))
        with self.assertRaises(TypeError):
            tunedb.as_problem("op=fwd n=1")


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.db = tunedb.Client("unix:" + os.path.join(TMP.name, "d.sock"),
                                timeout=10)

    def tearDown(self):
        self.db.close()

    def test_tune_searches_once_then_lookup_answers(self):
        p = tunedb.conv(N=7, C=64, H=28, W=28, K=64, R=3, S=3, padding=1)
        self.assertIsNone(self.db.lookup(p))
        first = self.db.tune(p)
        self.assertTrue(first["searched"])
        algo = first["choice"]["algo"]["algo"]
        self.assertIsInstance(algo, int)
        again = self.db.tune(p)
        self.assertFalse(again["searched"])
        looked = self.db.lookup(p)
        self.assertEqual(looked["choice"]["algo"]["algo"], algo)
        self.assertIsInstance(looked["record_id"], int)
        self.assertIn("layout=nhwc", looked["record"]["key_text"])
        # A dict of PyTorch-style arguments is a problem too.
        dict_answer = self.db.lookup(dict(N=7, C=64, H=28, W=28, K=64, R=3,
                                          S=3, padding=1))
        self.assertEqual(dict_answer["record_id"], looked["record_id"])

    def test_graph_api_problems_get_engine_configs_with_knobs_and_a_plan(self):
        p = tunedb.conv(N=9, C=64, H=28, W=28, K=64, R=3, S=3, padding=1,
                        api="graph", alignment=16)
        answer = self.db.tune(p)
        self.assertIn("api=graph align=16", answer["record"]["key_text"])
        algo = answer["choice"]["algo"]
        self.assertTrue(algo["knobs"])
        self.assertTrue(algo["plan"])
        legacy = tunedb.conv(N=9, C=64, H=28, W=28, K=64, R=3, S=3, padding=1)
        self.assertIsNone(self.db.lookup(legacy))
        with self.assertRaises(ValueError):
            tunedb.conv(N=9, C=64, H=28, W=28, K=64, R=3, S=3, api="graph",
                        alignment=3)

    def test_query_yields_every_matching_record_across_pages(self):
        ns = range(101, 106)
        for n in ns:
            self.db.tune(dict(n=n, c=16, k=16, input=(8, 8), filter=(1, 1),
                              dtype="float32"))
        rows = list(self.db.query(in_type="f32", page_size=2))
        got = [r["problem"]["n"] for r in rows]
        self.assertEqual(sorted(got), list(ns))
        ids = [r["id"] for r in rows]
        self.assertEqual(ids, sorted(ids))
        self.assertEqual(len(list(self.db.query(in_type="f32", limit=3,
                                                page_size=2))), 3)
        self.assertEqual(list(self.db.query(n=999999)), [])
        self.assertIsInstance(rows[0], dict)

    def test_devices_and_device_selection(self):
        devices = self.db.devices()
        self.assertEqual(len(devices), 1)
        self.assertEqual(devices[0]["key"]["gpu_model"], "Simulated GPU")
        self.assertEqual(self.db.device_key("simulated").gpu_model,
                         "Simulated GPU")
        self.assertEqual(self.db.device_key(0).gpu_model, "Simulated GPU")
        with self.assertRaises(tunedb.Error) as e:
            self.db.device_key("H200")
        self.assertEqual(e.exception.code.name, "NOT_FOUND")

    def test_stats_count_the_searches(self):
        before = self.db.stats()["searches"]
        self.db.tune(dict(n=55, c=32, k=32, input=(7, 7), filter=(3, 3),
                          padding=1))
        self.assertEqual(self.db.stats()["searches"], before + 1)
        self.assertEqual(self.db.stats()["finder"], "simulated")

    def test_invalid_problem_is_invalid_argument(self):
        with self.assertRaises(tunedb.Error) as e:
            self.db.tune(dict(n=8, c=64, k=64, input=(8, 8), filter=(3, 3),
                              groups=3))
        self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")
        self.assertIn("groups", e.exception.details)

    def test_unreachable_daemon_is_unavailable(self):
        with tunedb.Client("unix:" + os.path.join(TMP.name, "none.sock"),
                           timeout=2) as db:
            with self.assertRaises(tunedb.Error) as e:
                db.stats()
        self.assertEqual(e.exception.code.name, "UNAVAILABLE")

    def test_address_defaults_to_the_environment(self):
        os.environ["TUNEDB_ADDRESS"] = "unix:/nowhere/x.sock"
        try:
            self.assertEqual(tunedb.Client().address, "unix:/nowhere/x.sock")
        finally:
            del os.environ["TUNEDB_ADDRESS"]
        self.assertEqual(tunedb.Client().address, tunedb.DEFAULT_ADDRESS)


class TlsTest(unittest.TestCase):
    def test_mtls_daemon_serves_a_client_with_its_ca_and_a_certificate(self):
        with tempfile.TemporaryDirectory(dir="/tmp") as d:
            ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
            with open(os.path.join(d, "ext"), "w") as f:
                f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
            script = (f"set -e; cd {d}; openssl req -x509 {ec} -days 2 "
                      "-subj /CN=ca -keyout ca.key -out ca.pem; ")
            for name, ext in (("server", "-extfile ext"), ("client", "")):
                script += (
                    f"openssl req {ec} -subj /CN={name} -keyout {name}.key "
                    f"-out {name}.csr; openssl x509 -req -in {name}.csr "
                    "-CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
                    f"{ext} -out {name}.pem; ")
            subprocess.run(script, shell=True, check=True,
                           capture_output=True)
            file = lambda name: os.path.join(d, name)  # noqa: E731
            address = f"localhost:{free_port()}"
            daemon = start_daemon(
                d, "--listen", address, "--tls-cert", file("server.pem"),
                "--tls-key", file("server.key"),
                "--tls-client-ca", file("ca.pem"))
            try:
                with tunedb.Client(address, timeout=5, tls_ca=file("ca.pem"),
                                   tls_cert=file("client.pem"),
                                   tls_key=file("client.key")) as db:
                    devices = wait_until_serving(db)
                    self.assertEqual(devices[0]["key"]["gpu_model"],
                                     "Simulated GPU")
                for refused in (dict(tls_ca=file("ca.pem")), {}):
                    with tunedb.Client(address, timeout=2, **refused) as c:
                        with self.assertRaises(tunedb.Error) as e:
                            c.stats()
                        self.assertEqual(e.exception.code.name,
                                         "UNAVAILABLE", refused)
            finally:
                self.assertEqual(stop_daemon(daemon), 0)
        with self.assertRaises(ValueError):
            tunedb.Client("localhost:1", tls_ca=file("ca.pem"),
                          tls_cert=file("client.pem"))


if __name__ == "__main__":
    unittest.main()
