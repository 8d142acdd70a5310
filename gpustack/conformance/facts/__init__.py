"""The facts of NVIDIA's rendering, one data module per operand (the driver module holds the
driver manager too, which runs in the driver pod; the device plugin module holds GPU feature
discovery, which ships in its image). :mod:`gpustack.conformance.tables` joins them in this
order."""
