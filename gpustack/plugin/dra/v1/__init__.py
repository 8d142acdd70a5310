"""Kubelet DRA plugin API v1: ``api.proto`` and the code grpcio-tools generates from it.

The generated ``api_pb2*.py`` files are committed so neither the image nor users need protoc;
``tests/plugin/dra/test_dra_proto.py`` regenerates them and fails when they drift from the proto.
"""
