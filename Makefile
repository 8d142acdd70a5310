# Entry points used by the README's Quickstart and by .ci/run.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run bytecode test e2e lint image image-push cmp-image cmp-image-push bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	$(MAKE) --no-print-directory bytecode
	touch $(STAMP)

## PyTorch, the CPU build, for what lint and the tests need beyond the dev extra: mypy checks the
## acceptance harness (gpustack/accept/harness/ imports torch) and the tests run it and the example
## check with real torch. Pinned: on these machines pip takes the local CPU wheel of 2.13.0;
## elsewhere give pip PyTorch's CPU index (make test TORCH_PIP_ARGS='--index-url <CPU index>'),
## or PyPI's Linux build brings CUDA's libraries (several GB).
TORCH ?= torch==2.13.0
TORCH_PIP_ARGS ?=
TORCH_STAMP := $(VENV)/.torch

$(TORCH_STAMP): $(STAMP)
	$(PY) -m pip install -q $(TORCH_PIP_ARGS) '$(TORCH)'
	touch $(TORCH_STAMP)

## Synthesize dist/ from profiles/.
run: $(STAMP) bytecode
	$(VENV)/bin/gpustack synth

## Compile gpustack's modules, as installing a wheel does: an editable install otherwise
## compiles them on every start where bytecode is not written (PYTHONDONTWRITEBYTECODE=1),
## about 0.1 s of each command. Only changed modules are compiled again.
bytecode:
	$(PY) -m compileall -q gpustack

## ruff and mypy (lint), then the whole pytest suite (test): each sets up .venv with torch first.
lint: $(STAMP) $(TORCH_STAMP)
	$(VENV)/bin/ruff check gpustack tests bench
	$(VENV)/bin/ruff format --check gpustack tests bench
	$(VENV)/bin/mypy

test: lint
	$(VENV)/bin/pytest

## Only the end-to-end tier: every cluster folder of dist/ on a real control plane (etcd,
## kube-apiserver, kube-controller-manager, kube-scheduler from $$KUBEBUILDER_ASSETS; it skips,
## with its reason, without them). `make test` runs it too.
e2e: $(STAMP)
	$(VENV)/bin/pytest tests/e2e

## Device plugin image localhost/gpustack-device-plugin:<version> (buildah, as root; the Debian
## base is built locally with mmdebstrap and cached in .cache/plugin-image/).
image: $(STAMP)
	PYTHON=$(PY) ARCH=$(ARCH) scripts/build-plugin-image.sh

## Build the image and push it with buildah: make image-push IMAGE=<registry>/<name>:<tag>
## (IMAGE=oci-archive:<file> or dir:<path> push offline; SOURCE=<local image> skips the build).
## ARCH=arm64 builds for arm64 nodes (GH200/GB200; needs qemu-user-static and binfmt_misc).
IMAGE ?=
ARCH ?= amd64
image-push:
	PYTHON=$(PY) ARCH=$(ARCH) scripts/push-image.sh "$(IMAGE)"

## Argo CD config management plugin sidecar localhost/gpustack-argocd-cmp:<version> (the same
## Debian base and caches as `image`); see cmp-image/ and the README's Argo CD section.
cmp-image: $(STAMP)
	PYTHON=$(PY) ARCH=$(ARCH) scripts/build-cmp-image.sh

## Build the sidecar and push it: make cmp-image-push IMAGE=<registry>/gpustack-argocd-cmp:<version>
cmp-image-push:
	PYTHON=$(PY) ARCH=$(ARCH) BUILD=scripts/build-cmp-image.sh scripts/push-image.sh "$(IMAGE)"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
