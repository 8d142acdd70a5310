"""Kubelet device plugin API v1beta1: ``api.proto`` and the code grpcio-tools generates from it.

The generated ``api_pb2*.py`` files are committed so neither the image nor users need protoc;
``tests/plugin/test_proto.py`` regenerates them and fails when they drift from the proto.
"""
