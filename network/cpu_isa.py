"""What this CPU offers the inference runtimes: its feature flags (Linux /proc/cpuinfo), the
oneDNN instruction-set level they allow, the limit ONEDNN_MAX_CPU_ISA sets below it, native bf16
and VNNI under that limit, and the CPU's name. Reads the CPU only; imports no runtime.
"""
from __future__ import annotations

import functools
import os
import platform


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset:
    """The CPU's feature flags (Linux /proc/cpuinfo); empty where they cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


# oneDNN's instruction-set levels as ONEDNN_MAX_CPU_ISA names them, lowest first (oneDNN's
# dispatcher control; AVX512_CORE_FP16 and AVX10_1_512 are one level, as are the AMX names)
ISA_LEVELS = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI",
              "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX", "AVX512_CORE_AMX_FP16")
_ISA_ALIASES = {"AVX10_1_512": "AVX512_CORE_FP16", "AVX10_1_512_AMX": "AVX512_CORE_AMX",
                "AVX10_1_512_AMX_FP16": "AVX512_CORE_AMX_FP16"}
# what each level needs of the CPU's flags (/proc/cpuinfo names), highest first
_ISA_FLAGS = (("AVX512_CORE_AMX", {"amx_int8", "amx_bf16"}), ("AVX512_CORE_BF16", {"avx512_bf16"}),
              ("AVX512_CORE_VNNI", {"avx512_vnni"}), ("AVX512_CORE", {"avx512bw", "avx512vl", "avx512dq"}),
              ("AVX2_VNNI", {"avx_vnni", "avx2"}), ("AVX2", {"avx2", "fma"}), ("AVX", {"avx"}),
              ("SSE41", {"sse4_1"}))


def native_isa() -> str | None:
    """The highest oneDNN level this CPU's flags allow (None where the flags cannot be read)."""
    flags = cpu_flags()
    return next((level for level, needs in _ISA_FLAGS if needs <= flags), None)


def isa_limit() -> str | None:
    """The level ONEDNN_MAX_CPU_ISA holds torch's oneDNN and OpenVINO's CPU plugin to, where it
    is set below this CPU's own (e.g. AVX2 on an AVX-512 CPU, to measure what an AVX2-only CPU
    gets); None where it is unset, ALL or DEFAULT, a name oneDNN does not know, or not below
    the CPU's level. Both runtimes honour it (`fastgo bench backends` before and after, on an
    AVX-512 Zen 5: torch-fp32 0.62x, openvino-f32 0.57x, openvino-int8 0.42x); ONNX Runtime's
    kernels (MLAS) choose from the CPU alone and ignore it (onnx-int8 and onnx-fp32 unchanged)."""
    value = os.environ.get("ONEDNN_MAX_CPU_ISA", "").strip().upper()
    value = _ISA_ALIASES.get(value, value)
    native = native_isa()
    if value not in ISA_LEVELS or native is None:
        return None
    return value if ISA_LEVELS.index(value) < ISA_LEVELS.index(native) else None


def isa_allows(level: str) -> bool:
    """Whether the runtimes held by isa_limit() may use instructions of `level`."""
    limit = isa_limit()
    return limit is None or ISA_LEVELS.index(limit) >= ISA_LEVELS.index(level)


def cpu_has_bf16() -> bool:
    flags = cpu_flags()
    return bool({"avx512_bf16", "amx_bf16"} & flags) and isa_allows("AVX512_CORE_BF16")


def cpu_has_vnni() -> bool:
    flags = cpu_flags()
    return (bool({"avx512_vnni", "amx_int8"} & flags) and isa_allows("AVX512_CORE_VNNI")) or \
        ("avx_vnni" in flags and isa_allows("AVX2_VNNI"))


def isa_note() -> str:
    """One line on the instruction-set limit in force, or "" where there is none."""
    limit = isa_limit()
    if limit is None:
        return ""
    return (f"ONEDNN_MAX_CPU_ISA={limit} (this CPU: {native_isa()}): torch and OpenVINO are held "
            f"to it; ONNX Runtime ignores it, so its backends are left out")


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()[:120]
    except OSError:
        pass

    return platform.processor() or platform.machine()

