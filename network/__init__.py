"""The policy/value network: its model, its checkpoints, the CPU and GPU backends that run it,
and the evaluators a search or a match asks. Every module here is usable without the server.

Modules, in dependency order (batch_evaluator is the one workers import; it imports torch
lazily):
  batch_evaluator  the evaluator interface (BatchEvaluator); uniform, random, in-process
  model            PolicyValueNet (bBLOCKScCHANNELS residual tower), build_model (torch)
  checkpoint_file  a checkpoint's bytes and archive, checked before torch reads them
  checkpoint       atomic save, verified weights_only load, content hash
  cpu_isa          the CPU's flags, its instruction-set level and the limit set below it
  backend_support  which CPU backends this install and CPU can run; the runtimes' versions
  onnx_export      a network as an ONNX model, and its int8 QDQ quantization
  backends         CPU inference backends behind one interface: torch, ONNX Runtime, OpenVINO
  backend_cache    the machine's measured backend choice, keyed by CPU, versions and network
  backend_choice   backend = "auto": time the available backends, check them against fp32, pick
  runner           ModelRunner: one network on one device, plus canary positions
  heads_evaluator  every head (ownership, score, lead) in this process, for analysis
  loading          load_network: a checkpoint becomes a Network to play with, one way for all
"""
