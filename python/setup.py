"""Builds the tunedb package; the gRPC stubs are generated here, at build
time, from proto/tunedb/v1/tunedb.proto next to this folder (or
$TUNEDB_PROTO_DIR) with protoc and grpc_python_plugin (Debian's
protobuf-compiler and protobuf-compiler-grpc; $PROTOC and
$GRPC_PYTHON_PLUGIN override them)."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join("tunedb", "v1", "tunedb.proto")


def tool(env, name):
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        raise SystemExit(f"tunedb: {name} not found (install it or set ${env})")
    return path


class BuildPyWithStubs(build_py):
    """build_py, then protoc writes tunedb/v1/tunedb_pb2{,_grpc}.py into the
    build folder next to the package's own modules."""

    def run(self):
        super().run()
        proto_root = os.environ.get("TUNEDB_PROTO_DIR",
                                    os.path.join(HERE, "..", "proto"))
        if not os.path.exists(os.path.join(proto_root, PROTO)):
            raise SystemExit(f"tunedb: {PROTO} not found under {proto_root} "
                             "(set $TUNEDB_PROTO_DIR)")
        subprocess.check_call([
            tool("PROTOC", "protoc"), f"--proto_path={proto_root}",
            f"--python_out={self.build_lib}", f"--grpc_out={self.build_lib}",
            "--plugin=protoc-gen-grpc=" +
            tool("GRPC_PYTHON_PLUGIN", "grpc_python_plugin"),
            os.path.join(proto_root, PROTO)])


setup(cmdclass={"build_py": BuildPyWithStubs})
