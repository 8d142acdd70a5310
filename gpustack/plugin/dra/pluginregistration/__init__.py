"""Kubelet plugin registration API v1: ``api.proto`` and the code grpcio-tools generates from it.

Committed like :mod:`gpustack.plugin.dra.v1` and checked by the same test.
"""
