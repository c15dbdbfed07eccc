"""A folded eval-mode network as an ONNX model (opset ONNX_OPSET, batch dimension dynamic), and its
static int8 QDQ quantization by ONNX Runtime's quantizer: the models the ONNX Runtime and OpenVINO
backends (network.backends) run.
"""
from __future__ import annotations

import io
import logging
import os
import tempfile
import warnings

import numpy as np
import torch

ONNX_OPSET = 17


def export_onnx(net) -> bytes:
    """The folded eval-mode network as ONNX bytes: input "planes" float32 [B, P, N, N], outputs
    "logits" [B, M] and "value" [B], batch dimension dynamic."""
    net = net.to("cpu").to(memory_format=torch.contiguous_format).eval()
    n = net.config.board_size
    example = torch.zeros(2, net.config.planes, n, n)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the TorchScript exporter is deprecated, still fine
        # the TorchScript exporter writes to a file object too; torch's annotation names paths only
        torch.onnx.export(net, (example,), buffer, input_names=["planes"],  # type: ignore[arg-type]
                          output_names=["logits", "value"], opset_version=ONNX_OPSET, dynamo=False,
                          dynamic_axes={"planes": {0: "batch"}, "logits": {0: "batch"},
                                        "value": {0: "batch"}})
    return buffer.getvalue()


def quantize_onnx(model_bytes: bytes, calibration: np.ndarray) -> bytes:
    """Static int8 QDQ quantization (ONNX Runtime; per-channel int8 weights, uint8 activations)
    calibrated on `calibration`, uint8 planes [C, P, N, N]."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    chunks = [calibration[i:i + 32].astype(np.float32) for i in range(0, len(calibration), 32)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self._it = iter(chunks)

        def get_next(self):
            chunk = next(self._it, None)
            return None if chunk is None else {"planes": chunk}

    quiet = logging.getLogger()
    level = quiet.level
    with tempfile.TemporaryDirectory(prefix="fastgo-int8-") as folder:
        source = os.path.join(folder, "fp32.onnx")
        target = os.path.join(folder, "int8.onnx")
        with open(source, "wb") as handle:
            handle.write(model_bytes)
        quiet.setLevel(max(level, logging.ERROR))    # its advice on pre-processing is noise here
        try:
            quantize_static(source, target, Reader(), quant_format=QuantFormat.QDQ,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            per_channel=True)
        finally:
            quiet.setLevel(level)
        with open(target, "rb") as quantized:
            return quantized.read()

