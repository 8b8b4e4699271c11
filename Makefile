# Two commands do all set-up on a fresh machine:
#   make demo   index the bundled example memory with a local model and search it
#   make test   install everything the tests need (system packages too), run
#               ruff (lint, import order, formatting) and mypy, then the tests
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# llama-cpp-python compiles from source; a portable build keeps quantised
# models from crashing on CPUs with AMX (see README).
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

demo: $(BIN)/python
	@$(BIN)/python -c "import llama_cpp" 2>/dev/null || echo "make demo: installing memext[local]; pip compiles llama-cpp-python from source first, which prints nothing for about 5-15 minutes (2-4 CPU cores); later runs reuse the build"
	$(BIN)/python -m pip install -q -e ".[local]"
	@echo "make demo: installed; running scripts/demo.py (the first run also builds the minilm model, about 1-2 minutes)"
	$(BIN)/python scripts/demo.py

test: $(BIN)/python
	bash scripts/install-system-deps.sh
	$(BIN)/python -m pip install -q -e ".[dev,local,onnx]"
	$(BIN)/python -m ruff check .
	$(BIN)/python -m ruff format --check .
	PYTHON=$(BIN)/python bash scripts/typecheck.sh
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[local]"
	$(BIN)/python bench/engine_bench.py

clean:
	rm -rf $(VENV) build test-artifacts
