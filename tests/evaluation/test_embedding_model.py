"""The grader's embedding model: the built ONNX graph computes BERT, int8 stays close to fp32, the
adapter refuses files that are missing or altered, and the embeddings mean what they should."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from evaluation.evaluators import minilm
from evaluation.evaluators.minilm import Embedder, ProseGraderUnavailable, embedder, model_files_verified

pytestmark = pytest.mark.nodb

REPO = Path(__file__).resolve().parents[2]
SENTENCES = [
    "We sharded the user table by account id so that no single node held more than a tenth of the rows.",
    "I told my manager that the deadline could not be met without cutting the reporting feature.",
    "Short one.",
    "Caching the hot keys in Redis took the read latency from 80 ms down to 5 ms at the 99th percentile.",
]


# The tests that build the model run in one test process (`--dist loadgroup`): one build, not one
# per process (a build is 6 s of CPU).
BUILDS = pytest.mark.xdist_group("embedding-model-build")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("models")
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_embedding_model.py"), "--out", str(out), "--fp32"],
        check=True,
        capture_output=True,
    )
    return out


def _source() -> Path:
    return minilm.weights_dir()


def _tokens(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    tokenizer = Tokenizer.from_file(str(_source() / "tokenizer.json"))
    tokenizer.enable_truncation(128)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    encodings = tokenizer.encode_batch(texts)
    return (
        np.array([e.ids for e in encodings], dtype=np.int64),
        np.array([e.attention_mask for e in encodings], dtype=np.int64),
    )


def _numpy_bert(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """An independent forward pass of BERT (the oracle), written from the paper's equations."""
    w = load_file(str(_source() / "model.safetensors"))

    def norm(x: np.ndarray, prefix: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[f"{prefix}.weight"] + w[f"{prefix}.bias"]

    def dense(x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ w[f"{prefix}.weight"].T + w[f"{prefix}.bias"]

    batch, seq = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:seq]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * -1e9
    erf = np.vectorize(math.erf)
    for layer in range(6):
        p = f"encoder.layer.{layer}"

        def heads(name: str, p: str = p, x: np.ndarray = x) -> np.ndarray:
            return dense(x, f"{p}.attention.self.{name}").reshape(batch, seq, 12, 32).transpose(0, 2, 1, 3)

        scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) / math.sqrt(32) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ heads("value")).transpose(0, 2, 1, 3).reshape(batch, seq, 384)
        x = norm(dense(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        inner = dense(x, f"{p}.intermediate.dense")
        x = norm(dense(0.5 * inner * (1 + erf(inner / math.sqrt(2))), f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
    return x


def _pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    weights = mask[:, :, None].astype(np.float64)
    pooled = (hidden * weights).sum(1) / weights.sum(1)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def _onnx_hidden(path: Path, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})[0]


def _row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@BUILDS
def test_fp32_graph_computes_what_an_independent_numpy_bert_computes(built: Path) -> None:
    ids, mask = _tokens(SENTENCES)
    expected = _pooled(_numpy_bert(ids, mask), mask)
    actual = _pooled(_onnx_hidden(built / "all-minilm-l6-v2.fp32.onnx", ids, mask), mask)
    assert _row_cosines(expected, actual).min() > 0.999


@BUILDS
def test_int8_graph_stays_close_to_fp32(built: Path) -> None:
    ids, mask = _tokens(SENTENCES)
    fp32 = _pooled(_onnx_hidden(built / "all-minilm-l6-v2.fp32.onnx", ids, mask), mask)
    int8 = _pooled(_onnx_hidden(built / "all-minilm-l6-v2.int8.onnx", ids, mask), mask)
    assert _row_cosines(fp32, int8).min() > 0.95


@BUILDS
def test_int8_file_is_small_and_the_manifest_names_its_hashes(built: Path) -> None:
    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["source_sha256"] == "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    assert 15e6 < (built / manifest["onnx"]).stat().st_size < 30e6
    assert model_files_verified(models_dir=built).onnx == built / "all-minilm-l6-v2.int8.onnx"


def test_a_paraphrase_is_closer_than_an_unrelated_sentence() -> None:
    vectors = embedder().embed(
        [
            "We split the database across many machines by customer id.",
            "The customer table was partitioned over several servers using the customer key.",
            "My grandmother grows tomatoes and basil in her garden every summer.",
        ]
    )
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    paraphrase, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert paraphrase > unrelated + 0.3


def test_the_adapter_embeds_like_the_graph_it_loads() -> None:
    files = model_files_verified()
    # The graph run on each sentence alone, as the adapter runs it.
    direct = np.concatenate([_pooled(_onnx_hidden(files.onnx, *_tokens([s])), _tokens([s])[1]) for s in SENTENCES])
    assert _row_cosines(Embedder(files).embed(SENTENCES), direct).min() > 0.9999


def test_a_sentences_vector_does_not_depend_on_what_it_is_embedded_with() -> None:
    """The int8 graph quantises its activations over each run: in a padded batch, a sentence's
    vector moved with its neighbours' lengths (a cosine of 0.98 to itself alone)."""
    model = Embedder(model_files_verified())
    alone = np.stack([model.embed([s])[0] for s in SENTENCES])
    together = model.embed(SENTENCES)
    reversed_ = model.embed(SENTENCES[::-1])[::-1]
    assert np.array_equal(alone, together)
    assert np.array_equal(alone, reversed_)


@BUILDS
def test_an_altered_onnx_file_is_refused_with_the_reason(built: Path, tmp_path: Path) -> None:
    for name in ("manifest.json", "all-minilm-l6-v2.int8.onnx"):
        shutil.copy(built / name, tmp_path / name)
    with (tmp_path / "all-minilm-l6-v2.int8.onnx").open("r+b") as handle:
        handle.seek(1000)
        handle.write(b"\x00\x01\x02\x03")
    with pytest.raises(ProseGraderUnavailable, match="prose grader unavailable: .*does not match the SHA-256"):
        model_files_verified(models_dir=tmp_path)


def test_a_missing_model_is_refused_with_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(ProseGraderUnavailable, match="prose grader unavailable: no valid .*build_embedding_model"):
        model_files_verified(models_dir=tmp_path)


@BUILDS
def test_a_model_built_from_other_weights_is_refused(built: Path, tmp_path: Path) -> None:
    shutil.copy(built / "all-minilm-l6-v2.int8.onnx", tmp_path / "all-minilm-l6-v2.int8.onnx")
    manifest = json.loads((built / "manifest.json").read_text()) | {"source_sha256": "0" * 64}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ProseGraderUnavailable, match="built from other weights"):
        model_files_verified(models_dir=tmp_path)
