"""The tunedb.v1 wire messages and stubs (tunedb_pb2, tunedb_pb2_grpc),
generated from proto/tunedb/v1/tunedb.proto when the package is built."""
