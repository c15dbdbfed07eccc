"""The policy/value network and everything that serves it: checkpoints, inference backends,
the batching ZeroMQ server, its client, the wire protocol and CURVE keys.

Modules, in dependency order (workers import only protocol, batch_evaluator, client and keys; those
never import torch):
  protocol        the wire: msgpack headers + raw buffers, versioned, size-checked (numpy, msgpack)
  batch_evaluator the evaluator interface; uniform, random and in-process evaluators (torch lazily)
  client          InferenceClient: a DEALER, batches in flight, Lazy Pirate retries (zmq)
  keys            CURVE key files, allow lists and the ZAP authenticator (ironhouse) (zmq)
  model           PolicyValueNet (bBLOCKScCHANNELS residual tower), build_model (torch)
  checkpoint      atomic save, verified weights_only load, content hash
  backends        CPU inference backends behind one interface: torch, ONNX Runtime, OpenVINO
  backend_choice  backend = "auto": time the available backends, check them against fp32, pick
  runner          ModelRunner: one network on one device, plus canary positions
  slots           model slots and the hot-reload thread
  pipeline        the optional forward thread (server.overlap)
  binding         binding the ROUTER; an endpoint a live server holds is refused
  uploads         checkpoints sent in chunks before a reload names them
  server          the ROUTER loop: batching, reloads, stats; start_server
"""
