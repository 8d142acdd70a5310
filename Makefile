# Entry points used by the README's Quickstart and by .ci/run.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint image bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

## Synthesize dist/ from profiles/ (or the packaged default profile when there is none).
run: $(STAMP)
	$(VENV)/bin/gpustack synth

## ruff, mypy and the whole pytest suite.
lint: $(STAMP)
	$(VENV)/bin/ruff check gpustack tests bench
	$(VENV)/bin/ruff format --check gpustack tests bench
	$(VENV)/bin/mypy

test: lint
	$(VENV)/bin/pytest

## Device plugin image localhost/gpustack-device-plugin:<version> (buildah, as root; the Debian
## base is built locally with mmdebstrap and cached in .cache/plugin-image/).
image: $(STAMP)
	PYTHON=$(PY) scripts/build-plugin-image.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
