"""tunedb.Client: the tunedbd gRPC API as Python calls returning dicts.

    import tunedb
    db = tunedb.Client()        # $TUNEDB_ADDRESS or the host's socket
    best = db.tune(tunedb.conv(N=64, C=64, H=56, W=56, K=64, R=3, S=3,
                               padding=1, dtype="float16"))
    best["choice"]["algo"]["algo"]

Every answer is a plain dict of the response message (field names as in
proto/tunedb/v1/tunedb.proto, enums by name, 64-bit ints as ints). A failed
call raises tunedb.Error with the gRPC status code.

A Client holds one gRPC channel; it may be used from several threads.
"""
import os

import grpc

from tunedb.problem import as_problem
from tunedb.v1 import tunedb_pb2 as pb
from tunedb.v1 import tunedb_pb2_grpc as pb_grpc

DEFAULT_ADDRESS = "unix:/run/tunedb/tunedb.sock"


class Error(Exception):
    """A call the daemon (or the channel) failed: `code` is the
    grpc.StatusCode, `details` the daemon's message."""

    def __init__(self, code, details):
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


def to_dict(message):
    """A message as a dict: every field, except unset message fields and
    unset optional scalars; enums by name; maps as dicts."""
    out = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.label == field.LABEL_REPEATED:
            if field.message_type and field.message_type.GetOptions().map_entry:
                value_field = field.message_type.fields_by_name["value"]
                out[field.name] = {k: _single(value_field, v)
                                   for k, v in value.items()}
            else:
                out[field.name] = [_single(field, v) for v in value]
        elif field.has_presence and not message.HasField(field.name):
            continue
        else:
            out[field.name] = _single(field, value)
    return out


def _single(field, value):
    if field.type == field.TYPE_MESSAGE:
        return to_dict(value)
    if field.type == field.TYPE_ENUM:
        enum = field.enum_type.values_by_number.get(value)
        return enum.name if enum else value
    return value


def _read(path):
    with open(path, "rb") as f:
        return f.read()


class Client:
    """A connection to tunedbd.

    address: "unix:/path" or "host:port"; default $TUNEDB_ADDRESS, else
    unix:/run/tunedb/tunedb.sock. timeout: seconds per call (for query:
    per page). For a daemon on TCP with TLS: tls_ca (the CA of its
    certificate) and, where it requires client certificates, tls_cert and
    tls_key; tls_server_name when the certificate names another host. Their
    defaults are $TUNEDB_TLS_CA, $TUNEDB_TLS_CERT, $TUNEDB_TLS_KEY and
    $TUNEDB_TLS_SERVER_NAME, as for the tunedb CLI. A unix: address is
    always plain.
    """

    def __init__(self, address=None, *, timeout=30.0, tls_ca=None,
                 tls_cert=None, tls_key=None, tls_server_name=None):
        env = os.environ.get
        self.address = address or env("TUNEDB_ADDRESS") or DEFAULT_ADDRESS
        self.timeout = timeout
        tls_ca = tls_ca or env("TUNEDB_TLS_CA")
        tls_cert = tls_cert or env("TUNEDB_TLS_CERT")
        tls_key = tls_key or env("TUNEDB_TLS_KEY")
        tls_server_name = tls_server_name or env("TUNEDB_TLS_SERVER_NAME")
        self._devices = None
        if self.address.startswith("unix:") or not (tls_ca or tls_cert):
            self._channel = grpc.insecure_channel(self.address)
        else:
            if bool(tls_cert) != bool(tls_key):
                raise ValueError("tls_cert and tls_key go together")
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read(tls_ca) if tls_ca else None,
                private_key=_read(tls_key) if tls_key else None,
                certificate_chain=_read(tls_cert) if tls_cert else None)
            options = ([("grpc.ssl_target_name_override", tls_server_name)]
                       if tls_server_name else [])
            self._channel = grpc.secure_channel(self.address, credentials,
                                                options)
        self._stub = pb_grpc.TuneDbStub(self._channel)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, method, request):
        try:
            return method(request, timeout=self.timeout)
        except grpc.RpcError as e:
            raise Error(e.code(), e.details()) from None

    def devices(self):
        """The daemon's GPUs: a list of DeviceInfo dicts."""
        response = self._call(self._stub.Devices, pb.DevicesRequest())
        self._devices = list(response.devices)
        return [to_dict(d) for d in response.devices]

    def stats(self):
        """The daemon's counters (StatsResponse) as a dict."""
        return to_dict(self._call(self._stub.Stats, pb.StatsRequest()))

    def device_key(self, device=None):
        """A tunedb.v1.DeviceKey: None = the daemon's first GPU, an int = a
        CUDA ordinal, a str = a case-insensitive part of the GPU model, a
        dict of DeviceKey fields, or a DeviceKey."""
        if isinstance(device, pb.DeviceKey):
            return device
        if isinstance(device, dict):
            return pb.DeviceKey(**device)
        if self._devices is None:
            self.devices()
        if not self._devices:
            raise Error(grpc.StatusCode.FAILED_PRECONDITION,
                        "the daemon has no GPU")
        if device is None:
            return self._devices[0].key
        for info in self._devices:
            if (isinstance(device, int) and info.ordinal == device) or (
                    isinstance(device, str)
                    and device.lower() in info.key.gpu_model.lower()):
                return info.key
        raise Error(grpc.StatusCode.NOT_FOUND,
                    f"no GPU of the daemon matches {device!r}")

    @staticmethod
    def _constraints(max_workspace_bytes, deterministic_only, graph):
        c = pb.Constraints(deterministic_only=bool(deterministic_only),
                           launch_mode=(pb.LAUNCH_MODE_GRAPH if graph
                                        else pb.LAUNCH_MODE_DIRECT))
        if max_workspace_bytes is not None:
            c.max_workspace_bytes = max_workspace_bytes
        return c

    def lookup(self, problem, *, device=None, max_workspace_bytes=None,
               deterministic_only=False, graph=False):
        """The stored answer for `problem` (a ConvProblem or a dict of
        problem()/conv() arguments) as a LookupResponse dict, or None when
        nothing is stored. Never searches."""
        request = pb.LookupRequest(
            problem=as_problem(problem), device=self.device_key(device),
            constraints=self._constraints(max_workspace_bytes,
                                          deterministic_only, graph))
        try:
            return to_dict(self._stub.Lookup(request, timeout=self.timeout))
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise Error(e.code(), e.details()) from None

    def tune(self, problem, *, device=None, force=False,
             max_workspace_bytes=None, deterministic_only=False, graph=False):
        """The answer for `problem`, searching on the daemon's GPU if
        nothing is stored (or `force`): a TuneResponse dict whose
        "searched" says whether this call ran the search."""
        request = pb.TuneRequest(
            problem=as_problem(problem), force=bool(force),
            constraints=self._constraints(max_workspace_bytes,
                                          deterministic_only, graph))
        if device is not None:
            request.device.CopyFrom(self.device_key(device))
        return to_dict(self._call(self._stub.Tune, request))

    def query(self, *, limit=None, since_us=0, until_us=0, page_size=1000,
              **fields):
        """Yields the stored records (Record dicts) in id order, fetched a
        page at a time. Keyword arguments filter by key field, with the
        names of the canonical key text: gpu="NVIDIA H200", op="fwd",
        in_type="f16", layout="nhwc", n=64, hash="...". limit stops after
        that many records."""
        filt = pb.Filter(fields={k: str(v) for k, v in fields.items()},
                         since_us=since_us, until_us=until_us)
        after_id, sent = 0, 0
        while limit is None or sent < limit:
            size = page_size if limit is None else min(page_size,
                                                       limit - sent)
            request = pb.QueryRequest(filter=filt, page_size=size,
                                      after_id=after_id)
            count = 0
            try:
                for record in self._stub.Query(request, timeout=self.timeout):
                    count += 1
                    after_id = record.id
                    sent += 1
                    yield to_dict(record)
            except grpc.RpcError as e:
                raise Error(e.code(), e.details()) from None
            if count < size:
                return
