#!/usr/bin/python3
"""Checks the deployment files against what the daemon really accepts.

deploy/kubernetes/daemonset.yaml is parsed (python3-yaml) and every property
the operations issue asks of the DaemonSet is checked; its ConfigMap is then
served by a real tunedbd (simulated finder, paths moved into a temporary
folder) and its probe port answered over gRPC. deploy/container/Dockerfile is
read instruction by instruction (no hadolint in Debian 12): its stages, what
they run and copy, that nothing is fetched from outside Debian's archive,
that the build stage installs only the bundle's packages and that
build_image.sh gives the Dockerfile its base images.

The drop-in's pod (example-preload-pod.yaml) is checked against the
DaemonSet's install-client init container, whose script is run on a fake
bundle in a temporary folder.

Usage: deploy_manifest_test.py --source REPO_ROOT --tunedbd PATH
    [--preload PATH]
"""
import argparse
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

ARGS = None


def load_docs(relative):
    with open(os.path.join(ARGS.source, relative), encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def one(docs, kind):
    found = [d for d in docs if d.get("kind") == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def parse_conf(text):
    """tunedbd's config file: `name = value` lines, '#' comments."""
    conf = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, value = line.partition("=")
        conf[name.strip()] = value.strip()
    return conf


_FLAGS = None


def daemon_flags():
    """The long flags `tunedbd --help` lists, without the dashes."""
    global _FLAGS
    if _FLAGS is None:
        out = subprocess.run([ARGS.tunedbd, "--help"], capture_output=True,
                             text=True, check=True).stdout
        _FLAGS = set(re.findall(r"--([a-z][a-z0-9-]*)", out))
    return _FLAGS


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health_check(address, timeout):
    """grpc.health.v1.Health/Check with an empty request; the raw response
    bytes (SERVING is field 1 = 1: b'\\x08\\x01'), or None."""
    import grpc
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with grpc.insecure_channel(address) as channel:
            check = channel.unary_unary(
                "/grpc.health.v1.Health/Check",
                request_serializer=lambda b: b,
                response_deserializer=lambda b: b)
            try:
                return check(b"", timeout=2)
            except grpc.RpcError:
                time.sleep(0.1)
    return None


class DaemonSetTest(unittest.TestCase):
    def setUp(self):
        self.docs = load_docs("deploy/kubernetes/daemonset.yaml")
        self.ds = one(self.docs, "DaemonSet")
        self.pod = self.ds["spec"]["template"]["spec"]
        self.daemon = next(c for c in self.pod["containers"]
                           if c["name"] == "tunedbd")
        config = one(self.docs, "ConfigMap")
        self.conf_text = config["data"]["tunedbd.conf"]
        self.conf = parse_conf(self.conf_text)
        self.health_port = int(self.conf["health-listen"].rsplit(":", 1)[1])

    def host_path_mounted_at(self, container, mount_path):
        volumes = {v["name"]: v for v in self.pod["volumes"]}
        for m in container["volumeMounts"]:
            if m["mountPath"] == mount_path:
                return volumes[m["name"]].get("hostPath", {}).get("path")
        return None

    def test_requests_no_gpu_so_it_never_takes_one_from_workloads(self):
        for c in self.pod["containers"] + self.pod.get("initContainers", []):
            resources = c.get("resources", {})
            for part in ("requests", "limits"):
                for name in resources.get(part, {}):
                    self.assertNotIn("gpu", name, f"{c['name']} {part}")
        env = {e["name"]: e["value"] for e in self.daemon["env"]}
        self.assertEqual(env["NVIDIA_VISIBLE_DEVICES"], "all")
        self.assertIn("compute", env["NVIDIA_DRIVER_CAPABILITIES"])

    def test_runs_with_the_nvidia_runtime_class(self):
        self.assertEqual(self.pod["runtimeClassName"], "nvidia")

    def test_selects_gpu_nodes(self):
        self.assertEqual(self.pod["nodeSelector"],
                         {"nvidia.com/gpu.present": "true"})

    def test_socket_and_state_folders_are_host_paths(self):
        socket_dir = os.path.dirname(self.conf["socket"])
        db_dir = os.path.dirname(self.conf["db"])
        self.assertEqual(self.host_path_mounted_at(self.daemon, socket_dir),
                         "/run/tunedb")
        self.assertEqual(self.host_path_mounted_at(self.daemon, db_dir),
                         "/var/lib/tunedb")

    def test_is_system_node_critical(self):
        self.assertEqual(self.pod["priorityClassName"],
                         "system-node-critical")

    def test_probes_are_grpc_on_the_health_port(self):
        ports = {p["containerPort"] for p in self.daemon["ports"]}
        self.assertIn(self.health_port, ports)
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            self.assertEqual(self.daemon[probe]["grpc"]["port"],
                             self.health_port, probe)
            self.assertNotIn("service", self.daemon[probe]["grpc"],
                             "the server-wide status, service ''")

    def test_runs_as_non_root_with_the_video_group(self):
        sc = self.pod["securityContext"]
        self.assertTrue(sc["runAsNonRoot"])
        self.assertNotEqual(sc["runAsUser"], 0)
        self.assertIn(44, sc["supplementalGroups"])
        own = self.daemon.get("securityContext", {})
        self.assertNotIn("runAsUser", own)
        self.assertFalse(own["allowPrivilegeEscalation"])
        self.assertEqual(own["capabilities"]["drop"], ["ALL"])

    def test_root_filesystem_is_read_only(self):
        self.assertTrue(
            self.daemon["securityContext"]["readOnlyRootFilesystem"])
        for c in self.pod.get("initContainers", []):
            self.assertTrue(c["securityContext"]["readOnlyRootFilesystem"])

    def test_requests_cpu_and_memory(self):
        requests = self.daemon["resources"]["requests"]
        self.assertIn("cpu", requests)
        self.assertIn("memory", requests)

    def test_selector_matches_the_pod_labels(self):
        labels = self.ds["spec"]["template"]["metadata"]["labels"]
        for k, v in self.ds["spec"]["selector"]["matchLabels"].items():
            self.assertEqual(labels.get(k), v)

    def test_config_names_only_real_daemon_settings(self):
        for name in self.conf:
            self.assertIn(name, daemon_flags(), f"config key {name}")
        for arg in self.daemon.get("args", []):
            if arg.startswith("--"):
                self.assertIn(arg[2:].split("=")[0], daemon_flags())

    def test_grace_period_outlasts_the_drain(self):
        self.assertGreater(self.pod["terminationGracePeriodSeconds"],
                           float(self.conf["drain"]))

    def test_its_config_serves_the_probe_port(self):
        with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
            conf = os.path.join(tmp, "tunedbd.conf")
            with open(conf, "w", encoding="utf-8") as f:
                f.write(self.conf_text)
            port = free_port()
            # Flags override the file: paths into tmp, the simulated finder.
            daemon = subprocess.Popen(
                [ARGS.tunedbd, "--config", conf,
                 "--socket", os.path.join(tmp, "d.sock"),
                 "--db", os.path.join(tmp, "d.db"),
                 "--finder", "simulated",
                 "--health-listen", f"127.0.0.1:{port}",
                 "--metrics-address", str(free_port()),
                 "--log-level", "warn"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            try:
                reply = health_check(f"127.0.0.1:{port}", timeout=20)
                self.assertEqual(reply, b"\x08\x01", "SERVING")
            finally:
                daemon.terminate()
                out = daemon.communicate(timeout=30)[0].decode()
            self.assertEqual(daemon.returncode, 0, out)


class ClientPodTest(unittest.TestCase):
    def test_example_pod_reaches_the_daemons_socket(self):
        docs = load_docs("deploy/kubernetes/daemonset.yaml")
        pod_spec = one(docs, "DaemonSet")["spec"]["template"]["spec"]
        conf = parse_conf(one(docs, "ConfigMap")["data"]["tunedbd.conf"])
        client = one(load_docs("deploy/kubernetes/example-client-pod.yaml"),
                     "Pod")["spec"]
        socket_dir = os.path.dirname(conf["socket"])
        volumes = {v["name"]: v for v in client["volumes"]}
        container = client["containers"][0]
        mount = next(m for m in container["volumeMounts"]
                     if m["mountPath"] == socket_dir)
        self.assertEqual(volumes[mount["name"]]["hostPath"]["path"],
                         "/run/tunedb")
        env = {e["name"]: e["value"] for e in container["env"]}
        self.assertEqual(env["TUNEDB_ADDRESS"], "unix:" + conf["socket"])
        self.assertIn(pod_spec["securityContext"]["runAsGroup"],
                      client["securityContext"]["supplementalGroups"])



def init_container(pod_spec, name):
    return next(c for c in pod_spec["initContainers"] if c["name"] == name)


class DropInPodTest(unittest.TestCase):
    """The drop-in in a pod: the DaemonSet's install-client puts the client
    side in a host folder, example-preload-pod.yaml preloads it from there.
    scripts/pod_proof.sh runs both; this checks their paths agree."""

    def setUp(self):
        docs = load_docs("deploy/kubernetes/daemonset.yaml")
        self.ds_pod = one(docs, "DaemonSet")["spec"]["template"]["spec"]
        self.conf = parse_conf(one(docs, "ConfigMap")["data"]["tunedbd.conf"])
        self.install = init_container(self.ds_pod, "install-client")
        self.pod = one(load_docs("deploy/kubernetes/example-preload-pod.yaml"),
                       "Pod")["spec"]
        self.container = self.pod["containers"][0]
        self.env = {e["name"]: e["value"] for e in self.container["env"]}

    @staticmethod
    def host_mounts(spec, container):
        """{hostPath: (mountPath, readOnly)} of the container."""
        volumes = {v["name"]: v for v in spec["volumes"]}
        return {volumes[m["name"]]["hostPath"]["path"]:
                (m["mountPath"], m.get("readOnly", False))
                for m in container["volumeMounts"]
                if "hostPath" in volumes[m["name"]]}

    def test_pod_preloads_what_the_daemonset_installs(self):
        installed = self.host_mounts(self.ds_pod, self.install)
        self.assertEqual(len(installed), 1)
        (host_dir, (install_at, _)), = installed.items()
        self.assertEqual(self.host_mounts(self.pod, self.container)[host_dir],
                         (install_at, True), "the same folder, read-only")
        preload = os.path.basename(ARGS.preload or "libtunedb_preload.so")
        self.assertEqual(self.env["LD_PRELOAD"],
                         f"{install_at}/current/lib/{preload}")
        self.assertIn(f"dst={install_at}\n", self.install["args"][0])

    def test_pod_reaches_the_daemons_socket_with_its_group(self):
        self.assertEqual(self.env["TUNEDB_ADDRESS"],
                         "unix:" + self.conf["socket"])
        socket_dir = os.path.dirname(self.conf["socket"])
        self.assertEqual(
            self.host_mounts(self.pod, self.container)["/run/tunedb"][0],
            socket_dir)
        self.assertIn(self.ds_pod["securityContext"]["runAsGroup"],
                      self.pod["securityContext"]["supplementalGroups"])

    def test_install_copies_from_the_images_bundle(self):
        script = self.install["args"][0]
        self.assertIn("src=/opt/tunedb\n", script)
        copies = [rest for ins, rest in dockerfile_stages(os.path.join(
            ARGS.source, "deploy/container/Dockerfile"))[0][-1][2]
                  if ins == "COPY"]
        self.assertIn("--from=build /src/build/bundle/tunedb /opt/tunedb",
                      copies)
        self.assertEqual(self.install["securityContext"]["capabilities"],
                         {"drop": ["ALL"]})

    def run_install(self, src, dst):
        """The init container's script, its folders moved to src and dst."""
        script = self.install["args"][0]
        script = re.sub(r"(?m)^src=.*$", f"src={shlex.quote(src)}", script)
        script = re.sub(r"(?m)^dst=.*$", f"dst={shlex.quote(dst)}", script)
        subprocess.run(self.install["command"] + [script], check=True,
                       capture_output=True, text=True)
        return sorted(os.listdir(os.path.join(dst, "versions")))

    def test_install_switches_versions_atomically_and_keeps_the_previous(self):
        with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
            src, dst = os.path.join(tmp, "image"), os.path.join(tmp, "node")
            for sub in ("bin", "lib", "share"):
                os.makedirs(os.path.join(src, sub))
            cli = os.path.join(src, "bin", "tunedb")
            with open(cli, "w", encoding="utf-8") as f:
                f.write("#!/bin/sh\necho 'tunedb 9.8.7'\n")
            os.chmod(cli, 0o755)
            lib = os.path.join(src, "lib", "libtunedb_preload.so")

            def build(content):
                with open(lib, "w", encoding="utf-8") as f:
                    f.write(content)

            def current():
                return os.readlink(os.path.join(dst, "current"))

            build("one")
            self.assertEqual(len(self.run_install(src, dst)), 1)
            first = current()
            self.assertRegex(first, r"^versions/9\.8\.7-[0-9]+$", "relative")
            with open(os.path.join(dst, "current", "lib",
                                   "libtunedb_preload.so")) as f:
                self.assertEqual(f.read(), "one")
            self.assertTrue(os.access(os.path.join(dst, "current", "bin",
                                                   "tunedb"), os.X_OK))
            self.assertEqual(self.run_install(src, dst), [first[9:]],
                             "the same build installs nothing new")
            build("two")
            self.assertEqual(len(self.run_install(src, dst)), 2)
            second = current()
            self.assertNotEqual(second, first)
            build("three")
            self.assertEqual(self.run_install(src, dst),
                             sorted([second[9:], current()[9:]]),
                             "the previous is kept, the oldest removed")
            self.assertEqual(sorted(os.listdir(dst)), ["current", "versions"])


def dockerfile_stages(path):
    """[(stage name, base, [(INSTRUCTION, arguments)])] plus the global
    ARG defaults, continuation lines joined and comments dropped."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines, current = [], ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or not stripped:
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    args, stages = {}, []
    for line in lines:
        instruction, _, rest = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            words = rest.split()
            name = words[2] if len(words) > 2 and words[1].upper() == "AS" \
                else str(len(stages))
            stages.append((name, words[0], []))
        elif not stages and instruction == "ARG":
            k, _, v = rest.partition("=")
            args[k.strip()] = v.strip()
        else:
            stages[-1][2].append((instruction, rest))
    return stages, args


class DockerfileTest(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(ARGS.source, "deploy/container/Dockerfile")
        self.stages, self.args = dockerfile_stages(self.path)
        self.by_name = {s[0]: s for s in self.stages}

    def base(self, stage):
        base = self.by_name[stage][1]
        m = re.fullmatch(r"\$\{?(\w+)\}?", base)
        return self.args[m.group(1)] if m else base

    def runs(self, stage):
        return [rest for ins, rest in self.by_name[stage][2] if ins == "RUN"]

    def test_is_multi_stage_with_a_debian_12_build(self):
        self.assertIn("build", self.by_name)
        self.assertEqual(self.stages[-1][0], "runtime")
        self.assertEqual(self.base("build"), "debian:12")

    def test_build_stage_installs_from_debian_and_makes_the_bundle(self):
        runs = " ; ".join(self.runs("build"))
        self.assertIn("scripts/install-deps.sh", runs)
        self.assertIn("--target bundle", runs)
        self.assertIn("-DTUNEDB_BUILD_TESTS=OFF", runs)

    def test_fetches_nothing_beyond_debians_archive(self):
        for name, _, instructions in self.stages:
            for ins, rest in instructions:
                self.assertNotEqual(ins, "ADD", "ADD can fetch URLs")
                if ins == "RUN":
                    for tool in ("curl", "wget", "git clone", "pip install",
                                 "http://", "https://"):
                        self.assertNotIn(tool, rest, f"stage {name}")
        with open(os.path.join(ARGS.source, "scripts/install-deps.sh"),
                  encoding="utf-8") as f:
            deps = f.read()
        self.assertNotRegex(deps, r"\b(curl|wget)\b")

    def test_runtime_stage_holds_the_bundle_and_runs_tunedbd_as_non_root(self):
        instructions = self.by_name["runtime"][2]
        copies = [rest for ins, rest in instructions if ins == "COPY"]
        self.assertIn("--from=build /src/build/bundle/tunedb /opt/tunedb",
                      copies)
        entry = [rest for ins, rest in instructions if ins == "ENTRYPOINT"]
        self.assertEqual(entry, ['["/opt/tunedb/bin/tunedbd"]'])
        users = [rest for ins, rest in instructions if ins == "USER"]
        self.assertEqual(len(users), 1)
        self.assertNotIn(users[0].split(":")[0], ("0", "root"))
        self.assertFalse(
            [r for r in self.runs("runtime") if "apt-get" in r],
            "the runtime base needs no package manager")

    def test_libraries_the_bundle_leaves_out_are_carried(self):
        with open(os.path.join(ARGS.source, "scripts/make_bundle.sh"),
                  encoding="utf-8") as f:
            skip = re.search(r"skip_re='([^']+)'", f.read()).group(1)
        carried = re.search(r"for lib in ([^;]+);",
                            " ".join(self.runs("build"))).group(1).split()
        for lib in carried:
            self.assertRegex(lib, skip, f"{lib} is not left out by the bundle")
        for lib in ("libssl.so.3", "libcrypto.so.3", "libsystemd.so.0"):
            self.assertIn(lib, carried)

    def test_copied_files_exist_and_the_config_is_valid(self):
        for name, _, instructions in self.stages:
            for ins, rest in instructions:
                if ins != "COPY" or rest.startswith("--from"):
                    continue
                for src in shlex.split(rest)[:-1]:
                    self.assertTrue(
                        os.path.exists(os.path.join(ARGS.source, src)), src)
        with open(os.path.join(ARGS.source, "deploy/container/tunedbd.conf"),
                  encoding="utf-8") as f:
            conf = parse_conf(f.read())
        for name in conf:
            self.assertIn(name, daemon_flags(), f"config key {name}")
        exposed = " ".join(rest for ins, rest in self.by_name["runtime"][2]
                           if ins == "EXPOSE").split()
        self.assertIn(conf["health-listen"].rsplit(":", 1)[1], exposed)
        self.assertIn(conf["metrics-address"].rsplit(":", 1)[1], exposed)

    def test_build_stage_installs_only_what_the_bundle_needs(self):
        self.assertIn("scripts/install-deps.sh --bundle",
                      " ; ".join(self.runs("build")))
        with open(os.path.join(ARGS.source, "scripts/install-deps.sh"),
                  encoding="utf-8") as f:
            deps = f.read()
        build_deps = re.search(r"build_deps=\(([^)]*)\)", deps).group(1)
        for package in ("libgtest-dev", "libbenchmark-dev", "postgresql",
                        "prometheus", "clang"):
            self.assertNotIn(package, build_deps.split())
        self.assertIn("patchelf", build_deps.split())

    def test_registry_less_build_sets_the_dockerfiles_base_args(self):
        with open(os.path.join(ARGS.source,
                               "deploy/container/build_image.sh"),
                  encoding="utf-8") as f:
            script = f.read()
        for arg in self.args:
            self.assertIn(f'--build-arg "{arg}=', script)
        self.assertIn("--isolation chroot", script)
        self.assertIn("Dockerfile.dockerignore", script)

    def test_build_context_leaves_out_build_trees(self):
        with open(self.path + ".dockerignore", encoding="utf-8") as f:
            ignored = f.read().split()
        for entry in (".git", "build", "build-*"):
            self.assertIn(entry, ignored)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--tunedbd", required=True)
    parser.add_argument("--preload", default=None)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
